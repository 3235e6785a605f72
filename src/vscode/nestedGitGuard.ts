/**
 * While a read-write sandbox of this folder runs, a `.git` it creates below the top of the folder is
 * set aside at once: VS Code's git extension opens repositories it finds in subfolders and runs git
 * there, and a repository's config can make git run a command on this machine (core.fsmonitor,
 * hooks). The top-level `.git` is a read-only mount inside rw sandboxes already; nested ones cannot
 * be protected that way. The user is told, and can put it back with one click.
 */
import { lstat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import * as vscode from 'vscode';
import type { SessionInfo } from '../core/engine/engine';
import { errorMessage } from '../core/errors';
import { renameBeside } from '../core/files/hostFiles/setAside';

export interface NestedGitGuardDeps {
  workspaceFolder(): string | undefined;
  list(): Promise<SessionInfo[]>;
  onDidChangeSessions(listener: () => void): { dispose(): void };
  log: vscode.LogOutputChannel;
}

const HELD_SUFFIX = '.held-by-agent-sandbox';
const POLL_MS = 10_000;

export class NestedGitGuard implements vscode.Disposable {
  private watcher: vscode.FileSystemWatcher | undefined;
  private readonly listening: { dispose(): void };
  /** Sessions another program opens (the CLI, an MCP client) are seen by looking again now and then. */
  private readonly poll: NodeJS.Timeout;
  private readonly held = new vscode.EventEmitter<string>();
  /** Paths being set aside now: several events name the same .git. */
  private readonly holding = new Set<string>();
  /** Fires with the folder-relative path of each .git set aside. */
  readonly onDidHold = this.held.event;

  constructor(private readonly deps: NestedGitGuardDeps) {
    this.listening = deps.onDidChangeSessions(() => void this.update());
    this.poll = setInterval(() => void this.update(), POLL_MS);
  }

  /** Watches while a read-write session of this folder runs, and not otherwise. */
  async update(): Promise<void> {
    const folder = this.deps.workspaceFolder();
    const sessions = folder ? await this.deps.list().catch(() => []) : [];
    const rw = sessions.some((session) => session.workspaceAccess === 'rw' && session.state !== 'stopped');
    if (rw && !this.watcher && folder) {
      // Every creation: a folder made with its contents at once (mkdir -p a/.git) may be reported as the top folder only.
      this.watcher = vscode.workspace.createFileSystemWatcher(
        new vscode.RelativePattern(folder, '**'),
        false,
        true,
        true,
      );
      this.watcher.onDidCreate((uri) => void this.created(folder, uri));
    } else if (!rw && this.watcher) {
      this.watcher.dispose();
      this.watcher = undefined;
    }
  }

  dispose(): void {
    clearInterval(this.poll);
    this.listening.dispose();
    this.watcher?.dispose();
    this.held.dispose();
  }

  /** A created entry: a .git in its path, or (for a folder made with its contents) a .git right in it. */
  private async created(folder: string, uri: vscode.Uri): Promise<void> {
    const path = relative(folder, uri.fsPath).split(sep).join('/');
    if (!path || path.startsWith('../')) return;
    const names = path.split('/');
    const at = names.indexOf('.git');
    if (at === 0) return; // the top-level .git: a read-only mount inside rw sandboxes
    if (at > 0) return this.hold(folder, names.slice(0, at + 1).join('/'));
    const inside = await lstat(join(uri.fsPath, '.git')).catch(() => undefined);
    if (inside) return this.hold(folder, `${path}/.git`);
  }

  private async hold(folder: string, path: string): Promise<void> {
    if (this.holding.has(path)) return;
    this.holding.add(path);
    try {
      await this.setAside(folder, path);
    } finally {
      this.holding.delete(path);
    }
  }

  private async setAside(folder: string, path: string): Promise<void> {
    if (!(await lstat(join(folder, path)).catch(() => undefined))) return; // set aside already
    const aside = `.git${HELD_SUFFIX}-${Date.now().toString(36)}`;
    try {
      await renameBeside(folder, path, aside);
    } catch (error) {
      this.deps.log.warn(`A sandbox created ${path}; setting it aside failed: ${errorMessage(error)}`);
      return;
    }
    const where = path.slice(0, -'.git'.length);
    this.deps.log.warn(
      `A read-write sandbox created the git repository ${path}: set aside as ${where}${aside}, because VS Code's git would run it (a repository's config can run commands on this machine).`,
    );
    this.held.fire(path);
    const restore = vscode.l10n.t('Put It Back');
    const choice = await vscode.window.showWarningMessage(
      vscode.l10n.t(
        'A sandbox created the git repository {0}. It was set aside as {1}: VS Code runs git in repositories it finds, and a repository can make git run commands on this machine.',
        path,
        `${where}${aside}`,
      ),
      restore,
    );
    if (choice === restore)
      await renameBeside(folder, `${where}${aside}`, '.git').catch(
        (error: unknown) => void vscode.window.showErrorMessage(errorMessage(error).split('\n')[0]!),
      );
  }
}
