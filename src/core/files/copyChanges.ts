/**
 * The changes of a `copy` session: what the sandbox has at each path (copyListing.ts lists it)
 * compared with the baseline taken at the copy. copyDiff.ts shows them as a git-style diff.
 */
import type { CopyBaseline } from './folderCopy';

/** What the sandbox has now at a path. */
export interface SandboxEntry {
  kind: 'file' | 'symlink';
  size: number;
  /** sha256 of a file's bytes, or of a link's target text. */
  sha256: string;
  /** Permission bits of a file. */
  mode?: number;
}

export interface CopyChange {
  path: string;
  change: 'added' | 'modified' | 'deleted';
  oldSize?: number;
  newSize?: number;
  /** A file's permission bits in the sandbox now. */
  newMode?: number;
}

/** Added, modified and deleted paths, by path order. */
export function compareToBaseline(baseline: CopyBaseline, current: ReadonlyMap<string, SandboxEntry>): CopyChange[] {
  const changes: CopyChange[] = [];
  for (const [path, before] of Object.entries(baseline.files)) {
    const now = current.get(path);
    if (!now) changes.push({ path, change: 'deleted', oldSize: before.size });
    else if (now.sha256 !== before.sha256 || now.kind !== before.kind)
      changes.push({ path, change: 'modified', oldSize: before.size, newSize: now.size, newMode: now.mode });
  }
  for (const [path, now] of current) {
    if (!(path in baseline.files)) changes.push({ path, change: 'added', newSize: now.size, newMode: now.mode });
  }
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
