/**
 * Closing sessions nobody closed: those idle or open past their lifetime (collectSessions), and the
 * least recently used when a new one would pass the maximum (makeRoom). A copy session with
 * unapplied changes is never closed this way (`held`).
 */
import type { SessionInfo } from '../engine/engine';
import type { Settings } from '../spec/settings';
import { sandboxIdOf } from './sessions';

export interface Collected {
  session: SessionInfo;
  reason: 'idle' | 'lifetime' | 'room';
}

/** What collection uses of the service. */
export interface CollectionDeps {
  settings(): Settings;
  now(): number;
  /** The sessions this client manages in this workspace. */
  managed(signal?: AbortSignal): Promise<SessionInfo[]>;
  /** When a call last used it in this process; one seen for the first time counts as used now. */
  lastUsedOrNow(session: SessionInfo, now: number): number;
  /** Whether it must stay open (a copy with unapplied changes); says why in the log once. */
  held(session: SessionInfo, signal?: AbortSignal): Promise<boolean>;
  /** Removes its container and forgets it. */
  close(session: SessionInfo, signal?: AbortSignal): Promise<void>;
  log(level: 'info' | 'warn', message: string): void;
}

export async function collectSessions(deps: CollectionDeps, signal?: AbortSignal): Promise<Collected[]> {
  const { sessions: lifecycle } = deps.settings();
  const now = deps.now();
  const collected: Collected[] = [];
  for (const session of await deps.managed(signal)) {
    const lastUsed = deps.lastUsedOrNow(session, now);
    const age = now - Date.parse(session.createdAt);
    let reason: Collected['reason'] | undefined;
    if (lifecycle.maxLifetimeMinutes > 0 && age > lifecycle.maxLifetimeMinutes * 60_000) reason = 'lifetime';
    else if (lifecycle.idleTimeoutMinutes > 0 && now - lastUsed > lifecycle.idleTimeoutMinutes * 60_000)
      reason = 'idle';
    if (!reason || (await deps.held(session, signal))) continue;
    await deps.close(session, signal);
    deps.log(
      'info',
      `Closed session ${sandboxIdOf(session)}: ${reason === 'idle' ? `unused for ${lifecycle.idleTimeoutMinutes} min` : `open for ${lifecycle.maxLifetimeMinutes} min, its maximum lifetime`} (settings agentSandbox.sessions.*).`,
    );
    collected.push({ session, reason });
  }
  return collected;
}

export async function makeRoom(deps: CollectionDeps, signal?: AbortSignal): Promise<void> {
  const { maxSessions } = deps.settings().sessions;
  const live = (await deps.managed(signal)).filter((session) => session.state === 'running');
  const now = deps.now();
  live.sort((a, b) => deps.lastUsedOrNow(a, now) - deps.lastUsedOrNow(b, now));
  let open = live.length;
  for (const oldest of live) {
    if (open < maxSessions) break;
    if (await deps.held(oldest, signal)) continue;
    open--;
    await deps.close(oldest, signal);
    deps.log(
      'warn',
      `Closed session ${sandboxIdOf(oldest)}, the least recently used, to make room: at most ${maxSessions} sessions may be open (setting agentSandbox.sessions.maxSessions).`,
    );
  }
  if (open >= maxSessions)
    deps.log(
      'warn',
      `Opening a session beyond the maximum of ${maxSessions} (setting agentSandbox.sessions.maxSessions): the others are kept open for their unapplied changes.`,
    );
}
