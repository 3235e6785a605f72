/**
 * What the copy sessions of this folder changed, kept fresh for the Source Control view and the panel:
 * one listing per copy session (after each tool call, when a session opens or closes, when the window
 * gains focus, and at most every half minute), each change marked when the folder's own file changed
 * since the copy (a conflict) or when applying it needs the user's own confirmation.
 */
import { copyFileLimit } from '../../core/files/sandboxFileBytes';
import * as vscode from 'vscode';
import type { Sandbox, SandboxEngine, SessionInfo } from '../../core/engine/engine';
import { holdReason, hostState } from '../../core/files/copyApply';
import { compareToBaseline, type CopyChange } from '../../core/files/copyChanges';
import { listSandboxFiles } from '../../core/files/copyListing';
import { loadBaseline, saveBaseline, type CopyBaseline } from '../../core/files/folderCopy';
import type { UndoableApply } from './applyInWorkspace';
import { errorMessage } from '../../core/errors';
import { isPlainRelativePath } from '../../core/files/hostFiles/hostPath';
import { sandboxIdOf } from '../../core/sessions/sessions';

export interface ReviewChange extends CopyChange {
  /** The folder's file changed since the copy: applying would overwrite the user's own edit. */
  conflict: boolean;
  /** Why applying needs the user's own confirmation (protected path, a new executable bit, a link). */
  held?: string;
  /** The sandbox file's sha256 as listed (none for a deletion). */
  sandboxSha?: string;
}

export interface SessionChanges {
  /** The container id. */
  id: string;
  sandboxId: string;
  name: string;
  changes: ReviewChange[];
  /** Why the changes could not be listed. */
  problem?: string;
}

export interface ReviewDeps {
  engine(): SandboxEngine;
  /** This folder's sessions, from the engine. */
  list(): Promise<SessionInfo[]>;
  stateDir: string;
  log: vscode.LogOutputChannel;
}

const POLL_MS = 30_000;

export class CopyReviewModel implements vscode.Disposable {
  private current: SessionChanges[] = [];
  private readonly sandboxes = new Map<string, Sandbox>();
  private readonly changed = new vscode.EventEmitter<SessionChanges[]>();
  readonly onDidChange = this.changed.event;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly poll: NodeJS.Timeout;
  /** Per session, the changes applied by workspace edits, which VS Code may undo. */
  private readonly undoable = new Map<string, Map<string, UndoableApply>>();
  /** Per session and path, the sha256 of the sandbox's bytes the diff or merge editor last showed. */
  private readonly shown = new Map<string, Map<string, string>>();

  constructor(private readonly deps: ReviewDeps) {
    this.poll = setInterval(() => {
      if (this.current.length) this.schedule();
    }, POLL_MS);
  }

  sessions(): readonly SessionChanges[] {
    return this.current;
  }

  /** The changes of one session (by container id or sandbox_id), as last listed. */
  session(idOrSandboxId: string): SessionChanges | undefined {
    return this.current.find((session) => session.id === idOrSandboxId || session.sandboxId === idOrSandboxId);
  }

