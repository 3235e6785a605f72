/**
 * Which sandboxes nobody will clean up any more: those of a deleted workspace folder, and those of
 * a VS Code window that is gone (no sign of life within the grace period, and not kept on purpose).
 * Sessions the CLI opened belong to its user and are only removed with their folder; those an MCP
 * connection opened for itself belong to the server's process, like compute sandboxes. A copy
 * session with changes not applied to its folder is kept all the same (see copyHold.ts), unless
 * the folder is gone: nothing could be applied to it any more.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import type { SandboxEngine, SessionInfo } from '../engine/engine';
import type { Lease } from './leases';
import { NO_FOLDER } from './noFolder';
import { processAlive } from './processAlive';
import { holdOf, unappliedChanges, type HeldSession, type UnappliedChanges } from './copyHold';

export interface OrphanCheck {
  now: number;
  graceMs: number;
  lease(folder: string): Lease | undefined;
  folderExists(folder: string): boolean;
  /** This machine's name, to tell whether a compute sandbox's owner process can be checked here. */
  host?: string;
  processAlive?(pid: number): boolean;
}

/** A compute sandbox whose owner ran elsewhere is an orphan once older than the longest call (24 h) and then some. */
const FOREIGN_COMPUTE_MAX_AGE_MS = 25 * 3600_000;

/** Why a session is an orphan, or undefined when someone still owns it. */
export function orphanReason(session: SessionInfo, check: OrphanCheck): string | undefined {
  if (session.mode === 'compute') return computeOrphanReason(session, check);
  const folder = session.workspaceFolder;
  if (folder && folder !== NO_FOLDER && !check.folderExists(folder))
    return `its workspace folder ${folder} no longer exists`;
  if (session.owner) return processOrphanReason(session, session.owner, "an MCP connection's session", check);
  if (session.client !== 'vscode') return undefined;
  const lease = check.lease(folder ?? NO_FOLDER);
  if (lease?.keep) return undefined;
  const lastSign = lease?.seen ?? Date.parse(session.createdAt);
  if (check.now - lastSign <= check.graceMs) return undefined;
  return lease?.released ? 'its VS Code window closed and no window took it over' : 'its VS Code window is gone';
}

/** A compute sandbox (warm in a pool, or running) belongs to the process that made it, and to nobody after. */
function computeOrphanReason(session: SessionInfo, check: OrphanCheck): string | undefined {
  const waitsUntil = session.owner?.waitsUntil;
  if (waitsUntil !== undefined) {
    // It ends itself when its wait is over; one still there a minute later did not.
    const end = Date.parse(waitsUntil);
    return Number.isFinite(end) && check.now <= end + 60_000
      ? undefined
      : 'it is a shared warm container whose wait ended';
  }
  const what = session.owner?.pooled ? 'warm pool container' : 'compute sandbox';
  return processOrphanReason(session, session.owner, `a ${what}`, check);
}

/** A sandbox that belongs to a process: an orphan once that process is gone (or, made on another machine, after a day). */
function processOrphanReason(
  session: SessionInfo,
  owner: SessionInfo['owner'],
  what: string,
  check: OrphanCheck,
): string | undefined {
  if (owner && owner.host === (check.host ?? hostname())) {
    return (check.processAlive ?? processAlive)(owner.pid)
      ? undefined
      : `it is ${what} of process ${owner.pid}, which is gone`;
  }
  const age = check.now - Date.parse(session.createdAt);
  if (!(age > FOREIGN_COMPUTE_MAX_AGE_MS)) return undefined;
  return `it is ${what}${owner ? ` of ${owner.host}` : ''} left for more than a day`;
}

export interface RemovedOrphan {
  session: SessionInfo;
  reason: string;
}

/** Removes every orphan the engine holds (all folders, or one folder's and every compute sandbox's), and says which and why. */
export async function removeOrphans(
  engine: SandboxEngine,
  check: Omit<OrphanCheck, 'folderExists'> & {
    folderExists?: (folder: string) => boolean;
    onlyFolder?: string;
    /** An orphan kept for its unapplied changes. */
    onHeld?: (held: HeldSession) => void;
    unappliedChanges?: UnappliedChanges;
  },
  signal?: AbortSignal,
): Promise<RemovedOrphan[]> {
  const full: OrphanCheck = { folderExists: existsSync, ...check };
  const removed: RemovedOrphan[] = [];
  // Sandboxes that belong to a process (compute sandboxes, an MCP connection's sessions) are found
  // whichever folder gc runs in: a process killed mid-call leaves them behind.
  const all = await engine.list({ includeCompute: true }, signal);
  const sessions = check.onlyFolder
    ? all.filter(
        (session) => session.mode === 'compute' || session.owner || session.workspaceFolder === check.onlyFolder,
      )
    : all;
  for (const session of sessions) {
    const reason = orphanReason(session, full);
    if (!reason) continue;
    const folder = session.workspaceFolder;
    if (folder && full.folderExists(folder)) {
      const held = await holdOf(engine, session, check.unappliedChanges ?? unappliedChanges, { signal });
      if (held) {
        check.onHeld?.(held);
        continue;
      }
    }
    await engine.remove(session.id, signal);
    removed.push({ session, reason });
  }
  return removed;
}
