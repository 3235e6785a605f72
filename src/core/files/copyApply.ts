/**
 * Applying a copy session's changes to the user's folder, through the confined host-write path
 * (writeHostFile: no link followed, atomic). Held back unless the user includes them: editor and
 * version-control configuration (.git, .vscode, .github, .devcontainer) and files that gain an
 * executable bit. A file changed on the host since the copy is a conflict and is never overwritten.
 * What was applied moves into the baseline, so the next diff no longer shows it.
 */
import { lstat, unlink } from 'node:fs/promises';
import type { Sandbox } from '../engine/engine';
import { PROTECTED_PATHS, isProtectedPath } from '../policy/protectedPaths';
import { compareToBaseline, type CopyChange } from './copyChanges';
import { listSandboxFiles } from './copyListing';
import { reviewDigest } from './copyDiff';
import { SandboxError } from '../errors';
import { saveBaseline, sha256, type CopyBaseline } from './folderCopy';
import { errnoOf, hostFileError, notRegularFile } from './hostFiles/hostFileError';
import { HostFolder } from './hostFiles/hostFolder';
import { isPlainRelativePath, pathNames, refuseProtected } from './hostFiles/hostPath';
import { readHostFile } from './hostFiles/readHostFile';
import { writeHostFile } from './hostFiles/writeHostFile';
import { WORKSPACE_DIR } from './paths';
import { readWholeSandboxFile } from './sandboxFileBytes';

export interface ApplyOutcome {
  applied: CopyChange[];
  /** Each with why: protected, an executable bit, a link. */
  heldBack: { path: string; why: string }[];
  /** Changed on the host since the copy: left as they are on both sides. */
  conflicts: string[];
}

export interface ApplyOptions {
  /** Paths (or folders) to apply; every change when empty. */
  paths?: readonly string[];
  /** Apply protected paths and files that gain an executable bit too. */
  includeProtected?: boolean;
  /**
   * What the user reviewed: path → the sandbox file's sha256 as shown (null for a deletion). When
   * given, a change that is not there, or differs from it, is held back: the agent changed it since.
   */
  reviewed?: ReadonlyMap<string, string | null>;
  /**
   * The digest `agent-sandbox diff` printed (reviewDigest): when the session's changes now have
   * another, nothing is applied.
   */
  expectDigest?: string;
  maxBytes: number;
  /** Where the baseline is kept (the state folder). */
  stateDir: string;
  signal?: AbortSignal;
}

/** Whether `path` is one of `paths` or under one of them (every path when none are given). */
export function pathSelected(path: string, paths: readonly string[] | undefined): boolean {
  if (!paths?.length) return true;
  return paths.some((wanted) => {
    const clean = wanted.replace(/^\.?\/+/, '').replace(/\/+$/, '');
    return clean === '' || path === clean || path.startsWith(`${clean}/`);
  });
}

/**
 * Why a change needs the user's own confirmation, if it does. A `.git` at any depth counts too: a
 * nested repository's config (core.fsmonitor, hooks) runs when VS Code's git looks into subfolders.
 * The copy never holds a `.git` and its list never shows one, so such a name comes from a forged list.
 */
export function holdReason(change: CopyChange, baseline: CopyBaseline): string | undefined {
  if (
    isProtectedPath(change.path, PROTECTED_PATHS) ||
    change.path.split('/').some((name) => name.toLowerCase() === '.git')
  )
    return 'editor or version-control configuration';
  const oldMode = baseline.files[change.path]?.mode ?? 0;
  if (change.change !== 'deleted' && ((change.newMode ?? 0) & 0o111) !== 0 && (oldMode & 0o111) === 0)
    return 'gains an executable bit';
  return undefined;
}

/** The host's file at `path` now: its sha256, or undefined when there is nothing there. */
export async function hostState(folder: string, path: string, maxBytes: number): Promise<string | undefined> {
  try {
    return sha256(await readHostFile(folder, path, maxBytes));
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') {
      // Nothing, or something that is not a regular file (a link): only nothing counts as absent.
      const names = pathNames(path);
      const there = await lstat(`${folder}/${names.join('/')}`).catch(() => undefined);
      return there ? 'not-a-file' : undefined;
    }
    return 'unreadable';
  }
}

/** Removes the regular file at `path`, its folder opened without following links. */
async function deleteHostFile(folder: string, path: string, includeProtected: boolean): Promise<void> {
  const names = pathNames(path);
  refuseProtected(names, includeProtected ? [] : PROTECTED_PATHS, 'Deleting');
  const host = await HostFolder.open(folder);
  const dir = await host.openDir(names.slice(0, -1), path);
  try {
    const name = names[names.length - 1]!;
    const stats = await lstat(dir.entry(name)).catch((error: unknown) => Promise.reject(hostFileError(error, path)));
    if (!stats.isFile()) throw notRegularFile(path);
    await unlink(dir.entry(name)).catch((error: unknown) => Promise.reject(hostFileError(error, path)));
  } finally {
    await dir.close();
  }
}

/** A change cleared to apply: its new bytes (read from the sandbox once) and mode. */
export interface ReadyChange {
  change: CopyChange;
  /** The sandbox's bytes, for an added or modified file. */
  data?: Uint8Array;
  mode?: number;
  sha256?: string;
}

