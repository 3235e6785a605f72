/**
 * Opening a file inside an open host folder for reading, and reading it within a limit. The checks
 * are on the descriptor, never the path: what was opened is what is checked and what is read.
 */
import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { formatSize } from '../../spec/units';
import type { HostDir, HostFolder } from './hostFolder';
import { errnoError, HostFileError, hostFileError, notRegularFile } from './hostFileError';
import { quotedName as quoteName } from '../../results/displayName';

/** O_NONBLOCK: a FIFO opens at once instead of waiting for a writer, and is then refused by its fstat. */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export interface OpenedFile {
  handle: FileHandle;
  stats: Stats;
}

/** Opens `name` in `dir`; only a regular file inside the folder is accepted. */
export async function openRegularFile(
  folder: HostFolder,
  dir: HostDir,
  name: string,
  path: string,
): Promise<OpenedFile> {
  let handle: FileHandle;
  try {
    handle = await open(dir.entry(name), READ_FLAGS);
  } catch (error) {
    throw hostFileError(error, path);
  }
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw errnoError('EISDIR', path);
    if (!stats.isFile()) throw notRegularFile(path);
    await folder.confirm(handle, path);
    return { handle, stats };
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw hostFileError(error, path);
  }
}

/** At most `maxBytes` from the descriptor; the size comes from its fstat, and a file that grows past the limit is refused too. */
export async function readWithin(file: OpenedFile, maxBytes: number, path: string): Promise<Uint8Array> {
  if (file.stats.size > maxBytes) throw tooLarge(path, file.stats.size, maxBytes);
  // One byte more than the limit tells a file that grew while it was read.
  const buffer = Buffer.allocUnsafe(Math.min(file.stats.size, maxBytes) + 1);
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const { bytesRead } = await file.handle
      .read(buffer, 0, Math.min(buffer.length, maxBytes + 1 - total), null)
      .catch((error: unknown) => Promise.reject(hostFileError(error, path)));
    if (bytesRead === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, bytesRead)));
    total += bytesRead;
    if (total > maxBytes) throw tooLarge(path, total, maxBytes, true);
  }
  const data = Buffer.concat(chunks, total);
  return new Uint8Array(data.buffer, data.byteOffset, data.length);
}

export function tooLarge(path: string, size: number, maxBytes: number, grew = false): HostFileError {
  const what = grew ? `grew past ${formatSize(maxBytes)} while it was read` : `is ${formatSize(size)}`;
  return new HostFileError(
    'EFBIG',
    'file-too-large',
    `The workspace file ${quoteName(path)} ${what}; the limit is ${formatSize(maxBytes)}.`,
    'Compress or split the file first.',
  );
}
