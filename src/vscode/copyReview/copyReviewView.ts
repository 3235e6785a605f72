/**
 * "Sandbox changes" in VS Code's Source Control view: one group per copy session, a row per added,
 * modified or deleted file. A click opens the diff (the folder's file on the left, the sandbox's on
 * the right), a conflict opens the merge; inline actions apply or discard, the group's apply or
 * discard all of it.
 */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { formatSize } from '../../core/spec/units';
import type { CopyReviewModel, ReviewChange, SessionChanges } from './copyReviewModel';
import { copyUri, type SandboxFileSystem } from './sandboxFileSystem';

/** A row of the view: VS Code hands it back to the commands. */
export interface ChangeRow extends vscode.SourceControlResourceState {
  readonly sessionId: string;
  readonly sandboxId: string;
  readonly change: ReviewChange;
}

export interface SessionGroup extends vscode.SourceControlResourceGroup {
  sessionId?: string;
}

const WORDS: Record<ReviewChange['change'], string> = {
  added: 'Added in the sandbox',
  modified: 'Modified in the sandbox',
  deleted: 'Deleted in the sandbox',
};

function sizeText(change: ReviewChange): string {
  if (change.change === 'added') return formatSize(change.newSize ?? 0);
  if (change.change === 'deleted') return formatSize(change.oldSize ?? 0);
  return `${formatSize(change.oldSize ?? 0)} → ${formatSize(change.newSize ?? 0)}`;
}

export class CopyReviewView implements vscode.Disposable {
  private readonly control: vscode.SourceControl;
  private readonly groups = new Map<string, SessionGroup>();
  private readonly listening: vscode.Disposable;

  constructor(
    private readonly model: CopyReviewModel,
    private readonly files: SandboxFileSystem,
    private readonly folder: () => string | undefined,
  ) {
    const root = folder();
    this.control = vscode.scm.createSourceControl(
      'agentSandbox.copies',
      vscode.l10n.t('Sandbox changes'),
      root ? vscode.Uri.file(root) : undefined,
    );
    this.control.inputBox.visible = false;
    this.control.quickDiffProvider = undefined;
    this.listening = model.onDidChange((sessions) => this.show(sessions));
  }

  /** The folder's file that a path names. */
  hostUri(path: string): vscode.Uri | undefined {
    const folder = this.folder();
    return folder ? vscode.Uri.joinPath(vscode.Uri.file(folder), ...path.split('/')) : undefined;
  }

  dispose(): void {
    this.listening.dispose();
    for (const group of this.groups.values()) group.dispose();
    this.control.dispose();
  }

  private show(sessions: readonly SessionChanges[]): void {
    for (const [id, group] of this.groups) {
      if (sessions.some((session) => session.id === id)) continue;
      group.dispose();
      this.groups.delete(id);
    }
    const touched: vscode.Uri[] = [];
    for (const session of sessions) {
      let group = this.groups.get(session.id);
      if (!group) {
        group = this.control.createResourceGroup(`session:${session.id}`, '') as SessionGroup;
        group.sessionId = session.id;
        group.hideWhenEmpty = false;
        this.groups.set(session.id, group);
      }
      group.label = session.problem
        ? vscode.l10n.t('Session {0}: {1}', session.name, session.problem)
        : vscode.l10n.t('Session {0}', session.name);
      group.resourceStates = session.changes.map((change) => this.row(session, change));
      for (const change of session.changes) touched.push(copyUri(session.id, change.path));
    }
    this.control.count = sessions.reduce((sum, session) => sum + session.changes.length, 0);
    this.files.changedFiles(touched);
  }

  private row(session: SessionChanges, change: ReviewChange): ChangeRow {
    const notes = [
      vscode.l10n.t(WORDS[change.change]),
      sizeText(change),
      ...(change.conflict ? [vscode.l10n.t('conflict: the folder’s file changed since the copy')] : []),
      ...(change.held ? [vscode.l10n.t('needs your confirmation: {0}', change.held)] : []),
    ];
    const resourceUri = this.hostUri(change.path) ?? copyUri(session.id, change.path);
    return {
      sessionId: session.id,
      sandboxId: session.sandboxId,
      change,
      resourceUri,
      contextValue: change.conflict ? 'conflict' : change.held ? 'held' : 'change',
      command: {
        command: 'agentSandbox.copy.openChange',
        title: vscode.l10n.t('Open Changes'),
        arguments: [{ sessionId: session.id, path: change.path }],
      },
      decorations: {
        strikeThrough: change.change === 'deleted',
        tooltip: `${change.path}: ${notes.join(' · ')}`,
        iconPath: new vscode.ThemeIcon(
          change.conflict
            ? 'warning'
            : change.change === 'added'
              ? 'diff-added'
              : change.change === 'deleted'
                ? 'diff-removed'
                : 'diff-modified',
        ),
      },
    };
  }
}

/** The title of a change's diff editor. */
export function diffTitle(path: string, sessionName: string, conflict: boolean): string {
  return conflict
    ? vscode.l10n.t('{0} (folder ↔ sandbox {1}, conflict)', basename(path), sessionName)
    : vscode.l10n.t('{0} (folder ↔ sandbox {1})', basename(path), sessionName);
}
