/**
 * `agent-sandbox warm-fill [--engine-host HOST]`: tops up the shared warm containers of one compute
 * configuration (engines/docker/sharedPool.ts), from the request on stdin. Started detached by a
 * command that claimed one (or found none), so that the next command finds one waiting; not for
 * people. Prints nothing; always exits 0.
 */
import { defaultStateDir } from '../core/sessions/leases';
import { DockerEngine } from '../engines/docker/dockerEngine';

/** A request is a few kilobytes (the create request with its seccomp profile); anything far larger is not one. */
const MAX_REQUEST_BYTES = 1 << 20;

export async function warmFill(argv: readonly string[], signal: AbortSignal): Promise<number> {
  const [flag, host] = argv;
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.length > MAX_REQUEST_BYTES) return 0;
  }
  const engine = new DockerEngine({ host: flag === '--engine-host' ? host : undefined, poolSize: 0 });
  try {
    await engine.fillSharedPool(JSON.parse(text), defaultStateDir(), signal);
  } catch {
    // No engine, a bad request, or a fill that failed: the next command makes its own container.
  } finally {
    await engine.dispose().catch(() => undefined);
  }
  return 0;
}
