/** Wires the copy review: the model, the read-only sandbox file system, the Source Control view and its commands. */
import * as vscode from 'vscode';
import type { SandboxEngine, SessionInfo } from '../../core/engine/engine';
import type { ActivityLog } from '../../core/sessions/activityLog';
import { registerCopyCommands } from './copyReviewCommands';
import { CopyReviewModel } from './copyReviewModel';
import { CopyReviewView } from './copyReviewView';
import { COPY_SCHEME, SandboxFileSystem } from './sandboxFileSystem';

export interface CopyReviewDeps {
  engine(): SandboxEngine;
  list(): Promise<SessionInfo[]>;
  onDidChangeSessions(listener: () => void): { dispose(): void };
  /** Fires when the engine answers (the first listing waits for it: activation makes no engine call). */
  onEngineConnected(listener: () => void): { dispose(): void };
  activity: ActivityLog;
  workspaceFolder(): string | undefined;
  stateDir: string;
  log: vscode.LogOutputChannel;
}

export function registerCopyReview(deps: CopyReviewDeps): { model: CopyReviewModel; disposables: vscode.Disposable[] } {
  const model = new CopyReviewModel(deps);
  const files = new SandboxFileSystem(model, deps.stateDir);
  const view = new CopyReviewView(model, files, deps.workspaceFolder);
  const sessions = deps.onDidChangeSessions(() => model.schedule());
  const calls = deps.activity.onEntry(() => model.schedule());
  const connected = deps.onEngineConnected(() => model.schedule());
  const disposables = [
    model,
    view,
    { dispose: () => sessions.dispose() },
    { dispose: () => calls.dispose() },
    { dispose: () => connected.dispose() },
    vscode.workspace.registerFileSystemProvider(COPY_SCHEME, files, { isReadonly: true, isCaseSensitive: true }),
    vscode.window.onDidChangeWindowState((state) => {
      if (state.focused) model.schedule();
    }),
    // A file saved in the folder may turn a change into a conflict, or a merge into a resolved one.
    vscode.workspace.onDidSaveTextDocument(() => {
      if (model.sessions().length) model.schedule();
    }),
    ...registerCopyCommands({ model, view, stateDir: deps.stateDir, list: deps.list, log: deps.log }),
  ];
  return { model, disposables };
}