export interface ApplyPlan {
  ready: ReadyChange[];
  heldBack: { path: string; why: string }[];
  conflicts: string[];
}

/**
 * Which of a copy session's changes may be applied now, each with the bytes to write: links and
 * (without includeProtected) protected paths are held back; a file changed on the host since the
 * copy, or in the sandbox while it was read, is a conflict. Nothing is written.
 */
export async function planApply(
  sandbox: Sandbox,
  baseline: CopyBaseline,
  options: Omit<ApplyOptions, 'stateDir'>,
): Promise<ApplyPlan> {
  const current = await listSandboxFiles(sandbox, options.signal, baseline);
  const all = compareToBaseline(baseline, current);
  if (options.expectDigest !== undefined) {
    const now = reviewDigest(
      all.map((change) => ({
        path: change.path,
        change: change.change,
        ...(change.change !== 'deleted' ? { sha256: current.get(change.path)?.sha256 } : {}),
      })),
    );
    if (now !== options.expectDigest)
      throw new SandboxError(
        'invalid-input',
        `The session's changes are not the ones reviewed: the diff had digest ${options.expectDigest}, they now have ${now}. Nothing was applied.`,
        'Run agent-sandbox diff again, look at it, and apply with the --expect value it prints.',
      );
  }
  const changes = all.filter((change) => pathSelected(change.path, options.paths));
  const plan: ApplyPlan = { ready: [], heldBack: [], conflicts: [] };
  for (const change of changes) {
    const now = current.get(change.path);
    const before = baseline.files[change.path];
    // The listing comes from inside the sandbox: a name that is not plainly inside the folder is never used.
    if (!isPlainRelativePath(change.path)) {
      plan.heldBack.push({ path: change.path, why: 'not a plain path inside the folder' });
      continue;
    }
    if (options.reviewed && options.reviewed.get(change.path) !== (change.change === 'deleted' ? null : now?.sha256)) {
      plan.heldBack.push({ path: change.path, why: 'changed in the sandbox since it was reviewed: look at it again' });
      continue;
    }
    if (now?.kind === 'symlink' || before?.kind === 'symlink') {
      plan.heldBack.push({ path: change.path, why: 'a link (links are not applied yet)' });
      continue;
    }
    const reason = holdReason(change, baseline);
    if (reason && !options.includeProtected) {
      plan.heldBack.push({ path: change.path, why: reason });
      continue;
    }
    if ((await hostState(baseline.folder, change.path, options.maxBytes)) !== before?.sha256) {
      plan.conflicts.push(change.path);
      continue;
    }
    if (change.change === 'deleted') {
      plan.ready.push({ change });
      continue;
    }
    const data = await readWholeSandboxFile(sandbox, `${WORKSPACE_DIR}/${change.path}`, {
      maxBytes: options.maxBytes,
      signal: options.signal,
    });
    if (sha256(data) !== now!.sha256) {
      plan.conflicts.push(change.path); // changed in the sandbox while it was read
      continue;
    }
    plan.ready.push({ change, data, mode: appliedMode(now!.mode, before?.mode), sha256: now!.sha256 });
  }
  return plan;
}

/**
 * The mode a file is written with: the owner's bits as the sandbox has them (a new executable bit is
 * held back above), but group and other get no bit the folder's file did not have (a new file: no
 * write), so the sandbox cannot make a file world-writable or widen a private one. Never setuid or setgid.
 */
export function appliedMode(sandboxMode = 0o644, folderMode?: number): number {
  const others = folderMode === undefined ? 0o055 : folderMode & 0o077;
  return (sandboxMode & 0o700) | (sandboxMode & others);
}

/** Writes one ready change into the folder through the confined host-write path. */
export async function writeReadyChange(folder: string, ready: ReadyChange, includeProtected: boolean): Promise<void> {
  if (ready.change.change === 'deleted') {
    await deleteHostFile(folder, ready.change.path, includeProtected);
    return;
  }
  await writeHostFile(folder, ready.change.path, ready.data!, {
    overwrite: true,
    protectedPaths: includeProtected ? [] : PROTECTED_PATHS,
    mode: ready.mode,
  });
}

/** What was applied becomes the baseline: the next diff no longer shows it. */
export function recordApplied(baseline: CopyBaseline, ready: ReadyChange): void {
  const { path } = ready.change;
  if (ready.change.change === 'deleted') delete baseline.files[path];
  else
    baseline.files[path] = {
      kind: 'file',
      size: ready.data!.length,
      sha256: ready.sha256!,
      mtimeMs: Date.now(),
      mode: ready.mode ?? 0o644,
    };
}

export async function applyCopyChanges(
  sandbox: Sandbox,
  baseline: CopyBaseline,
  options: ApplyOptions,
): Promise<ApplyOutcome> {
  const plan = await planApply(sandbox, baseline, options);
  const outcome: ApplyOutcome = { applied: [], heldBack: plan.heldBack, conflicts: plan.conflicts };
  try {
    for (const ready of plan.ready) {
      await writeReadyChange(baseline.folder, ready, Boolean(options.includeProtected));
      recordApplied(baseline, ready);
      outcome.applied.push(ready.change);
    }
  } finally {
    if (outcome.applied.length) await saveBaseline(options.stateDir, sandbox.info.id, baseline);
  }
  return outcome;
}
