/**
 * Belt and braces behind the seccomp profile (seccompProfile.ts): when a read-write session is
 * removed, any regular file in /workspace that got a setuid or setgid bit during the session loses
 * it, from inside the container as the sandbox user, and the removal says which. Only files changed
 * since the session started (their ctime, which no program can set back) are touched, so the user's
 * own older setuid files stay as they are. Directories are left to the profile alone: on them the
 * bits grant nothing (setgid only passes the group on, and the kernel sets it itself in a setgid
 * parent), and a directory's ctime moves with every entry made in it, so it cannot tell whose a bit is.
 */
import type Docker from 'dockerode';
import { execInContainer } from './exec';
import type { ContainerInspect } from './engineJson';
import { LABEL } from './labels';

/** Args: the session's start in seconds since the epoch. Stdout: the changed paths, relative, NUL-terminated. */
export const SWEEP_SCRIPT = [
  'find /workspace -xdev -type f -perm /6000 -newerct "@$1" -exec sh -c \'',
  'for p do chmod u-s,g-s -- "$p" && printf "%s\\0" "${p#/workspace/}"; done',
  "' sh {} + 2>/dev/null",
  'exit 0',
].join('\n');

const SWEEP_TIMEOUT_MS = 30_000;
const LISTED = 20;

/** Strips setuid/setgid bits set since `since` under /workspace; returns a notice when there were any. */
export async function sweepSetuidBits(
  docker: Docker,
  container: Docker.Container,
  user: string,
  since: Date,
): Promise<string | undefined> {
  const seconds = Math.floor(since.getTime() / 1000);
  if (!Number.isFinite(seconds)) return undefined;
  const outcome = await execInContainer({
    docker,
    container,
    argv: ['sh', '-c', SWEEP_SCRIPT, 'sh', String(seconds)],
    user,
    cwd: '/',
    env: [],
    stdoutCap: 256 * 1024,
    stderrCap: 4096,
    timeoutMs: SWEEP_TIMEOUT_MS,
  });
  const paths = Buffer.from(outcome.stdout.bytes()).toString('utf8').split('\0').filter(Boolean);
  if (paths.length === 0) return undefined;
  const shown = paths.slice(0, LISTED).map(printable).join(', ');
  const more = paths.length > LISTED ? ` and ${paths.length - LISTED} more` : '';
  return `The setuid/setgid bit was removed from ${paths.length} file(s) in the workspace that got it during the session: ${shown}${more}.`;
}

/** A path as one safe line: control characters (a newline in a name could forge text) shown as escapes. */
function printable(path: string): string {
  return JSON.stringify(path)
    .slice(1, -1)
    .replace(
      /[\u007f-\u009f\u200b-\u200f\u2028\u2029]/g,
      (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
}

/** The sweep for a container about to be removed: only a running read-write session has a workspace to sweep. */
export async function sweepBeforeRemoval(
  docker: Docker,
  container: Docker.Container,
  inspected: ContainerInspect,
): Promise<string[]> {
  const labels = inspected.Config.Labels;
  if (!inspected.State.Running || !readWrite(labels[LABEL.spec])) return [];
  const notice = await sweepSetuidBits(
    docker,
    container,
    labels[LABEL.user] ?? '1000:1000',
    new Date(labels[LABEL.created] ?? inspected.Created ?? 0),
  );
  return notice ? [notice] : [];
}

/** Read leniently (not through the whole spec schema): a label that an older version wrote still gets its sweep. */
function readWrite(spec: string | undefined): boolean {
  try {
    return (JSON.parse(spec ?? '{}') as { workspaceAccess?: string }).workspaceAccess === 'rw';
  } catch {
    return false;
  }
}
