/**
 * A read-only view of a copy session's files, for the diff and merge editors:
 * `agent-sandbox-copy://<container id>/<path>` is the sandbox's file; with the query `empty`, nothing
 * (the missing side of an added or deleted file); `host`, the folder's file as read now through the
 * confined read; `base=<sha256>`, the bytes the copy started from (kept for merges).
 */
import { copyFileLimit, readWholeSandboxFile } from '../../core/files/sandboxFileBytes';
import * as vscode from 'vscode';
import { baseObject } from '../../core/files/copyObjects';
import { sha256 } from '../../core/files/folderCopy';
import { readHostFile } from '../../core/files/hostFiles/readHostFile';
import { WORKSPACE_DIR } from '../../core/files/paths';
import type { CopyReviewModel } from './copyReviewModel';

export const COPY_SCHEME = 'agent-sandbox-copy';

export type CopySide = 'sandbox' | 'empty' | 'host' | { base: string };

export function copyUri(containerId: string, path: string, side: CopySide = 'sandbox'): vscode.Uri {
  const query = side === 'sandbox' ? '' : typeof side === 'string' ? side : `base=${side.base}`;
  return vscode.Uri.from({ scheme: COPY_SCHEME, authority: containerId, path: `/${path}`, query });
}

export class SandboxFileSystem implements vscode.FileSystemProvider {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  /** The last bytes read per URI: stat and readFile come in pairs. */
  private readonly recent = new Map<string, { data: Uint8Array; at: number }>();

  constructor(
    private readonly model: CopyReviewModel,
    private readonly stateDir: string,
  ) {}

  /** Tells open editors that these files may have changed (after a refresh, an apply or a discard). */
  changedFiles(uris: readonly vscode.Uri[]): void {
    for (const uri of uris) this.recent.delete(uri.toString());
    if (uris.length) this.changed.fire(uris.map((uri) => ({ type: vscode.FileChangeType.Changed, uri })));
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const data = await this.read(uri);
    return {
      type: vscode.FileType.File,
      ctime: 0,
      mtime: 0,
      size: data.length,
      permissions: vscode.FilePermission.Readonly,
    };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    return this.read(uri);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  writeFile(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  private async read(uri: vscode.Uri): Promise<Uint8Array> {
    const key = uri.toString();
    const recent = this.recent.get(key);
    if (recent && Date.now() - recent.at < 2_000) return recent.data;
    const data = await this.fetch(uri);
    this.recent.set(key, { data, at: Date.now() });
    if (this.recent.size > 64) this.recent.delete(this.recent.keys().next().value!);
    return data;
  }

  private async fetch(uri: vscode.Uri): Promise<Uint8Array> {
    const path = uri.path.replace(/^\/+/, '');
    if (uri.query === 'empty') return new Uint8Array();
    try {
      if (uri.query.startsWith('base=')) {
        const data = await baseObject(this.stateDir, uri.authority, uri.query.slice('base='.length));
        if (!data) throw vscode.FileSystemError.FileNotFound(uri);
        return data;
      }
      const { sandbox, baseline } = await this.model.open(uri.authority);
      const maxBytes = copyFileLimit(sandbox);
      if (uri.query === 'host') return await readHostFile(baseline.folder, path, maxBytes);
      const data = await readWholeSandboxFile(sandbox, `${WORKSPACE_DIR}/${path}`, { maxBytes });
      this.model.showed(uri.authority, path, sha256(data));
      return data;
    } catch (error) {
      if (error instanceof vscode.FileSystemError) throw error;
      throw vscode.FileSystemError.FileNotFound(`${uri.toString()}: ${(error as Error).message}`);
    }
  }
}
