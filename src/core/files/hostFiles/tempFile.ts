/**
 * A new file with the given bytes, created beside its final name inside an open host folder, to be
 * renamed or linked into place: readers never see half a file, and nothing that already exists
 * (a link, a FIFO, another file) is ever opened for writing.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import type { HostDir } from './hostFolder';
import { hostFileError } from './hostFileError';

const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Writes and syncs a temporary file in `dir`; returns its name. `mode` never carries setuid or setgid. */
export async function createTempFile(dir: HostDir, data: Uint8Array, path: string, mode = 0o644): Promise<string> {
  const name = `.agent-sandbox-${randomBytes(8).toString('hex')}.tmp`;
  let handle;
  try {
    handle = await open(dir.entry(name), CREATE_FLAGS, mode & 0o777);
  } catch (error) {
    throw hostFileError(error, path);
  }
  try {
    await handle.writeFile(data);
    // The mode given to open() is cut by the umask; set the one asked for, still without setuid or setgid.
    if ((mode & 0o777) !== 0o644) await handle.chmod(mode & 0o777);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await removeTempFile(dir, name);
    throw hostFileError(error, path);
  }
  await handle.close();
  return name;
}

/** Removes a temporary file left by a failed step; one that is already gone is fine. */
export async function removeTempFile(dir: HostDir, name: string): Promise<void> {
  await unlink(dir.entry(name)).catch(() => undefined);
}