  /** A refresh soon: bursts (a tool call, then the session list changing) make one. */
  schedule(delayMs = 300): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), delayMs);
  }

  /** Lists every copy session's changes now; one refresh at a time, a request during one runs another after it. */
  async refresh(): Promise<readonly SessionChanges[]> {
    clearTimeout(this.timer);
    if (this.running) {
      this.again = true;
      await this.running;
      return this.current;
    }
    this.running = (async () => {
      do {
        this.again = false;
        this.current = await this.look();
        this.changed.fire(this.current);
      } while (this.again);
    })().finally(() => (this.running = undefined));
    await this.running;
    return this.current;
  }

  /** The sandbox of a copy session (attached once) and its baseline, read afresh. */
  async open(id: string): Promise<{ sandbox: Sandbox; baseline: CopyBaseline }> {
    const sandbox = await this.sandbox(id);
    const baseline = await loadBaseline(this.deps.stateDir, sandbox.info.id);
    if (!baseline)
      throw new Error(
        vscode.l10n.t(
          'The record of what was copied into session {0} is missing: close the session and open it again.',
          sandboxIdOf(sandbox.info),
        ),
      );
    return { sandbox, baseline };
  }

  /** Notes the bytes of a sandbox file an editor showed: applying it later applies exactly these, or nothing. */
  showed(id: string, path: string, sha256: string): void {
    const paths = this.shown.get(id) ?? new Map<string, string>();
    paths.set(path, sha256);
    this.shown.set(id, paths);
  }

  /**
   * What the user reviewed of these changes: the bytes an editor showed, else the listing the view
   * showed; a change listed since, or changed since, is then held back by apply.
   */
  reviewed(id: string, changes: readonly ReviewChange[]): Map<string, string | null> {
    const shown = this.shown.get(id);
    return new Map(
      changes.map((change) => [
        change.path,
        change.change === 'deleted' ? null : (shown?.get(change.path) ?? change.sandboxSha ?? ''),
      ]),
    );
  }

  /** Remembers changes applied by a workspace edit: if the folder's file is put back (Edit › Undo), the change shows again. */
  appliedUndoably(id: string, applied: readonly UndoableApply[]): void {
    const paths = this.undoable.get(id) ?? new Map<string, UndoableApply>();
    for (const entry of applied) paths.set(entry.path, entry);
    if (paths.size) this.undoable.set(id, paths);
  }

  dispose(): void {
    clearTimeout(this.timer);
    clearInterval(this.poll);
    this.changed.dispose();
  }

  private async sandbox(id: string): Promise<Sandbox> {
    const known = this.sandboxes.get(id);
    if (known) return known;
    const sandbox = await this.deps.engine().attach(id);
    this.sandboxes.set(id, sandbox);
    return sandbox;
  }

  private async look(): Promise<SessionChanges[]> {
    let sessions: SessionInfo[];
    try {
      sessions = (await this.deps.list()).filter(
        (session) => session.workspaceAccess === 'copy' && session.state !== 'stopped',
      );
    } catch {
      return this.current;
    }
    for (const id of this.sandboxes.keys())
      if (!sessions.some((session) => session.id === id)) this.sandboxes.delete(id);
    const out: SessionChanges[] = [];
    for (const info of sessions) {
      const entry: SessionChanges = {
        id: info.id,
        sandboxId: sandboxIdOf(info),
        name: info.name ?? info.id.slice(0, 12),
        changes: [],
      };
      try {
        entry.changes = await this.changesOf(info.id);
      } catch (error) {
        entry.problem = errorMessage(error).split('\n')[0];
        this.deps.log.warn(`Sandbox changes of ${entry.sandboxId}: ${errorMessage(error)}`);
      }
      out.push(entry);
    }
    return out;
  }

  /** An applied change whose folder file is back as it was (VS Code undid the edit) is pending again. */
  private async takeBackUndone(id: string, baseline: CopyBaseline, maxBytes: number): Promise<void> {
    const paths = this.undoable.get(id);
    if (!paths) return;
    let changed = false;
    for (const [path, entry] of paths) {
      const host = await hostState(baseline.folder, path, maxBytes);
      if (host !== entry.before?.sha256) continue;
      if (entry.before) baseline.files[path] = entry.before;
      else delete baseline.files[path];
      paths.delete(path);
      changed = true;
    }
    if (!paths.size) this.undoable.delete(id);
    if (changed) await saveBaseline(this.deps.stateDir, id, baseline);
  }

  private async changesOf(id: string): Promise<ReviewChange[]> {
    const { sandbox, baseline } = await this.open(id);
    const maxBytes = copyFileLimit(sandbox);
    await this.takeBackUndone(id, baseline, maxBytes);
    const current = await listSandboxFiles(sandbox, undefined, baseline);
    const changes: ReviewChange[] = [];
    for (const change of compareToBaseline(baseline, current)) {
      // The listing comes from inside the sandbox: a forged name that leaves the folder is not shown, only logged.
      if (!isPlainRelativePath(change.path)) {
        this.deps.log.warn(
          `Sandbox changes of ${sandboxIdOf(sandbox.info)}: ignored the name ${JSON.stringify(change.path)}.`,
        );
        continue;
      }
      const before = baseline.files[change.path];
      const link = current.get(change.path)?.kind === 'symlink' || before?.kind === 'symlink';
      const host = await hostState(baseline.folder, change.path, maxBytes);
      changes.push({
        ...change,
        ...(change.change !== 'deleted' ? { sandboxSha: current.get(change.path)?.sha256 } : {}),
        conflict: host !== before?.sha256,
        ...(link ? { held: 'a link' } : holdReason(change, baseline) ? { held: holdReason(change, baseline) } : {}),
      });
    }
    return changes;
  }
}
