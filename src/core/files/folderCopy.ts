/**
 * Workspace access `copy`: the folder's files read once, at open, for a private /workspace. Tracked
 * and untracked files minus what .gitignore excludes (git ls-files in a git work tree, else a walk),
 * never `.git`; links are kept as links only when they point inside the folder. Every file is read
 * through the confined host-read helpers (no link followed, the descriptor checked; synchronous, in
 * slices: hostFiles/syncReads.ts), straight into the archive that carries it when the engine lays one
 * out. The baseline (path → size, mtime, sha256) is what the session's changes are later measured
 * against; with what was placed (BLAKE2b), the sandbox can tell its unchanged files quickly.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix } from 'node:path';
import { SandboxError } from '../errors';
import { formatSize } from '../spec/units';
import { FileHashes } from './hostFiles/fileHashes';
import { HostFolder } from './hostFiles/hostFolder';
import { lstatEntrySync, readLinkSync, readUnlessGone, RunOfFolders } from './hostFiles/syncReads';

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
  /**
   * Each file as it was placed in the sandbox, which the listing of changes compares with (its
   * BLAKE2b, quicker to check in the sandbox than sha256; copyChanges.ts). Unlike `files`, never
   * moved on by an apply or a discard: it is what the sandbox was given.
   */
  placed?: Record<string, PlacedFile>;
}

/** A file as placed in the sandbox by the copy. */
export interface PlacedFile {
  /** BLAKE2b-512 of the bytes, as b2sum prints it. */
  blake2b: string;
  sha256: string;
  size: number;
  mode: number;
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

/** A file or link to copy, as found before any file is read. */
export interface PlannedEntry {
  path: string;
  kind: 'file' | 'symlink';
  /** A file's size when it was found. */
  size: number;
  linkTarget?: string;
}

/**
 * Where a copy's bytes go: given every entry before any file is read, a place for each file's bytes
 * (of its planned size), so that they are read once, straight where they are sent from.
 */
export type CopyPlaces = (entries: readonly PlannedEntry[]) => { place(index: number): Uint8Array | undefined };

/** How long the copy reads synchronously before it lets other work run. */
const SLICE_MS = 10;

/**
 * Reads the folder for a copy, within the limits: first what is there (each name looked at without
 * following it; links read), then each file's bytes, into `places` when given. The reads are
 * synchronous system calls (hostFiles/syncReads.ts) in slices of about 10 ms with a turn of the
 * event loop between them.
 */
export async function readFolderCopy(folder: string, limits: CopyLimits, places?: CopyPlaces): Promise<FolderCopy> {
  const maxFiles = limits.maxFiles ?? DEFAULT_COPY_MAX_FILES;
  const candidates = await copyCandidates(folder);
  if (candidates.length > maxFiles) throw tooManyFiles(candidates.length, maxFiles);
  const host = await HostFolder.open(folder);
  const placed: Record<string, PlacedFile> = {};
  const baseline: CopyBaseline = { folder, copiedAt: new Date().toISOString(), files: {}, placed };
  const planned: PlannedEntry[] = [];
  /** The mtime of each link. */
  const links = new Map<string, number>();
  const skipped: string[] = [];
  const slices = new Slices();
  const dirs = new RunOfFolders(host);
  const hashes = new FileHashes();
  try {
    let total = 0;
    for (const path of candidates) {
      await slices.turn();
      const { dir, name } = dirs.of(path);
      const stats = dir && lstatEntrySync(dir, name);
      if (!dir || !stats) continue; // tracked but deleted in the work tree
      if (stats.isSymbolicLink()) {
        const target = readLinkSync(dir, name, path);
        if (!linkInside(path, target)) {
          skipped.push(`${path} (a link out of the folder)`);
          continue;
        }
        planned.push({ path, kind: 'symlink', size: Buffer.byteLength(target), linkTarget: target });
        links.set(path, stats.mtimeMs);
      } else if (stats.isFile()) {
        total += stats.size;
        planned.push({ path, kind: 'file', size: stats.size });
      } else if (!stats.isDirectory()) skipped.push(`${path} (not a regular file)`);
    }
    if (total > limits.maxBytes) throw tooManyBytes(total, limits.maxBytes);
    const into = places?.(planned);
    const files: CopiedFile[] = [];
    total = 0;
    for (const [index, entry] of planned.entries()) {
      if (await slices.turn()) hashes.send();
      const { path } = entry;
      if (entry.kind === 'symlink') {
        files.push({ path, kind: 'symlink', linkTarget: entry.linkTarget, mode: 0o777 });
        const target = entry.linkTarget!;
        const mtimeMs = links.get(path)!;
        baseline.files[path] = { size: entry.size, mtimeMs, sha256: sha256(target), kind: 'symlink', mode: 0o777 };
        continue;
      }
      const { dir, name } = dirs.of(path);
      const file = dir && readUnlessGone(host, dir, name, path, limits.maxBytes, into?.place(index));
      if (!file) continue; // gone since it was found
      total += file.data.length;
      if (total > limits.maxBytes) throw tooManyBytes(total, limits.maxBytes);
      const mode = file.stats.mode & 0o777;
      files.push({ path, kind: 'file', data: file.data, mode });
      const recorded = { size: file.data.length, mtimeMs: file.stats.mtimeMs, sha256: '', kind: 'file' as const, mode };
      baseline.files[path] = recorded;
      placed[path] = { sha256: '', blake2b: '', size: file.data.length, mode };
      hashes.add(file.data, (digests) => {
        recorded.sha256 = digests.sha256;
        Object.assign(placed[path]!, digests);
      });
    }
    await hashes.done();
    return { files, baseline, skipped };
  } finally {
    dirs.close();
    await hashes.close();
  }
}

/** Synchronous work in slices: turn() lets the event loop run once the slice has lasted SLICE_MS (and says so). */
class Slices {
  private started = performance.now();

  async turn(): Promise<boolean> {
    if (performance.now() - this.started < SLICE_MS) return false;
    await new Promise((resolve) => setImmediate(resolve));
    this.started = performance.now();
    return true;
  }
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
