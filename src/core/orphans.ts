/**
 * Which sandboxes nobody will clean up any more: those of a deleted workspace folder, and those of
 * a VS Code window that is gone (no sign of life within the grace period, and not kept on purpose).
 * Sessions the CLI opened belong to its user and are only removed with their folder.
 */
import { existsSync } from 'node:fs';
import type { SandboxEngine, SessionInfo } from './engine';
import type { Lease } from './leases';
import { NO_FOLDER } from './sandboxService';

export interface OrphanCheck {
  now: number;
  graceMs: number;
  lease(folder: string): Lease | undefined;
  folderExists(folder: string): boolean;
}

/** Why a session is an orphan, or undefined when someone still owns it. */
export function orphanReason(session: SessionInfo, check: OrphanCheck): string | undefined {
  const folder = session.workspaceFolder;
  if (folder && folder !== NO_FOLDER && !check.folderExists(folder)) return `its workspace folder ${folder} no longer exists`;
  if (session.client !== 'vscode') return undefined;
  const lease = check.lease(folder ?? NO_FOLDER);
  if (lease?.keep) return undefined;
  const lastSign = lease?.seen ?? Date.parse(session.createdAt);
  if (check.now - lastSign <= check.graceMs) return undefined;
  return lease?.released ? 'its VS Code window closed and no window took it over' : 'its VS Code window is gone';
}

export interface RemovedOrphan {
  session: SessionInfo;
  reason: string;
}

/** Removes every orphan the engine holds (all folders), and says which and why. */
export async function removeOrphans(engine: SandboxEngine, check: Omit<OrphanCheck, 'folderExists'> & { folderExists?: (folder: string) => boolean; onlyFolder?: string }, signal?: AbortSignal): Promise<RemovedOrphan[]> {
  const full: OrphanCheck = { folderExists: existsSync, ...check };
  const removed: RemovedOrphan[] = [];
  for (const session of await engine.list(check.onlyFolder ? { workspaceFolder: check.onlyFolder } : {}, signal)) {
    const reason = orphanReason(session, full);
    if (!reason) continue;
    await engine.remove(session.id, signal);
    removed.push({ session, reason });
  }
  return removed;
}
