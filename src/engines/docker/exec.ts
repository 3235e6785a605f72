/**
 * One process in a running container, through the exec API: stdin, cwd and env in; capped stdout and
 * stderr, exit code and duration out. A timeout or an abort kills the process and everything it
 * started, then says so. "Everything it started" is its process tree: the command runs under the
 * container's init (tini) as a child subreaper, so a process that leaves the tree's session
 * (setsid, a double fork) is still reparented inside it, and one that clears its environment
 * (env -i) is found all the same; the environment marker only finds the tree's root.
 */
import { settledWithin } from './settledWithin';
import type Docker from 'dockerode';
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { CappedOutput } from '../../core/results/output';
import { inspectExec, withSignal } from './engineCalls';

export const EXEC_MARKER_VAR = 'AGENT_SANDBOX_EXEC';

export interface ExecParams {
  docker: Docker;
  container: Docker.Container;
  argv: readonly string[];
  user: string;
  cwd: string;
  env: readonly string[];
  stdin?: Uint8Array;
  stdoutCap: number;
  stderrCap: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface ExecOutcome {
  exitCode: number | null;
  timedOut: boolean;
  cancelled: boolean;
  /** The processes could not be stopped from inside; the caller should kill the container. */
  unkillable: boolean;
  /** After a timeout or a cancel: the names of the processes of the call's tree that were killed. */
  killed?: string[];
  startedAt: number;
  durationMs: number;
  stdout: CappedOutput;
  stderr: CappedOutput;
}

/** How long the output may keep flowing after a kill before the stream is cut. */
const DRAIN_AFTER_KILL_MS = 2000;

export async function execInContainer(params: ExecParams): Promise<ExecOutcome> {
  const marker = randomUUID();
  const exec = await params.container.exec(
    withSignal(
      {
        Cmd: underSubreaper(params.argv),
        AttachStdin: params.stdin !== undefined,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        User: params.user,
        WorkingDir: params.cwd,
        Env: [...params.env, `${EXEC_MARKER_VAR}=${marker}`],
      },
      params.signal,
    ),
  );
  const stdout = new CappedOutput(params.stdoutCap);
  const stderr = new CappedOutput(params.stderrCap);
  const startedAt = Date.now();
  const t0 = performance.now();
  const stream = (await exec.start({ hijack: true, stdin: params.stdin !== undefined })) as Duplex;
  params.docker.modem.demuxStream(stream, sink(stdout), sink(stderr));

  const ended = new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
  if (params.stdin !== undefined) {
    // Half-close after the input so the process sees end-of-file; a process that exits early may reset the pipe.
    stream.on('error', () => undefined);
    stream.end(params.stdin);
  }

  let timedOut = false;
  let cancelled = false;
  let unkillable = false;
  let killed: string[] | undefined;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const interrupted = new Promise<'timeout' | 'abort'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), params.timeoutMs);
    if (params.signal) {
      onAbort = () => resolve('abort');
      if (params.signal.aborted) onAbort();
      else params.signal.addEventListener('abort', onAbort, { once: true });
    }
  });

  const first = await Promise.race([ended.then(() => 'ended' as const), interrupted]);
  clearTimeout(timer);
  if (onAbort) params.signal?.removeEventListener('abort', onAbort);
  let durationMs = performance.now() - t0;
  if (first !== 'ended') {
    timedOut = first === 'timeout';
    cancelled = first === 'abort';
    durationMs = performance.now() - t0;
    // At the process limit the tree kill cannot start its helpers: one shell's builtin kill still fits.
    killed =
      (await killTree(params, marker).catch(() => undefined)) ??
      ((await killAll(params).catch(() => false)) ? [ALL_PROCESSES] : undefined);
    const drained = await settledWithin(ended, DRAIN_AFTER_KILL_MS);
    if (!drained) stream.destroy();
    unkillable = !killed || !drained;
  }

  const exitCode = unkillable ? null : await exitCodeOf(exec);
  return {
    exitCode,
    timedOut,
    cancelled,
    unkillable,
    startedAt,
    durationMs,
    stdout,
    stderr,
    ...(killed ? { killed } : {}),
  };
}

/** The container's init (Docker's tini), when it is there, as a child subreaper above the command. */
const INIT = '/sbin/docker-init';

/** argv run under the init as a subreaper (-s) where the image has it, else as it is. */
export function underSubreaper(argv: readonly string[]): string[] {
  return ['sh', '-c', `if [ -x ${INIT} ]; then exec ${INIT} -s -- "$@"; fi; exec "$@"`, 'sh', ...argv];
}

/**
 * Kills the process tree of the exec with this marker: the processes carrying the marker (the
 * tree's root and whatever kept its environment) and every descendant of them, found by parent ids
 * in /proc. First every process of the sandbox's user is stopped at once (kill -STOP -1, one atomic
 * signal, which no fork escapes), so the process table holds still while the marked processes are
 * looked for and the table is read: a process that forks and exits in a loop changes pid faster
 * than a table can be read. Then the tree is killed and
 * the rest (other calls, background processes of earlier calls) continue. Prints the names of what
 * it killed.
 */
