/**
 * Workspace access `copy`: the folder's files read once, at open, for a private /workspace. Tracked
 * and untracked files minus what .gitignore excludes (git ls-files in a git work tree, else a walk),
 * never `.git`; links are kept as links only when they point inside the folder. Every file is read
 * through the confined host-read helpers (no link followed, the descriptor checked). The baseline
 * (path → size, mtime, sha256) is what the session's changes are later measured against.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, readlink, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix } from 'node:path';
import { SandboxError } from '../errors';
import { formatSize } from '../spec/units';
import { HostFolder, type HostDir } from './hostFiles/hostFolder';
import { pathNames } from './hostFiles/hostPath';
import { openRegularFile, readWithin } from './hostFiles/regularFile';

export const DEFAULT_COPY_MAX_FILES = 10_000;

/** The file-count cap of a copy: AGENT_SANDBOX_COPY_MAX_FILES, else 10,000. */
export function copyMaxFiles(env: NodeJS.ProcessEnv): number {
  const value = Number(env.AGENT_SANDBOX_COPY_MAX_FILES);
  return Number.isInteger(value) && value > 0 ? value : DEFAULT_COPY_MAX_FILES;
}

export interface CopiedFile {
  /** Relative to the folder, with "/" separators. */
  path: string;
  kind: 'file' | 'symlink';
  /** The bytes of a file. */
  data?: Uint8Array;
  /** The target of a link (inside the folder). */
  linkTarget?: string;
  mode: number;
}

export interface BaselineEntry {
  size: number;
  mtimeMs: number;
  /** sha256 of a file's bytes, or of a link's target text. */
  sha256: string;
  kind: 'file' | 'symlink';
  mode: number;
}

export interface CopyBaseline {
  folder: string;
  copiedAt: string;
  files: Record<string, BaselineEntry>;
}

export interface FolderCopy {
  files: CopiedFile[];
  baseline: CopyBaseline;
  /** Paths left out, each with why (a link out of the folder, a special file). */
  skipped: string[];
}

export interface CopyLimits {
  maxFiles?: number;
  maxBytes: number;
}

export function sha256(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The relative paths to copy: git's view of the work tree when there is one, else every file but `.git`. */
export async function copyCandidates(folder: string): Promise<string[]> {
  const fromGit = await gitFiles(folder);
  const paths = fromGit ?? (await walk(folder));
  return [...new Set(paths)].filter((path) => !isGitPath(path)).sort();
}

function isGitPath(path: string): boolean {
  return path.split('/').includes('.git');
}

function gitFiles(folder: string): Promise<string[] | undefined> {
  return new Promise((done) => {
    execFile(
      'git',
      ['-C', folder, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
      { maxBuffer: 256 * 1024 * 1024, encoding: 'buffer' },
      (error, stdout) => {
        if (error) return done(undefined);
        done(
          stdout
            .toString('utf8')
            .split('\0')
            .filter((path) => path.length > 0),
        );
      },
    );
  });
}

async function walk(folder: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(join(folder, prefix), { withFileTypes: true });
  for (const entry of entries) {
    if (entry.name === '.git') continue;
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await walk(folder, path)));
    else out.push(path);
  }
  return out;
}

/** A link's target, when it stays inside the folder; undefined otherwise. */
export function linkInside(path: string, target: string): boolean {
  if (isAbsolute(target)) return false;
  const resolved = posix.normalize(posix.join(posix.dirname(path), target));
  return resolved !== '..' && !resolved.startsWith('../') && !isGitPath(resolved);
}

export function tooManyFiles(count: number, max: number): SandboxError {
  return new SandboxError(
    'too-many-files',
    `The folder has ${count.toLocaleString('en-US')} files to copy, more than the ${max.toLocaleString('en-US')} a copy may hold.`,
    'Exclude generated files in .gitignore, or use workspace access ro or rw for this folder.',
  );
}

export function tooManyBytes(bytes: number, max: number): SandboxError {
  return new SandboxError(
    'disk-limit',
    `The folder's files to copy are ${formatSize(bytes)}, more than the sandbox's disk limit of ${formatSize(max)}.`,
    'Raise the disk limit (limits.disk), exclude large files in .gitignore, or use workspace access ro or rw.',
  );
}

