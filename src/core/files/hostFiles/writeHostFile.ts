/** Writing one file into a host folder that a sandbox may be changing, atomically and never outside it. */
import { lstat, link, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { PROTECTED_PATHS } from '../../policy/protectedPaths';
import { HostFolder } from './hostFolder';
import { errnoError, errnoOf, hostFileError } from './hostFileError';
import { pathNames, refuseProtected } from './hostPath';
import { createTempFile, removeTempFile } from './tempFile';

export interface WriteHostFileOptions {
  /** Replace an existing file (or link, which is replaced itself, never followed); without it an existing name is refused. */
  overwrite?: boolean;
  /** Names at the top of the folder that may not be written; PROTECTED_PATHS when absent, none when empty. */
  protectedPaths?: readonly string[];
  /** The new file's permission bits (0o644 when absent); setuid and setgid are never set. */
  mode?: number;
}

/**
 * Writes `data` at `path` (relative to `folder`), creating parent folders. Each folder on the way is
 * opened without following links; the file is made under a temporary name in that same open folder
 * and then renamed (overwrite) or linked (no overwrite: link fails if the name appeared meanwhile).
 * Returns where the file is on the host.
 */
export async function writeHostFile(
  folder: string,
  path: string,
  data: Uint8Array,
  options: WriteHostFileOptions = {},
): Promise<string> {
  const names = pathNames(path);
  refuseProtected(names, options.protectedPaths ?? PROTECTED_PATHS);
  const host = await HostFolder.open(folder);
  const name = names[names.length - 1]!;
  const dir = await host.openDir(names.slice(0, -1), path, { create: true });
  try {
    const existing = await lstat(dir.entry(name)).catch((error: unknown) => {
      if (errnoOf(error) === 'ENOENT') return undefined;
      throw hostFileError(error, path);
    });
    if (existing?.isDirectory()) throw errnoError('EISDIR', path);
    // Checked early so that a refused call writes nothing; link() below is what really guarantees it.
    if (existing && !options.overwrite) throw errnoError('EEXIST', path);
    const temp = await createTempFile(dir, data, path, options.mode);
    try {
      if (options.overwrite) await rename(dir.entry(temp), dir.entry(name));
      else {
        await link(dir.entry(temp), dir.entry(name));
        await removeTempFile(dir, temp);
      }
    } catch (error) {
      await removeTempFile(dir, temp);
      throw hostFileError(error, path);
    }
    return join(dir.realPath, name);
  } finally {
    await dir.close();
  }
}