const KILL_TREE_SCRIPT = [
  // Stopped before the marked processes are looked for: a process found before the stop could fork
  // and exit before it, leaving a marked child (reparented to the init, so no descendant) unlisted.
  'kill -STOP -1 2>/dev/null',
  `roots=$(for f in $(grep -lzxF "${EXEC_MARKER_VAR}=$1" /proc/[0-9]*/environ 2>/dev/null); do p=\${f#/proc/}; echo "\${p%/environ}"; done)`,
  'if [ -z "$roots" ]; then kill -CONT -1 2>/dev/null; exit 0; fi',
  // pid:ppid of every process but zombies; the name field may hold spaces and parentheses, so split after the last ")".
  'table=$(for s in /proc/[0-9]*/stat; do IFS= read -r l < "$s" 2>/dev/null || continue; p=${s#/proc/}; r=${l##*) }; set -- $r; [ "$1" = Z ] || echo "${p%/stat}:$2"; done)',
  'tree=" $(echo $roots) "; grew=1',
  'while [ $grew = 1 ]; do grew=0; for row in $table; do p=${row%%:*}; pp=${row#*:}; case "$tree" in *" $pp "*) case "$tree" in *" $p "*) ;; *) tree="$tree$p "; grew=1;; esac;; esac; done; done',
  'for p in $tree; do cat "/proc/$p/comm" 2>/dev/null; done',
  'for p in $tree; do kill -KILL "$p" 2>/dev/null; done',
  'kill -CONT -1 2>/dev/null',
  'exit 0',
].join('\n');

/** What killAll stopped, as a process name in a result. */
export const ALL_PROCESSES = 'every process of the sandbox (it was at its process limit)';

/**
 * Kills every process of the sandbox's user but the container's own keep-alive (the first
 * `sleep` under the init): all are stopped at once (kill -STOP -1), killed one by one, and the
 * keep-alive continued. Shell builtins only, so it needs no process but its one shell and still runs
 * when a fork bomb holds every other slot of the process limit.
 */
const KILL_ALL_SCRIPT = [
  'kill -STOP -1 2>/dev/null',
  'keep=; oldest=',
  'for d in /proc/[0-9]*; do IFS= read -r l < "$d/stat" 2>/dev/null || continue; case "$l" in *" (sleep) "*) ;; *) continue;; esac; r=${l##*) }; set -- $r; [ "$2" = 1 ] || continue; if [ -z "$oldest" ] || [ "${20}" -lt "$oldest" ]; then oldest=${20}; keep=${d#/proc/}; fi; done',
  'for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = 1 ] || [ "$p" = $$ ] || [ "$p" = "$keep" ] || kill -KILL "$p" 2>/dev/null; done',
  'kill -CONT -1 2>/dev/null',
  'exit 0',
].join('\n');

export async function killAll(params: Pick<ExecParams, 'container' | 'user'>): Promise<boolean> {
  return (await runHelper(params, [KILL_ALL_SCRIPT])).exitCode === 0;
}

/** Whether the command could not start because the sandbox is at its process limit (our init wrapper could not fork). */
export function startBlockedByProcessLimit(stderr: string): boolean {
  return /\[FATAL tini \(\d+\)\] fork failed: Resource temporarily unavailable|OCI runtime exec failed[^\n]*resource temporarily unavailable/i.test(
    stderr,
  );
}

/** Kills the exec's process tree (see KILL_TREE_SCRIPT); true when the kill ran. */
export async function killMarked(params: Pick<ExecParams, 'container' | 'user'>, marker: string): Promise<boolean> {
  return (await killTree(params, marker)) !== undefined;
}

/** Kills the exec's process tree; the names of the processes it killed, or undefined when it could not run. */
export async function killTree(
  params: Pick<ExecParams, 'container' | 'user'>,
  marker: string,
): Promise<string[] | undefined> {
  const { exitCode, stdout } = await runHelper(params, [KILL_TREE_SCRIPT, 'sh', marker]);
  return exitCode === 0 ? stdout.split('\n').filter((name) => name !== '') : undefined;
}

/** Runs one of our fixed shell scripts (`sh -c SCRIPT ARGS...`) as the sandbox user, directly (not under the init), to its end. */
async function runHelper(
  params: Pick<ExecParams, 'container' | 'user'>,
  args: readonly string[],
): Promise<{ exitCode: number | null; stdout: string }> {
  const exec = await params.container.exec({
    Cmd: ['sh', '-c', ...args],
    User: params.user,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
  return { exitCode: await exitCodeOf(exec), stdout: stdoutOf(Buffer.concat(chunks)) };
}

/** The stdout frames of a multiplexed exec stream (each frame: stream id, 3 zero bytes, a 32-bit length, the payload). */
function stdoutOf(data: Buffer): string {
  let text = '';
  for (let at = 0; at + 8 <= data.length;) {
    const size = data.readUInt32BE(at + 4);
    if (data[at] === 1) text += data.subarray(at + 8, at + 8 + size).toString('utf8');
    at += 8 + size;
  }
  return text;
}

/** The exit code; the engine may report the process as running for a moment after its output closed. */
export async function exitCodeOf(exec: Docker.Exec): Promise<number | null> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const info = await inspectExec(exec);
    if (!info.Running) return info.ExitCode ?? null;
    await delay(attempt < 10 ? 5 : 20);
  }
  return null;
}

/** A write-only stand-in for a Writable: the demuxer only ever calls write(). */
function sink(output: CappedOutput): NodeJS.WritableStream {
  return { write: (chunk: Uint8Array) => (output.push(chunk), true) } as unknown as NodeJS.WritableStream;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
