/**
 * Compute mode's container: made for one program. Its main process is a small sh script that waits on
 * stdin for a request (a line with a nonce and the size of what follows, then one tar with the files,
 * the command and its stdin), unpacks it as the sandbox user, runs the command and writes
 * "<nonce>x<exit code>" after the output on both streams. A run is then one write to an attach stream,
 * with no exec (runc's exec costs about 45 ms) and no wait for the container to stop (about 35 ms more).
 *
 * Two kinds: a process's own (stdin closes when its attach ends, so the container goes with the process
 * that made it), and shared warm containers any later process of the same user may claim (sharedPool.ts):
 * their stdin stays open without anyone attached, and the runner ends itself, so the engine removes the
 * container, when no request came within its wait.
 *
 * The nonce only marks where the output ends, and is no secret from the program: it runs as the same
 * user as the runner and can read the runner's memory (/proc/<pid>/mem). A program that printed it
 * would end its own result early, with an exit code of its choice (as `exit` would), and nothing else
 * shares the container; what it must not do is outlive the run, so a container counts as ended only
 * when the engine ends its stream (stoppedByItself), and is removed otherwise.
 */
import { settledWithin } from './settledWithin';
import type Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { ResolvedFile } from '../../core/engine/engine';
import { diskLimitError, isDiskFull } from '../../core/limits/diskLimit';
import { SandboxError } from '../../core/errors';
import { CappedOutput } from '../../core/results/output';
import type { Limits } from '../../core/spec/spec';
import { withSignal } from './engineCalls';
import { FrameDemux, TrailerScanner } from './runnerStream';
import { buildTar, type TarEntry } from './tar';

/** Where the request's command and stdin are unpacked: the sandbox user's own, hidden from /tmp listings by its dot. */
export const ONE_SHOT_CONTROL_DIR = '/tmp/.agent-sandbox';
const RUN_FILE = `${ONE_SHOT_CONTROL_DIR}/run`;
const STDIN_FILE = `${ONE_SHOT_CONTROL_DIR}/stdin`;

/** The runner's exit code when it ended on TERM (its wait was over) before it ran a program. */
export const RUNNER_WAIT_OVER = 75;

/**
 * The main process. `read` takes the request line byte by byte, and `head -c` exactly the tar's bytes,
 * so stdin need not end (a shared container's never does). "keep" instead of a request: the container
 * is used through execs from now on, and the runner only waits for stdin to end. With $1 > 0 a
 * watchdog ends the runner after $1 seconds without a request (pid 1 needs the trap to end on TERM),
 * with its own exit code: a claimant whose request came too late can tell that its program never ran.
 */
export const ONE_SHOT_RUNNER = [
  `trap 'exit ${RUNNER_WAIT_OVER}' TERM`,
  'w=',
  // The watchdog takes its sleep along when it is stopped: nothing of it stays beside the program.
  `if [ "\${1:-0}" -gt 0 ]; then (trap 'kill $p 2>/dev/null; exit 0' TERM; sleep "$1" & p=$!; wait $p; kill -TERM $$) & w=$!; fi`,
  'IFS= read -r h || exit 0',
  'if [ -n "$w" ]; then kill "$w" 2>/dev/null; fi',
  'trap - TERM',
  // The line ends in "<nonce> <size>" (or "keep"): Podman puts the attach request's body (dockerode's
  // JSON of its options, no newline) into stdin first, so only the line's end is read.
  'case "$h" in *keep) while IFS= read -r _; do :; done; exit 0;; esac',
  's=${h##* }; n=${h% *}; n=${n#"${n%????????????????????????????????}"}',
  'if head -c "$s" | tar -x -p --no-same-owner -f - -C /; then',
  `  if [ -e ${STDIN_FILE} ]; then i=${STDIN_FILE}; else i=/dev/null; fi`,
  `  sh ${RUN_FILE} <"$i"; c=$?; k=x`,
  // Killed for memory: the kernel's count in the container's memory cgroup says so (m), for engines
  // that report no OOM event for it (Podman); cgroup v2's file, then v1's.
  `  if [ "$c" = 137 ] && grep -qs '^oom_kill [1-9]' /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; then k=m; fi`,
  'else c=$?; k=s; fi',
  'printf "%s%s%s\\n" "$n" "$k" "$c"',
  'printf "%s%s%s\\n" "$n" "$k" "$c" >&2',
].join('\n');