/** Reads the folder for a copy, within the limits. */
export async function readFolderCopy(folder: string, limits: CopyLimits): Promise<FolderCopy> {
  const maxFiles = limits.maxFiles ?? DEFAULT_COPY_MAX_FILES;
  const candidates = await copyCandidates(folder);
  if (candidates.length > maxFiles) throw tooManyFiles(candidates.length, maxFiles);
  const host = await HostFolder.open(folder);
  const files: CopiedFile[] = [];
  const skipped: string[] = [];
  const baseline: CopyBaseline = { folder, copiedAt: new Date().toISOString(), files: {} };
  let total = 0;
  let openDir: { key: string; dir: HostDir } | undefined;
  try {
    for (const path of candidates) {
      const stats = await lstat(join(folder, ...path.split('/'))).catch(() => undefined);
      if (!stats) continue; // tracked but deleted in the work tree
      if (stats.isSymbolicLink()) {
        const target = await readlink(join(folder, ...path.split('/')));
        if (!linkInside(path, target)) {
          skipped.push(`${path} (a link out of the folder)`);
          continue;
        }
        files.push({ path, kind: 'symlink', linkTarget: target, mode: 0o777 });
        baseline.files[path] = {
          size: Buffer.byteLength(target),
          mtimeMs: stats.mtimeMs,
          sha256: sha256(target),
          kind: 'symlink',
          mode: 0o777,
        };
        continue;
      }
      if (!stats.isFile()) {
        if (!stats.isDirectory()) skipped.push(`${path} (not a regular file)`);
        continue;
      }
      total += stats.size;
      if (total > limits.maxBytes) throw tooManyBytes(await totalSize(folder, candidates), limits.maxBytes);
      const names = pathNames(path);
      // Each folder opened once for its run of files (the paths are sorted), never following links.
      const dirKey = names.slice(0, -1).join('/');
      if (!openDir || openDir.key !== dirKey) {
        await openDir?.dir.close();
        openDir = undefined;
        openDir = { key: dirKey, dir: await host.openDir(names.slice(0, -1), path) };
      }
      const file = await openRegularFile(host, openDir.dir, names[names.length - 1]!, path);
      try {
        const data = await readWithin(file, limits.maxBytes, path);
        const mode = file.stats.mode & 0o777;
        files.push({ path, kind: 'file', data, mode });
        baseline.files[path] = {
          size: data.length,
          mtimeMs: file.stats.mtimeMs,
          sha256: sha256(data),
          kind: 'file',
          mode,
        };
      } finally {
        await file.handle.close().catch(() => undefined);
      }
    }
  } finally {
    await openDir?.dir.close();
  }
  return { files, baseline, skipped };
}

async function totalSize(folder: string, paths: readonly string[]): Promise<number> {
  let total = 0;
  for (const path of paths) {
    const stats = await lstat(join(folder, ...path.split('/'))).catch(() => undefined);
    if (stats?.isFile()) total += stats.size;
  }
  return total;
}

/** Where a copy session's baseline is kept: a file per container under the state folder. */
export function baselinePath(stateDir: string, containerId: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(containerId)) throw new Error(`not a container id: ${containerId}`);
  return join(stateDir, 'copies', `${containerId}.json`);
}

export async function saveBaseline(stateDir: string, containerId: string, baseline: CopyBaseline): Promise<void> {
  const path = baselinePath(stateDir, containerId);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(baseline), { mode: 0o600 });
  await rename(temp, path);
}

export async function forgetBaseline(stateDir: string, containerId: string): Promise<void> {
  await rm(baselinePath(stateDir, containerId), { force: true });
}

export async function loadBaseline(stateDir: string, containerId: string): Promise<CopyBaseline | undefined> {
  const text = await readFile(baselinePath(stateDir, containerId), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : (JSON.parse(text) as CopyBaseline);
}

/** What the session's notices say about a copy: how much was copied, and what was left out. */
export function copyNotices(copy: FolderCopy): string[] {
  const bytes = copy.files.reduce((sum, file) => sum + (file.data?.length ?? 0), 0);
  const notices = [
    `The folder was copied into /workspace (${copy.files.length.toLocaleString('en-US')} files, ${formatSize(bytes)}; what .gitignore excludes and .git were left out). Changes there stay in the sandbox until applied.`,
  ];
  if (copy.skipped.length) {
    const shown = copy.skipped.slice(0, 20).join(', ');
    const more = copy.skipped.length > 20 ? ` and ${copy.skipped.length - 20} more` : '';
    notices.push(`Not copied: ${shown}${more}.`);
  }
  return notices;
}
