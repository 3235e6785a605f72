/**
 * The confined reads of hostFolder.ts and regularFile.ts as synchronous system calls, for reading a
 * whole folder (a copy): there a thread-pool round trip per call costs more than the call itself
 * (10,000 files here: about 0.9 s with 32 reads in flight, 0.35 s synchronous). Same guarantees:
 * each name opened on its own below an open folder with O_NOFOLLOW, every descriptor confirmed to be
 * inside the root, a file checked on its descriptor to be regular and read within the limit. The
 * caller keeps each stretch of calls short and yields between them.
 */
import { closeSync, fstatSync, lstatSync, openSync, readlinkSync, readSync, type Stats } from 'node:fs';
import { DIRECTORY_FLAGS, type HostFolder } from './hostFolder';
import {
  errnoError,
  errnoOf,
  HostFileError,
  hostFileError,
  linkRefused,
  movedOutside,
  notRegularFile,
} from './hostFileError';
import { pathNames } from './hostPath';
import { READ_FLAGS, tooLarge } from './regularFile';

/** An open folder below the root (a plain descriptor); names inside it are reached only through it. */
export class SyncDir {
  constructor(
    readonly fd: number,
    readonly realPath: string,
  ) {}

  /** `name` looked up in this very folder: only `name` itself is resolved. */
  entry(name: string): string {
    return `/proc/self/fd/${this.fd}/${name}`;
  }

  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      // Already closed.
    }
  }
}