/** The create request of a one-shot container: the hardened sandbox with the runner as its main process. */
export function oneShotCreateOptions(
  base: Docker.ContainerCreateOptions,
  labels: Record<string, string>,
  options: {
    /** How long its runner waits for a request before it ends (0: as long as its stdin is open). */
    waitSeconds?: number;
    /** A shared warm container (sharedPool.ts): its stdin stays open after the process that made it. */
    shared?: boolean;
  } = {},
): Docker.ContainerCreateOptions {
  const waitSeconds = Math.max(0, Math.floor(options.waitSeconds ?? 0));
  return {
    ...base,
    Entrypoint: ['sh', '-c', ONE_SHOT_RUNNER, 'agent-sandbox-run', String(waitSeconds)],
    Cmd: [],
    Labels: { ...base.Labels, ...labels },
    // The engine removes it when its runner ends. A process's own ends also when that process dies
    // first (its stdin closes when the attach ends, and the runner reads end-of-file; Podman keeps
    // stdin open, so its wait ends it there); a shared one when its wait is over.
    HostConfig: { ...base.HostConfig, AutoRemove: true },
    OpenStdin: true,
    StdinOnce: !options.shared,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
  };
}

export interface OneShotRequest {
  argv: readonly string[];
  stdin?: Uint8Array;
  files: readonly ResolvedFile[];
  stdoutCap: number;
  stderrCap: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface OneShotOutcome {
  exitCode: number | null;
  timedOut: boolean;
  cancelled: boolean;
  startedAt: number;
  durationMs: number;
  stdout: CappedOutput;
  stderr: CappedOutput;
  /** The runner could not unpack the request (tar failed); stderr says why. */
  stagingFailed: boolean;
  /** The output stream ended before the runner's end marker: what the program printed last may be missing. */
  cutShort?: boolean;
  /** The runner saw the kernel kill the program for memory (its memory cgroup's count). */
  oomKilled?: boolean;
}

/** How long the stream may stay open after a kill before it is cut. */
const DRAIN_AFTER_KILL_MS = 2000;

/** A started one-shot container whose runner waits for its request, with the attach stream held open. */
export class WaitingContainer {
  private readonly demux = new FrameDemux();
  private ended = false;
  private readonly endedPromise: Promise<void>;
  private used = false;
  /** The runner wrote its end marker on both streams: it exits right after. */
  private ranToEnd = false;
  /** This side closed the stream (release, or the end of a run that did not finish). */
  private destroyed = false;
  /** The engine ended the stream (the container stopped), not this side. */
  private endedByEngine = false;
  /** Bytes of output came (on either stream) for the request. */
  private answered = false;

  constructor(
    readonly container: Docker.Container,
    private readonly stream: Duplex,
    readonly createdAt: string,
  ) {
    // Flowing from the start: a paused socket would never notice that the container went away.
    stream.on('data', (chunk: Buffer) => this.demux.push(chunk));
    stream.on('error', () => undefined);
    this.endedPromise = new Promise<void>((resolve) => {
      const end = () => {
        if (!this.destroyed) this.endedByEngine = true;
        this.ended = true;
        resolve();
      };
      stream.once('end', end);
      stream.once('close', end);
      stream.once('error', end);
    });
    // A waiting container must never keep a process (the CLI, a test run) alive; a run holds it again.
    (stream as { unref?: () => void }).unref?.();
  }

  get id(): string {
    return this.container.id;
  }

  /** Whether the runner still waits: its stream is open and no request was sent. */
  get alive(): boolean {
    return !this.ended && !this.used;
  }

