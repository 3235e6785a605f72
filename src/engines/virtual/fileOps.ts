/**
 * The file tools on a virtual file system, with the Docker engine's semantics and errors: every
 * path stays under /workspace, lexically and through symbolic links (a link whose target leaves
 * /workspace is refused, whether or not the target exists).
 */
import { encodeFileContent } from '../../core/files/files';
import { posix } from 'node:path';
import type { IFileSystem } from 'just-bash';
import type { FileContent, FileEntry, ListResult, WriteResult } from '../../core/engine/engine';
import { displayName } from '../../core/results/displayName';
import { SandboxError } from '../../core/errors';
import { WORKSPACE_DIR } from '../../core/files/paths';
import type { FilePayload } from './protocol';

const MAX_LINK_HOPS = 40;

export function notFound(path: string): SandboxError {
  return new SandboxError(
    'file-not-found',
    `${displayName(path)} does not exist.`,
    'List the directory with sandbox_fs_list to see what is there.',
  );
}

function outside(path: string): SandboxError {
  return new SandboxError(
    'path-outside-workspace',
    `${displayName(path)} leads outside /workspace (through a symbolic link).`,
    "File tools only reach /workspace. Use the link's target inside /workspace, or a command with sandbox_exec.",
  );
}

function insideWorkspace(path: string): boolean {
  return path === WORKSPACE_DIR || path.startsWith(`${WORKSPACE_DIR}/`);
}

async function lstatOrUndefined(fs: IFileSystem, path: string) {
  try {
    return await fs.lstat(path);
  } catch {
    return undefined;
  }
}

/**
 * Resolves symbolic links in an absolute path (the last component too when `followLast`); throws
 * path-outside-workspace as soon as a link leads out of /workspace. Missing components are kept as they are.
 */
export async function resolveInWorkspace(
  fs: IFileSystem,
  absolute: string,
  original: string,
  followLast = true,
): Promise<string> {
  const pending = absolute.split('/').filter(Boolean);
  let current = '/';
  let hops = 0;
  while (pending.length > 0) {
    const name = pending.shift()!;
    const next = posix.join(current, name);
    const stat = await lstatOrUndefined(fs, next);
    if (!stat) return posix.join(next, ...pending);
    if (stat.isSymbolicLink && (pending.length > 0 || followLast)) {
      if (++hops > MAX_LINK_HOPS)
        throw new SandboxError(
          'invalid-input',
          `${original} has too many levels of symbolic links.`,
          'Give a path without a link loop.',
        );
      const target = await fs.readlink(next);
      const resolved = posix.normalize(target.startsWith('/') ? target : posix.join(current, target));
      if (!insideWorkspace(resolved)) throw outside(original);
      pending.unshift(...resolved.split('/').filter(Boolean));
      current = '/';
      continue;
    }
    current = next;
  }
  return current;
}

/** Places files at absolute paths, creating folders; `checked` applies the /workspace link policy. */
export async function writeFiles(
  fs: IFileSystem,
  files: readonly FilePayload[],
  checked: boolean,
): Promise<WriteResult> {
  for (const file of files) {
    const target = checked ? await resolveInWorkspace(fs, file.path, file.path) : file.path;
    if (checked && !insideWorkspace(target)) throw outside(file.path);
    const existing = await lstatOrUndefined(fs, target);
    if (existing?.isDirectory)
      throw new SandboxError(
        'is-a-directory',
        `${file.path} is a directory.`,
        'List it with sandbox_fs_list, or give a file path.',
      );
    await fs.mkdir(posix.dirname(target), { recursive: true });
    await fs.writeFile(target, file.data);
    await fs.chmod(target, file.mode ?? 0o644);
  }
  return { files: files.map((file) => ({ path: file.path, bytes: file.data.length })) };
}

export async function readFile(
  fs: IFileSystem,
  path: string,
  maxBytes: number,
  wanted: 'utf8' | 'base64' | 'auto',
  offset = 0,
): Promise<FileContent> {
  const real = await resolveInWorkspace(fs, path, path);
  const stat = await lstatOrUndefined(fs, real);
  if (!stat) throw notFound(path);
  if (stat.isDirectory)
    throw new SandboxError(
      'is-a-directory',
      `${displayName(path)} is a directory.`,
      'List it with sandbox_fs_list, or give a file path.',
    );
  if (!stat.isFile)
    throw new SandboxError('not-a-file', `${displayName(path)} is not a regular file.`, 'Read regular files only.');
  const bytes = Buffer.from(await fs.readFileBuffer(real));
  const data = bytes.subarray(offset, offset + maxBytes);
  const { content, encoding } = encodeFileContent(data, wanted);
  return { path, content, encoding, size: bytes.length, offset, truncated: bytes.length > offset + data.length };
}

export async function listFiles(fs: IFileSystem, path: string, depth: number, most: number): Promise<ListResult> {
  const real = await resolveInWorkspace(fs, path, path);
  const stat = await lstatOrUndefined(fs, real);
  if (!stat) throw notFound(path);
  if (!stat.isDirectory)
    throw new SandboxError(
      'invalid-input',
      `${displayName(path)} is not a directory.`,
      'Read it with sandbox_fs_read, or list its parent directory.',
    );
  const entries: FileEntry[] = [];
  // One more than the cap tells whether the listing was cut.
  const walk = async (dir: string, level: number): Promise<void> => {
    for (const name of await fs.readdir(dir)) {
      if (entries.length > most) return;
      const child = posix.join(dir, name);
      const info = await lstatOrUndefined(fs, child);
      if (!info) continue;
      const type = info.isSymbolicLink ? 'symlink' : info.isDirectory ? 'directory' : info.isFile ? 'file' : 'other';
      entries.push({ path: child, type, size: info.isDirectory ? 4096 : info.size, mtime: info.mtime.toISOString() });
      if (type === 'directory' && level < depth) await walk(child, level + 1);
    }
  };
  await walk(real, 1);
  entries.sort((a, b) => a.path.localeCompare(b.path));
  return { entries: entries.slice(0, most), truncated: entries.length > most };
}

export async function deletePath(
  fs: IFileSystem,
  path: string,
  recursive: boolean,
): Promise<{ path: string; deleted: boolean }> {
  const parent = await resolveInWorkspace(fs, posix.dirname(path), path);
  if (!(await lstatOrUndefined(fs, parent))) throw notFound(path);
  const target = posix.join(parent, posix.basename(path));
  if (target === WORKSPACE_DIR)
    throw new SandboxError('invalid-input', 'Cannot delete /workspace itself.', 'Delete the files inside it.');
  const stat = await lstatOrUndefined(fs, target);
  if (!stat) throw notFound(path);
  if (stat.isDirectory && !stat.isSymbolicLink) {
    if (!recursive)
      throw new SandboxError(
        'is-a-directory',
        `${displayName(path)} is a directory.`,
        'Pass recursive: true to delete a directory and everything in it.',
      );
    await fs.rm(target, { recursive: true, force: true });
  } else {
    await fs.rm(target, { force: true });
  }
  return { path, deleted: true };
}
