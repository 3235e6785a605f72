/**
 * Discarding a copy session's changes: the sandbox's file is put back as the folder has it now (an
 * added file is removed), so the change no longer shows. The folder is only read, through the
 * confined read; the baseline follows the folder's file.
 */
import type { Sandbox } from '../engine/engine';
import { pathSelected } from './copyApply';
import { compareToBaseline, type CopyChange } from './copyChanges';
import { listSandboxFiles } from './copyListing';
import { saveBaseline, sha256, type CopyBaseline } from './folderCopy';
import { errnoOf } from './hostFiles/hostFileError';
import { isPlainRelativePath } from './hostFiles/hostPath';
import { readHostFile } from './hostFiles/readHostFile';
import { WORKSPACE_DIR } from './paths';

export interface DiscardOutcome {
  discarded: CopyChange[];
  /** Each with why (a link). */
  kept: { path: string; why: string }[];
}

export interface DiscardOptions {
  /** Paths (or folders) to discard; every change when empty. */
  paths?: readonly string[];
  maxBytes: number;
  stateDir: string;
  signal?: AbortSignal;
}

/** The folder's regular file at `path` now, or undefined when it has none. */
async function hostFile(folder: string, path: string, maxBytes: number): Promise<Uint8Array | undefined> {
  try {
    return await readHostFile(folder, path, maxBytes);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw error;
  }
}

export async function discardCopyChanges(
  sandbox: Sandbox,
  baseline: CopyBaseline,
  options: DiscardOptions,
): Promise<DiscardOutcome> {
  const current = await listSandboxFiles(sandbox, options.signal, baseline);
  const changes = compareToBaseline(baseline, current).filter((change) => pathSelected(change.path, options.paths));
  const outcome: DiscardOutcome = { discarded: [], kept: [] };
  try {
    for (const change of changes) {
      const { path } = change;
      if (!isPlainRelativePath(path)) {
        outcome.kept.push({ path, why: 'not a plain path inside the folder' });
        continue;
      }
      if (current.get(path)?.kind === 'symlink' || baseline.files[path]?.kind === 'symlink') {
        outcome.kept.push({ path, why: 'a link (links are not discarded yet)' });
        continue;
      }
      const inSandbox = `${WORKSPACE_DIR}/${path}`;
      const host = change.change === 'added' ? undefined : await hostFile(baseline.folder, path, options.maxBytes);
      if (host === undefined) {
        if (change.change !== 'deleted') await sandbox.deletePath(inSandbox, {}, options.signal);
        delete baseline.files[path];
      } else {
        const mode = (baseline.files[path]?.mode ?? 0o644) & 0o777;
        await sandbox.writeFiles(
          [{ path: inSandbox, content: Buffer.from(host).toString('base64'), encoding: 'base64', mode }],
          options.signal,
        );
        baseline.files[path] = { kind: 'file', size: host.length, sha256: sha256(host), mtimeMs: Date.now(), mode };
      }
      outcome.discarded.push(change);
    }
  } finally {
    if (outcome.discarded.length) await saveBaseline(options.stateDir, sandbox.info.id, baseline);
  }
  return outcome;
}