  /** Keeps the runner waiting for good (its watchdog stopped): the container is used through execs instead. */
  keep(): void {
    this.used = true;
    (this.stream as { ref?: () => void }).ref?.();
    this.stream.write('keep\n');
  }

  /**
   * Whether the container stopped by itself after its run (its runner wrote the end marker and the
   * engine then ended its attach stream): the engine removes it then (AutoRemove), and no removal call
   * is needed. An end marker alone is not enough: the program can print one (see above) and go on.
   */
  async stoppedByItself(withinMs = 1000): Promise<boolean> {
    if (!this.ranToEnd) return false;
    await settledWithin(this.endedPromise, withinMs);
    this.destroy();
    return this.endedByEngine;
  }

  /** The runner wrote its end marker after the request (it exits right after, unless the program forged the marker). */
  get ranItsRequest(): boolean {
    return this.ranToEnd;
  }

  /**
   * Closes this side's stream after a finished run without waiting for the container to stop:
   * another process (the detached filler, sharedPool.ts confirmStopped) checks that it did, and removes it otherwise.
   */
  handOver(): void {
    this.destroy();
  }

  /** Closes the stream; the runner then reads end-of-file and exits. After a finished run, stoppedByItself closes it. */
  release(): void {
    this.used = true;
    if (!this.ranToEnd) this.destroy();
  }

  private destroy(): void {
    this.destroyed = true;
    this.stream.destroy();
  }

  async run(request: OneShotRequest, user: { uid: number; gid: number }): Promise<OneShotOutcome> {
    if (!this.alive)
      throw new SandboxError(
        'engine-error',
        'The compute sandbox stopped before it could run the program.',
        'Run it again.',
      );
    this.used = true;
    (this.stream as { ref?: () => void }).ref?.();
    const nonce = randomBytes(16).toString('hex');
    const stdout = new TrailerScanner(nonce, new CappedOutput(request.stdoutCap));
    const stderr = new TrailerScanner(nonce, new CappedOutput(request.stderrCap));
    const archive = await buildTar(requestEntries(request, user));
    const finished = new Promise<void>((resolve) => {
      const check = () => {
        if (stdout.done && stderr.done) resolve();
      };
      this.demux.listen((kind, data) => {
        if (data.length > 0) this.answered = true;
        (kind === 2 ? stderr : stdout).push(data);
        check();
      });
    });

    const startedAt = Date.now();
    const t0 = performance.now();
    // Not ended: the runner takes exactly the tar's bytes, and ending our side of a shared container's
    // attach would make the engine end its output too (its stdin stays open for good).
    this.stream.write(`${nonce} ${archive.length}\n`);
    this.stream.write(archive);

    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const interrupted = new Promise<'timeout' | 'abort'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), request.timeoutMs);
      if (request.signal) {
        onAbort = () => resolve('abort');
        if (request.signal.aborted) onAbort();
        else request.signal.addEventListener('abort', onAbort, { once: true });
      }
    });
    const first = await Promise.race([
      finished.then(() => 'finished' as const),
      this.endedPromise.then(() => 'ended' as const),
      interrupted,
    ]);
    clearTimeout(timer);
    if (onAbort) request.signal?.removeEventListener('abort', onAbort);
    const durationMs = performance.now() - t0;

    let exitCode: number | null;
    const timedOut = first === 'timeout';
    const cancelled = first === 'abort';
    if (timedOut || cancelled) {
      // The container is discarded anyway: killing it stops the program and everything it started.
      await this.container.kill({ signal: 'SIGKILL' }).catch(() => undefined);
      await settledWithin(this.endedPromise, DRAIN_AFTER_KILL_MS);
      exitCode = 137;
    } else if (first === 'finished') {
      exitCode = stdout.exitCode ?? stderr.exitCode;
      this.ranToEnd = true;
    } else {
      // The runner itself was ended (say, by `kill -9 -1` in the program): the container's exit code tells.
      exitCode = stdout.exitCode ?? stderr.exitCode ?? (await this.exitCode());
      if (exitCode === RUNNER_WAIT_OVER && !this.answered) {
        this.destroy();
        throw new SandboxError(
          'engine-error',
          'The warm compute sandbox ended before it ran the program: its wait was over as the request came.',
          'Run it again; the next run starts a new sandbox.',
        );
      }
    }
    // After a finished run the engine ends the stream when the container stops (stoppedByItself waits for that).
    if (first === 'finished') (this.stream as { unref?: () => void }).unref?.();
    else this.destroy();
    stdout.flush();
    stderr.flush();
    return {
      exitCode,
      timedOut,
      cancelled,
      startedAt,
      durationMs,
      stdout: stdout.output,
      stderr: stderr.output,
      stagingFailed: stdout.kind === 's' || stderr.kind === 's',
      ...(stdout.kind === 'm' || stderr.kind === 'm' ? { oomKilled: true } : {}),
      ...(first === 'ended' && !stdout.done && !stderr.done ? { cutShort: true } : {}),
    };
  }

  private async exitCode(): Promise<number | null> {
    // The container removes itself once it stops: wait for that, which still gives the exit code.
    const waited = (await Promise.race([
      this.container.wait({ condition: 'removed' }).catch(() => undefined),
      delay(5000),
    ])) as { StatusCode?: number } | undefined;
    return typeof waited?.StatusCode === 'number' ? waited.StatusCode : null;
  }
}

