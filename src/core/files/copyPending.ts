/**
 * What a `copy` session still holds for the user: its changes that were neither applied to the
 * folder nor discarded, from one listing of the sandbox's /workspace against the baseline kept at
 * the copy. Closing the session would lose them.
 */
import type { Sandbox, SessionInfo } from '../engine/engine';
import { SandboxError } from '../errors';
import { sandboxIdOf } from '../sessions/sessions';
import { compareToBaseline, type CopyChange } from './copyChanges';
import { listSandboxFiles } from './copyListing';
import { baselinePath, loadBaseline, type CopyBaseline } from './folderCopy';

/** The baseline of a copy session's copy; a clear error when its record is missing. */
export async function requireBaseline(info: SessionInfo, stateDir: string): Promise<CopyBaseline> {
  const baseline = await loadBaseline(stateDir, info.id);
  if (baseline) return baseline;
  const id = sandboxIdOf(info);
  throw new SandboxError(
    'file-not-found',
    `The record of what was copied into session "${id}" is missing (${baselinePath(stateDir, info.id)}), so its changes cannot be compared with the folder.`,
    `Copy out of its /workspace what is worth keeping, then close it losing the rest (agent-sandbox close --session ${id} --discard) and open it again to copy the folder afresh.`,
  );
}

/** A copy session's unapplied changes, by path; none for the other workspace access modes. */
export async function pendingCopyChanges(
  sandbox: Sandbox,
  stateDir: string,
  signal?: AbortSignal,
): Promise<CopyChange[]> {
  if (sandbox.info.workspaceAccess !== 'copy') return [];
  const baseline = await requireBaseline(sandbox.info, stateDir);
  return compareToBaseline(baseline, await listSandboxFiles(sandbox, signal, baseline));
}

export { changeCounts, someChanges } from './copySummary';
