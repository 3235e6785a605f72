/**
 * Reading and writing files of the user's workspace folder on the host, for staging and publishing:
 * a path relative to the folder may not leave it, lexically or through a symlink.
 */
import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, open, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { SandboxError } from './errors';
import { formatSize } from './units';

/** Resolves a workspace-relative path lexically; throws when it is absolute or leaves the folder. */
export function workspaceTarget(folder: string, path: string): string {
  if (path.includes('\0')) throw new SandboxError('invalid-input', 'The workspace path contains a NUL character.', 'Remove the NUL byte from the path.');
  if (isAbsolute(path)) {
    throw new SandboxError('invalid-input', `The workspace path "${path}" is absolute.`, 'Give a path relative to the workspace folder, like "data/input.csv".');
  }
  const target = resolve(folder, path);
  if (!inside(folder, target) || target === resolve(folder)) {
    throw new SandboxError('path-outside-workspace', `The workspace path "${path}" resolves to ${target}, outside the workspace folder ${folder}.`, 'Give a file path inside the workspace folder, like "data/input.csv".');
  }
  return target;
}

/** Reads a file of the workspace folder; it must be a regular file whose real path stays inside the folder. */
export async function readWorkspaceFile(folder: string, path: string, maxBytes: number): Promise<Uint8Array> {
  const target = workspaceTarget(folder, path);
  let real: string;
  try {
    real = await realpath(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new SandboxError('file-not-found', `The workspace has no file "${path}".`, 'Check the path: it is relative to the workspace folder.');
    throw hostError(path, error);
  }
  if (!inside(await realpath(folder), real)) {
    throw new SandboxError('path-outside-workspace', `The workspace path "${path}" is a link to ${real}, outside the workspace folder.`, 'Only files inside the workspace folder can be staged.');
  }
  const info = await stat(real);
  if (info.isDirectory()) throw new SandboxError('is-a-directory', `The workspace path "${path}" is a directory.`, 'Stage one file at a time, or pack the folder into an archive in the workspace first.');
  if (!info.isFile()) throw new SandboxError('not-a-file', `The workspace path "${path}" is not a regular file.`, 'Give the path of a regular file.');
  if (info.size > maxBytes) throw new SandboxError('file-too-large', `The workspace file "${path}" is ${formatSize(info.size)}; the limit is ${formatSize(maxBytes)}.`, 'Compress or split the file first.');
  return readFile(real).catch((error: unknown) => {
    throw hostError(path, error);
  });
}

/**
 * Writes a file into the workspace folder atomically, creating parent folders. An existing file is
 * replaced only with `overwrite`; a folder on the way that links outside the workspace is refused.
 */
export async function writeWorkspaceFile(folder: string, path: string, data: Uint8Array, options: { overwrite?: boolean } = {}): Promise<string> {
  const target = workspaceTarget(folder, path);
  const realFolder = await realpath(folder);
  const parent = dirname(target);
  await checkAncestor(realFolder, parent, path);
  const existing = await lstat(target).catch(() => undefined);
  if (existing?.isDirectory()) throw new SandboxError('is-a-directory', `The workspace path "${path}" is a directory.`, 'Give a file path, like "results/output.csv".');
  if (existing && !options.overwrite) {
    throw new SandboxError('file-exists', `The workspace already has a file "${path}".`, 'Pick another save_to_workspace path, or pass overwrite: true to replace it.');
  }
  await mkdir(parent, { recursive: true });
  // Checked again now that the folders exist, in case one was a link created meanwhile.
  if (!inside(realFolder, await realpath(parent))) throw escaped(path);
  const temp = join(parent, `.agent-sandbox-${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'wx', 0o644);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.overwrite) {
      await rename(temp, target); // replaces a link itself, never what it points at
    } else {
      // link() fails when the target appeared meanwhile, so an existing file is never replaced.
      await link(temp, target).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'EEXIST') throw new SandboxError('file-exists', `The workspace already has a file "${path}".`, 'Pick another save_to_workspace path, or pass overwrite: true to replace it.');
        throw error;
      });
    }
  } finally {
    await rm(temp, { force: true });
  }
  return target;
}

/** The nearest existing folder above `dir` must really be inside the workspace folder. */
async function checkAncestor(realFolder: string, dir: string, path: string): Promise<void> {
  let current = dir;
  for (;;) {
    try {
      const real = await realpath(current);
      if (!inside(realFolder, real)) throw escaped(path);
      if (!(await stat(real)).isDirectory()) throw new SandboxError('not-a-file', `A part of the workspace path "${path}" is a file, not a folder.`, 'Pick another save_to_workspace path.');
      return;
    } catch (error) {
      if (SandboxError.is(error)) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') throw hostError(path, error);
      const up = dirname(current);
      if (up === current) throw escaped(path);
      current = up;
    }
  }
}

function inside(folder: string, path: string): boolean {
  const rel = relative(resolve(folder), path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

function escaped(path: string): SandboxError {
  return new SandboxError('path-outside-workspace', `The workspace path "${path}" goes through a link that leads outside the workspace folder.`, 'Give a path whose folders are inside the workspace folder.');
}

function hostError(path: string, error: unknown): SandboxError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return new SandboxError('permission-denied', `The workspace file "${path}" cannot be accessed: permission denied.`, 'Check the file\'s permissions.');
  return new SandboxError('engine-error', `The workspace file "${path}" cannot be accessed: ${(error as Error).message}`, 'Check the path.', { cause: error });
}
