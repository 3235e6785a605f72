/**
 * Changing one entry of an open host folder for the virtual engine's file system: writes go through
 * a temporary file renamed into place (never into an existing inode that may have a hard link
 * elsewhere), appends and mode changes work on a descriptor checked with fstat, and no mode keeps a
 * setuid or setgid bit.
 */
import { constants, type Stats } from 'node:fs';
import { chmod, lstat, open, readdir, rename, rmdir, unlink, utimes, type FileHandle } from 'node:fs/promises';
import {
  errnoError,
  errnoOf,
  hostFileError,
  linkRefused,
  notRegularFile,
} from '../../core/files/hostFiles/hostFileError';
import { O_PATH, type HostDir, type HostFolder } from '../../core/files/hostFiles/hostFolder';
import { openRegularFile, readWithin } from '../../core/files/hostFiles/regularFile';
import { createTempFile, removeTempFile } from '../../core/files/hostFiles/tempFile';

/** Permission bits and the sticky bit; never setuid (0o4000) or setgid (0o2000). */
export const SAFE_MODE_BITS = 0o1777;

const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** What `name` is now, without following it; undefined when there is nothing. */
export async function entryStats(dir: HostDir, name: string, path: string): Promise<Stats | undefined> {
  return lstat(dir.entry(name)).catch((error: unknown) => {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw hostFileError(error, path);
  });
}

function refuseUnlessFile(stats: Stats | undefined, path: string): void {
  if (!stats || stats.isFile()) return;
  if (stats.isDirectory()) throw errnoError('EISDIR', path);
  if (stats.isSymbolicLink()) throw linkRefused(path);
  throw notRegularFile(path);
}

/** Puts `data` at `name` through a temporary file in the same open folder. */
export async function replaceEntry(
  dir: HostDir,
  name: string,
  data: Uint8Array,
  path: string,
  mode: number,
): Promise<void> {
  const temp = await createTempFile(dir, data, path, mode & 0o777);
  try {
    await rename(dir.entry(temp), dir.entry(name));
  } catch (error) {
    await removeTempFile(dir, temp);
    throw hostFileError(error, path);
  }
}

/** Writes a whole file; an existing one keeps its permission bits, a new one gets 0644. */
export async function writeEntry(dir: HostDir, name: string, data: Uint8Array, path: string): Promise<void> {
  const existing = await entryStats(dir, name, path);
  refuseUnlessFile(existing, path);
  await replaceEntry(dir, name, data, path, existing ? existing.mode : 0o644);
}

/** Appends in place when the file has no other hard link; otherwise copies it first, so a link elsewhere never changes. */
export async function appendEntry(
  host: HostFolder,
  dir: HostDir,
  name: string,
  data: Uint8Array,
  path: string,
  maxBytes: number,
): Promise<void> {
  const existing = await entryStats(dir, name, path);
  refuseUnlessFile(existing, path);
  if (!existing) return replaceEntry(dir, name, data, path, 0o644);
  if (existing.nlink > 1) {
    const old = await readEntry(host, dir, name, path, maxBytes);
    return replaceEntry(dir, name, Buffer.concat([old, data]), path, existing.mode);
  }
  let handle: FileHandle;
  try {
    handle = await open(dir.entry(name), APPEND_FLAGS);
  } catch (error) {
    throw hostFileError(error, path);
  }
  try {
    const now = await handle.stat();
    // Swapped since the lstat: refuse rather than append to whatever it is now.
    if (!now.isFile() || now.ino !== existing.ino || now.nlink > 1) throw errnoError('EAGAIN', path);
    await handle.write(data);
  } catch (error) {
    throw hostFileError(error, path);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** The bytes of a regular file in `dir`, at most `maxBytes`. */
export async function readEntry(
  host: HostFolder,
  dir: HostDir,
  name: string,
  path: string,
  maxBytes: number,
): Promise<Buffer> {
  const file = await openRegularFile(host, dir, name, path);
  try {
    return Buffer.from(await readWithin(file, maxBytes, path));
  } finally {
    await file.handle.close().catch(() => undefined);
  }
}

/**
 * Changes the mode or the times of a file or folder through an O_PATH descriptor (it never reads, so
 * no FIFO or device is opened), checked with fstat. A file with another hard link is copied first.
 */
export async function changeEntry(
  host: HostFolder,
  dir: HostDir,
  name: string,
  path: string,
  change: { mode?: number; times?: [Date, Date] },
  maxBytes: number,
): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(dir.entry(name), O_PATH | constants.O_NOFOLLOW);
  } catch (error) {
    throw hostFileError(error, path);
  }
  try {
    const stats = await handle.stat();
    if (stats.isSymbolicLink()) throw linkRefused(path);
    if (!stats.isFile() && !stats.isDirectory()) throw notRegularFile(path);
    await host.confirm(handle, path);
    const self = `/proc/self/fd/${handle.fd}`;
    if (change.mode !== undefined) {
      if (stats.isFile() && stats.nlink > 1)
        await replaceEntry(
          dir,
          name,
          await readEntry(host, dir, name, path, maxBytes),
          path,
          change.mode & SAFE_MODE_BITS,
        );
      else await chmod(self, change.mode & SAFE_MODE_BITS);
    }
    if (change.times) await utimes(self, change.times[0], change.times[1]);
  } catch (error) {
    throw hostFileError(error, path);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Removes `name`: a file or link is unlinked (never followed), a folder emptied first when `recursive`. */
export async function removeEntry(
  host: HostFolder,
  dir: HostDir,
  name: string,
  path: string,
  recursive: boolean,
): Promise<void> {
  const stats = await lstat(dir.entry(name)).catch((error: unknown) => Promise.reject(hostFileError(error, path)));
  if (!stats.isDirectory()) {
    await unlink(dir.entry(name)).catch((error: unknown) => Promise.reject(hostFileError(error, path)));
    return;
  }
  if (recursive) {
    const child = await host.openDirEntry(dir, name, path);
    try {
      for (const entry of await readdir(child.self)) await removeEntry(host, child, entry, `${path}/${entry}`, true);
    } finally {
      await child.close();
    }
  }
  await rmdir(dir.entry(name)).catch((error: unknown) => Promise.reject(hostFileError(error, path)));
}
