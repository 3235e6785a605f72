/**
 * Setting an entry of a host folder aside under another name, and back: the rename happens inside
 * the entry's folder opened without following links, so a sandbox that swaps a folder on the way
 * for a link cannot point it elsewhere.
 */
import { lstat, rename } from 'node:fs/promises';
import { HostFolder } from './hostFolder';
import { hostFileError } from './hostFileError';
import { pathNames } from './hostPath';

/** Renames `path` (relative to `folder`) to `newName` beside it; refuses when `newName` exists. */
export async function renameBeside(folder: string, path: string, newName: string): Promise<void> {
  const names = pathNames(path);
  if (pathNames(newName).length !== 1) throw new Error(`not a name: ${newName}`);
  const host = await HostFolder.open(folder);
  const dir = await host.openDir(names.slice(0, -1), path);
  try {
    if (await lstat(dir.entry(newName)).catch(() => undefined)) throw new Error(`${newName} exists already`);
    await rename(dir.entry(names[names.length - 1]!), dir.entry(newName)).catch((error: unknown) =>
      Promise.reject(hostFileError(error, path)),
    );
  } finally {
    await dir.close();
  }
}
