/**
 * A session whose files fill its memory. Its writable places are tmpfs (writablePlaces.ts), whose
 * pages are charged to the container's memory and cannot be reclaimed: each place holds at most half
 * the memory limit, but two full ones leave nothing, and then every process is OOM-killed as it
 * starts, `rm` included (measured). That session can never recover by itself, so after an OOM kill
 * a trivial process is started: when it is killed too, the session is stopped with the reason.
 */
import type Docker from 'dockerode';
import { DISK_LIMIT_REACHED } from '../../core/limits/diskLimit';
import { formatSize } from '../../core/spec/units';
import { inspectContainer } from './engineCalls';
import { execInContainer } from './exec';

const PROBE_TIMEOUT_MS = 10_000;

/** Whether nothing can run in the container any more (`true` is OOM-killed, or cannot start while it still runs). */
export async function filesFillMemory(docker: Docker, container: Docker.Container, user: string): Promise<boolean> {
  try {
    const probe = await execInContainer({
      docker,
      container,
      argv: ['true'],
      user,
      cwd: '/',
      env: [],
      stdoutCap: 1024,
      stderrCap: 1024,
      timeoutMs: PROBE_TIMEOUT_MS,
    });
    return probe.exitCode === 137 || probe.unkillable;
  } catch {
    const state = await inspectContainer(container).then(
      (inspected) => inspected.State,
      () => undefined,
    );
    return state?.Running === true && !state.Paused;
  }
}

/** Completes "Agent Sandbox stopped it at ... because ...". */
export function filledMemoryBecause(memoryBytes: number): string {
  return `${DISK_LIMIT_REACHED}: the files in its writable places (/tmp, $HOME, /workspace, kept in memory) filled its ${formatSize(memoryBytes)} memory limit, so not even rm could run in it (raise limits.memory, or write less)`;
}
