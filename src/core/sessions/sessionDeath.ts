/** Why a session's container stopped or disappeared, in the user's words; engines that can tell report it. */
import { formatSize } from '../spec/units';

export type DeathReason =
  /** The kernel's OOM killer ended the container's main process (not just a command run in it). */
  | { kind: 'oom'; at: string; memoryBytes?: number }
  /** Ended by a signal; `fromOutside` when the engine was asked to send it (docker kill, docker stop). */
  | { kind: 'signal'; at: string; signal: string; fromOutside: boolean }
  | { kind: 'segfault'; at: string }
  | { kind: 'exit'; at: string; exitCode: number }
  /** Agent Sandbox stopped it itself, for the reason given. */
  | { kind: 'stopped'; at: string; why: string }
  /** It stopped while the engine was stopping or restarting. */
  | { kind: 'engine-stopped'; at: string }
  /** Removed by something other than this process: docker rm, or another Agent Sandbox window or command. */
  | { kind: 'removed'; at: string; before?: DeathReason }
  /** Closed by this process (sandbox_close, agent-sandbox close); never reported as a death. */
  | { kind: 'closed'; at: string };

export interface SessionDeath {
  /** The container id. */
  id: string;
  /** The session name, when the engine knows it. */
  name?: string;
  reason: DeathReason;
}

/** A clause that completes "The session NAME is no longer running: ...". */
export function describeDeath(reason: DeathReason): string {
  switch (reason.kind) {
    case 'oom':
      return `it ran out of memory${reason.memoryBytes ? ` (limit ${formatSize(reason.memoryBytes)})` : ''} and the kernel killed it at ${reason.at}`;
    case 'signal':
      return reason.fromOutside
        ? `it was killed (${reason.signal}) from outside Agent Sandbox (docker kill, docker stop or docker restart) at ${reason.at}`
        : `it was killed (${reason.signal}) at ${reason.at}`;
    case 'segfault':
      return `it crashed with a segmentation fault (SIGSEGV) at ${reason.at}`;
    case 'exit':
      return `it stopped with exit code ${reason.exitCode} at ${reason.at}`;
    case 'stopped':
      return `Agent Sandbox stopped it at ${reason.at} because ${reason.why}`;
    case 'engine-stopped':
      return `it stopped when the Docker Engine stopped or restarted, at ${reason.at}`;
    case 'removed':
      return `it was removed from outside (docker rm, or agent-sandbox close from another window or terminal) at ${reason.at}`;
    case 'closed':
      return `it was closed at ${reason.at}`;
  }
}