/** The request as one tar: the files, the command line for sh, and stdin when there is one. */
function requestEntries(request: OneShotRequest, owner: { uid: number; gid: number }): TarEntry[] {
  // /tmp is a tmpfs that exists only once the container runs, so the runner makes its own folder first.
  const entries: TarEntry[] = [{ name: ONE_SHOT_CONTROL_DIR.slice(1), type: 'directory', mode: 0o700, ...owner }];
  entries.push(
    ...request.files.map((file): TarEntry => ({
      name: file.path.slice(1),
      type: 'file',
      data: file.data,
      mode: file.mode ?? 0o644,
      ...owner,
    })),
  );
  entries.push({
    name: RUN_FILE.slice(1),
    type: 'file',
    data: Buffer.from(`exec ${request.argv.map(shellQuote).join(' ')}\n`),
    mode: 0o600,
    ...owner,
  });
  if (request.stdin !== undefined)
    entries.push({ name: STDIN_FILE.slice(1), type: 'file', data: request.stdin, mode: 0o600, ...owner });
  return entries;
}

export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The runner could not unpack the request: the program never ran. */
export function stagingError(outcome: OneShotOutcome, limits?: Limits): SandboxError {
  if (limits && isDiskFull(outcome.stderr.text('stderr'))) return diskLimitError('the files', 'place', limits);
  const detail = outcome.stderr.text('stderr').trim().split('\n').slice(-3).join(' ').slice(0, 500);
  return new SandboxError(
    'engine-error',
    `The files could not be placed in the sandbox (tar exited with ${outcome.exitCode ?? 'an unknown code'})${detail ? `: ${detail}` : ''}.`,
    'Check the file paths and sizes, then run it again.',
  );
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}

/**
 * Creates and starts a one-shot container and attaches to its runner. Nothing is placed before start:
 * $HOME, /workspace and /tmp are tmpfs mounts the sandbox user owns or may write (writablePlaces.ts).
 */
export async function startWaitingContainer(
  docker: Docker,
  createOptions: Docker.ContainerCreateOptions,
  createdAt: string,
  discard: (id: string) => Promise<void>,
  signal?: AbortSignal,
): Promise<WaitingContainer> {
  const container = await docker.createContainer(withSignal(createOptions, signal));
  try {
    await container.start(withSignal({}, signal));
    const stream = (await container.attach(
      withSignal({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true }, signal),
    )) as Duplex;
    return new WaitingContainer(container, stream, createdAt);
  } catch (error) {
    await discard(container.id).catch(() => undefined);
    throw error;
  }
}
