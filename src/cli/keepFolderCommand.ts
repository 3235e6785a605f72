/**
 * `agent-sandbox keep-folder ID [--engine-host HOST]`: the folder keeper of a read-write session
 * (core/sessions/folderKeeper.ts). Started detached by whoever opens or uses such a session; not for people.
 * Watches the session's workspace folder against its disk and inode limits from the baseline kept in
 * the container's labels, stops the session past them (writing down why for every other process),
 * and ends when the session stops or is removed. Prints nothing; always exits 0.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { claimKeeper } from '../core/sessions/folderKeeper';
import { DockerEngine } from '../engines/docker/dockerEngine';

/** How often the keeper asks whether its session still runs. */
const POLL_MS = 3000;
/** An engine that has not answered for ten minutes: the keeper ends (the next command starts one again). */
const GIVE_UP_AFTER = (10 * 60_000) / POLL_MS;

export async function keepFolder(argv: readonly string[], signal: AbortSignal): Promise<number> {
  const [id, flag, host] = argv;
  if (!id || !/^[0-9a-f]{12,64}$/.test(id)) return 0;
  const release = claimKeeper(id);
  if (!release) return 0; // a living keeper holds it already
  const engine = new DockerEngine({ host: flag === '--engine-host' ? host : undefined });
  try {
    // Attaching starts the watch: from the labels' baseline, with a first look at once.
    await engine.attach(id, signal);
    let unanswered = 0;
    while (!signal.aborted && unanswered < GIVE_UP_AFTER) {
      await sleep(POLL_MS, undefined, { signal }).catch(() => undefined);
      const state = await engine.docker
        .getContainer(id)
        .inspect()
        .then(
          (inspected) => (inspected.State.Running ? 'running' : 'stopped'),
          (error: { statusCode?: number }) => (error.statusCode === 404 ? 'gone' : 'unknown'),
        );
      if (state === 'stopped' || state === 'gone') break;
      unanswered = state === 'unknown' ? unanswered + 1 : 0;
    }
  } catch {
    // Not running, not ours, or no engine: nothing to keep.
  } finally {
    release();
    await engine.dispose().catch(() => undefined);
  }
  return 0;
}
