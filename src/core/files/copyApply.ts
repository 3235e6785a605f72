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
import { compareToBaseline, listSandboxFiles, type CopyChange } from './copyChanges';
import { saveBaseline, sha256, type CopyBaseline } from './folderCopy';
import { errnoOf, hostFileError, notRegularFile } from './hostFiles/hostFileError';
import { HostFolder } from './hostFiles/hostFolder';
import { pathNames, refuseProtected } from './hostFiles/hostPath';
import { readHostFile } from './hostFiles/readHostFile';
import { writeHostFile } from './hostFiles/writeHostFile';
import { WORKSPACE_DIR } from './paths';

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
  maxBytes: number;
  /** Where the baseline is kept (the state folder). */
  stateDir: string;
  signal?: AbortSignal;
}

function selected(path: string, paths: readonly string[] | undefined): boolean {
  if (!paths?.length) return true;
  return paths.some((wanted) => {
    const clean = wanted.replace(/^\.?\/+/, '').replace(/\/+$/, '');
    return clean === '' || path === clean || path.startsWith(`${clean}/`);
  });
}

/** Why a change needs the user's own confirmation, if it does. */
export function holdReason(change: CopyChange, baseline: CopyBaseline): string | undefined {
  if (isProtectedPath(change.path, PROTECTED_PATHS)) return 'editor or version-control configuration';
  const oldMode = baseline.files[change.path]?.mode ?? 0;
  if (change.change !== 'deleted' && ((change.newMode ?? 0) & 0o111) !== 0 && (oldMode & 0o111) === 0)
    return 'gains an executable bit';
  return undefined;
}

/** The host's file at `path` now: its sha256, or undefined when there is nothing there. */
async function hostState(folder: string, path: string, maxBytes: number): Promise<string | undefined> {
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
async function deleteHostFile(folder: string, path: string): Promise<void> {
  const names = pathNames(path);
  refuseProtected(names, [], 'Deleting');
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

export async function applyCopyChanges(
  sandbox: Sandbox,
  baseline: CopyBaseline,
  options: ApplyOptions,
): Promise<ApplyOutcome> {
  const current = await listSandboxFiles(sandbox, options.signal);
  const changes = compareToBaseline(baseline, current).filter((change) => selected(change.path, options.paths));
  const outcome: ApplyOutcome = { applied: [], heldBack: [], conflicts: [] };
  const folder = baseline.folder;
  for (const change of changes) {
    const now = current.get(change.path);
    const before = baseline.files[change.path];
    if (now?.kind === 'symlink' || before?.kind === 'symlink') {
      outcome.heldBack.push({ path: change.path, why: 'a link (links are not applied yet)' });
      continue;
    }
    const reason = holdReason(change, baseline);
    if (reason && !options.includeProtected) {
      outcome.heldBack.push({ path: change.path, why: reason });
      continue;
    }
    const host = await hostState(folder, change.path, options.maxBytes);
    if (host !== before?.sha256) {
      outcome.conflicts.push(change.path);
      continue;
    }
    if (change.change === 'deleted') {
      await deleteHostFile(folder, change.path);
      delete baseline.files[change.path];
    } else {
      const content = await sandbox.readFile(
        `${WORKSPACE_DIR}/${change.path}`,
        { encoding: 'base64', maxBytes: options.maxBytes },
        options.signal,
      );
      const data = Buffer.from(content.content, 'base64');
      if (sha256(data) !== now!.sha256) {
        outcome.conflicts.push(change.path); // changed in the sandbox while applying
        continue;
      }
      const mode = (now!.mode ?? 0o644) & 0o777;
      await writeHostFile(folder, change.path, data, {
        overwrite: true,
        protectedPaths: options.includeProtected ? [] : PROTECTED_PATHS,
        mode,
      });
      baseline.files[change.path] = { kind: 'file', size: data.length, sha256: now!.sha256, mtimeMs: Date.now(), mode };
    }
    outcome.applied.push(change);
  }
  if (outcome.applied.length) await saveBaseline(options.stateDir, sandbox.info.id, baseline);
  return outcome;
}
