// After the extension host is gone: the compute sandboxes it had started (its warm pool) must remove
// themselves, with no window left to clean up (issue 24 item 4). Returns the names still there.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** The process a compute sandbox belongs to: its label's, or for a claimed shared warm one, the pid its name ends with. */
function ownerPid(container) {
  const claimed = (container.Names ?? []).map((name) => /-by-(\d+)$/.exec(name)).find(Boolean);
  return Number(container.Labels['org.agent-sandbox.owner-pid'] ?? claimed?.[1]);
}

/** Compute sandboxes created since `since` (ISO) whose owner process is gone, after waiting up to `waitMs`. */
export async function computeLeftovers(since, waitMs = 30_000) {
  const Docker = require('dockerode');
  const docker = new Docker(process.env.DOCKER_HOST ? undefined : { socketPath: '/var/run/docker.sock' });
  const end = Date.now() + waitMs;
  for (;;) {
    const left = (
      await docker.listContainers({ all: true, filters: { label: ['org.agent-sandbox.mode=compute'] } })
    ).filter(
      (container) =>
        (container.Labels['org.agent-sandbox.created'] ?? '') >= since &&
        !alive(ownerPid(container)) &&
        // A CLI's shared warm container still waiting to be claimed belongs to no process: it ends by itself.
        !(container.Labels['org.agent-sandbox.warm'] && Number.isNaN(ownerPid(container))),
    );
    if (!left.length || Date.now() > end) return left.map((container) => `${container.Names[0]} (${container.State})`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
