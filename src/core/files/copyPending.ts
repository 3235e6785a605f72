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
import { displayName } from '../results/displayName';

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

/** "3 changes (1 added, 2 modified, 0 deleted)". */
export function changeCounts(changes: readonly CopyChange[]): string {
  const count = (kind: CopyChange['change']) => changes.filter((change) => change.change === kind).length;
  const total = changes.length === 1 ? '1 change' : `${changes.length.toLocaleString('en-US')} changes`;
  return `${total} (${count('added')} added, ${count('modified')} modified, ${count('deleted')} deleted)`;
}

/** The first few changes, "modified README.md, added src/new.py and 4 more". */
export function someChanges(changes: readonly CopyChange[], max = 5): string {
  // Names come from the sandbox: one with a newline or terminal escapes is shown quoted.
  const shown = changes.slice(0, max).map((change) => `${change.change} ${displayName(change.path)}`);
  const more = changes.length - shown.length;
  if (more > 0) return `${shown.join(', ')} and ${more.toLocaleString('en-US')} more`;
  return shown.length > 1 ? `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}` : (shown[0] ?? '');
}
