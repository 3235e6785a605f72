/**
 * OOM kills counted by the kernel, for engines that do not report them as events. Docker sends an
 * 'oom' event for any process of a container the kernel kills for memory; Podman (up to 5.x) for none
 * run by exec. The container's memory cgroup counts them all: `oom_kill` in memory.events (cgroup v2)
 * or memory.oom_control (v1), both readable from inside as the sandbox user.
 */
import type Docker from 'dockerode';
import { execInContainer } from './exec';

const READ = 'cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null; true';

/** The kernel's count of OOM kills in the container so far, or undefined when it cannot be read. */
export async function oomKillCount(
  docker: Docker,
  container: Docker.Container,
  user: string,
): Promise<number | undefined> {
  const outcome = await execInContainer({
    docker,
    container,
    argv: ['sh', '-c', READ],
    user,
    cwd: '/',
    env: [],
    stdoutCap: 4096,
    stderrCap: 1024,
    timeoutMs: 10_000,
  }).catch(() => undefined);
  return outcome?.exitCode === 0 ? parseOomKills(outcome.stdout.text('stdout')) : undefined;
}

/** `oom_kill N` from memory.events or memory.oom_control. */
export function parseOomKills(text: string): number | undefined {
  const match = /^oom_kill (\d+)$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

/**
 * Whether the count grew since this process last read it for the container. The first reading has
 * nothing to compare with and counts any kill: one from before this process looked is taken for this one.
 */
export class OomKillCounts {
  private readonly seen = new Map<string, number>();

  grew(containerId: string, count: number | undefined): boolean {
    if (count === undefined) return false;
    const before = this.seen.get(containerId) ?? 0;
    this.seen.set(containerId, count);
    if (this.seen.size > 500) this.seen.delete(this.seen.keys().next().value!);
    return count > before;
  }
}
