/**
 * The connections an allowlist proxy has under way, as a file in its folder, so that a tool call can
 * wait for its own connections' decisions. The proxy records a connection when it ends (a refusal at
 * once), in its own process on this machine, while the program in the sandbox may finish first: the
 * end of a tunnel reaches the proxy through the relay, another process, and on a loaded machine
 * either may run late. A call that read the log at once would miss the decisions it made.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const UNDER_WAY_FILE = 'underway.json';
/** How long a call waits at most for its connections to end (one held open stays out of its result). */
export const SETTLE_MS = 1000;
const POLL_MS = 10;

/** Writes when each connection under way began (ms since the epoch), whole or not at all. */
export function writeUnderWay(dir: string, startedAt: readonly number[]): void {
  const file = join(dir, UNDER_WAY_FILE);
  writeFileSync(`${file}.tmp`, JSON.stringify(startedAt), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

/** When each connection under way began; none when the file is missing or unreadable (no proxy serves). */
export function readUnderWay(dir: string): number[] {
  try {
    const parsed: unknown = JSON.parse(readFileSync(join(dir, UNDER_WAY_FILE), 'utf8'));
    return Array.isArray(parsed) ? parsed.filter((value): value is number => typeof value === 'number') : [];
  } catch {
    return [];
  }
}

/**
 * Resolves once no connection begun at or after `since` is under way (they are all in the log), or
 * after `boundMs`, or as soon as `serving()` says no proxy process serves the folder any more.
 */
export async function connectionsSettled(
  dir: string,
  since: number,
  serving: () => boolean,
  boundMs = SETTLE_MS,
): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (readUnderWay(dir).some((began) => began >= since) && serving() && Date.now() < deadline) await sleep(POLL_MS);
}