/** Linux's own name for the descriptor, which must be the root or below it (the caller closes it either way). */
export function confirmSync(host: HostFolder, fd: number, path: string): string {
  let real: string;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`);
  } catch (error) {
    throw hostFileError(error, path);
  }
  if (real === host.root || real.startsWith(host.root === '/' ? '/' : `${host.root}/`)) return real;
  throw movedOutside(path);
}

/** A directory descriptor confirmed inside the root, or closed and the error thrown. */
function confirmedDir(host: HostFolder, fd: number, path: string): SyncDir {
  try {
    return new SyncDir(fd, confirmSync(host, fd, path));
  } catch (error) {
    closeQuietly(fd);
    throw error;
  }
}

/** The folder at `names` below the root, each name opened without following a link (HostFolder.openDir, synchronous). */
export function openDirSync(host: HostFolder, names: readonly string[], path: string): SyncDir {
  let fd: number;
  try {
    fd = openSync(host.root, DIRECTORY_FLAGS);
  } catch (error) {
    throw hostFileError(error, '.');
  }
  let dir = confirmedDir(host, fd, '.');
  try {
    for (const name of names) {
      const child = openDirEntrySync(host, dir, name, path);
      dir.close();
      dir = child;
    }
    return dir;
  } catch (error) {
    dir.close();
    throw error;
  }
}

function openDirEntrySync(host: HostFolder, dir: SyncDir, name: string, path: string): SyncDir {
  let fd: number;
  try {
    fd = openSync(dir.entry(name), DIRECTORY_FLAGS);
  } catch (error) {
    // As in HostFolder.openDirEntry: with O_DIRECTORY a link gives ENOTDIR, not ELOOP.
    if (errnoOf(error) === 'ENOTDIR') {
      const now = lstatQuietly(dir.entry(name));
      if (!now || now.isSymbolicLink() || now.isDirectory()) throw linkRefused(path);
    }
    throw hostFileError(error, path);
  }
  return confirmedDir(host, fd, path);
}

/** What `name` in `dir` is, without following it; undefined when it is not there. */
export function lstatEntrySync(dir: SyncDir, name: string): Stats | undefined {
  return lstatQuietly(dir.entry(name));
}

/** The target of the link `name` in `dir` (the link itself is never followed). */
export function readLinkSync(dir: SyncDir, name: string, path: string): string {
  try {
    return readlinkSync(dir.entry(name));
  } catch (error) {
    throw hostFileError(error, path);
  }
}

/** For the one byte read past a file that filled its place. */
const PROBE = Buffer.alloc(1);

/**
 * The bytes of the regular file `name` in `dir`, at most `maxBytes` (openRegularFile and readWithin,
 * synchronous): opened without following a link, checked on its descriptor, read into one buffer of
 * its size, or into `place` when the file is still the size of that place; a file that grows past the
 * limit while it is read is refused.
 */
export function readRegularFileSync(
  host: HostFolder,
  dir: SyncDir,
  name: string,
  path: string,
  maxBytes: number,
  place?: Uint8Array,
): { data: Uint8Array; stats: Stats } {
  let fd: number;
  try {
    fd = openSync(dir.entry(name), READ_FLAGS);
  } catch (error) {
    throw hostFileError(error, path);
  }
  try {
    const stats = fstatSync(fd);
    if (stats.isDirectory()) throw errnoError('EISDIR', path);
    if (!stats.isFile()) throw notRegularFile(path);
    confirmSync(host, fd, path);
    if (stats.size > maxBytes) throw tooLarge(path, stats.size, maxBytes);
    const own = place?.length === stats.size ? place : undefined;
    // Without a place, one byte more than the size tells a file that grew while it was read.
    let buffer: Uint8Array = own ?? Buffer.allocUnsafe(stats.size + 1);
    let total = 0;
    for (;;) {
      if (total === buffer.length) {
        let next: number | undefined;
        if (buffer === own) {
          if (readSync(fd, PROBE, 0, 1, null) === 0) break;
          next = PROBE[0]!;
        } else if (total > maxBytes) throw tooLarge(path, total, maxBytes, true);
        const grown = Buffer.allocUnsafe(Math.min(Math.max(buffer.length * 2, 4096), maxBytes + 1));
        grown.set(buffer.subarray(0, total));
        if (next !== undefined) grown[total++] = next;
        buffer = grown;
        if (total > maxBytes) throw tooLarge(path, total, maxBytes, true);
        continue;
      }
      const bytesRead = readSync(fd, buffer, total, buffer.length - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    if (total > maxBytes) throw tooLarge(path, total, maxBytes, true);
    return { data: buffer.subarray(0, total), stats };
  } catch (error) {
    throw hostFileError(error, path);
  } finally {
    closeQuietly(fd);
  }
}

function lstatQuietly(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Nothing more to do: the descriptor is gone either way.
  }
}

/** The open folder of the path at hand: each folder opened once for its run of paths (they are sorted). */
export class RunOfFolders {
  private current: { key: string; dir: SyncDir | undefined } | undefined;

  constructor(private readonly host: HostFolder) {}

  /** The folder of `path` (undefined when it is gone, or is a file now) and the path's last name. */
  of(path: string): { dir: SyncDir | undefined; name: string } {
    const names = pathNames(path);
    const key = names.slice(0, -1).join('/');
    if (this.current?.key !== key) {
      this.close();
      this.current = { key, dir: openUnlessGone(this.host, names.slice(0, -1), path) };
    }
    return { dir: this.current.dir, name: names[names.length - 1]! };
  }

  close(): void {
    this.current?.dir?.close();
    this.current = undefined;
  }
}

/** A file or folder no longer there, or a file where a folder was: as if never there. */
function isGone(error: unknown): boolean {
  return error instanceof HostFileError && (error.code === 'ENOENT' || error.code === 'ENOTDIR');
}

function openUnlessGone(host: HostFolder, names: readonly string[], path: string): SyncDir | undefined {
  try {
    return openDirSync(host, names, path);
  } catch (error) {
    if (isGone(error)) return undefined;
    throw error;
  }
}

export function readUnlessGone(
  ...args: Parameters<typeof readRegularFileSync>
): ReturnType<typeof readRegularFileSync> | undefined {
  try {
    return readRegularFileSync(...args);
  } catch (error) {
    if (isGone(error)) return undefined;
    throw error;
  }
}
