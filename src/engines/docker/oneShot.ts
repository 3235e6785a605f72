/**
 * Compute mode's container: made for one program. Its main process is a small sh script that waits on
 * stdin for a request (a nonce line, then one tar with the files, the command and its stdin), unpacks
 * it as the sandbox user, runs the command and writes "<nonce>x<exit code>" after the output on both
 * streams. A run is then one write to an attach stream held since the container started, with no exec
 * (runc's exec costs about 45 ms) and no wait for the container to stop (about 35 ms more).
 *
 * The nonce only marks where the output ends. A program that learned it and printed it would just end
 * its own result early: nothing else shares the container.
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

/** The main process. `read` takes the nonce byte by byte, so tar gets the rest of stdin untouched. */
export const ONE_SHOT_RUNNER = [
  'IFS= read -r n || exit 0',
  'if tar -x -p --no-same-owner -f - -C /; then',
  `  if [ -e ${STDIN_FILE} ]; then i=${STDIN_FILE}; else i=/dev/null; fi`,
  `  sh ${RUN_FILE} <"$i"; c=$?; k=x`,
  'else c=$?; k=s; fi',
  'printf "%s%s%s\\n" "$n" "$k" "$c"',
  'printf "%s%s%s\\n" "$n" "$k" "$c" >&2',
].join('\n');

/** The create request of a one-shot container: the hardened sandbox with the runner as its main process. */
export function oneShotCreateOptions(
  base: Docker.ContainerCreateOptions,
  labels: Record<string, string>,
): Docker.ContainerCreateOptions {
  return {
    ...base,
    Entrypoint: ['sh', '-c', ONE_SHOT_RUNNER, 'agent-sandbox-run'],
    Cmd: [],
    Labels: { ...base.Labels, ...labels },
    // The engine removes it when its runner ends, also when the process that made it dies first (the
    // runner reads its request from the attached stdin, so it exits when that process is gone).
    HostConfig: { ...base.HostConfig, AutoRemove: true },
    OpenStdin: true,
    StdinOnce: true,
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
}

/** How long the stream may stay open after a kill before it is cut. */
const DRAIN_AFTER_KILL_MS = 2000;

/** A started one-shot container whose runner waits for its request, with the attach stream held open. */
export class WaitingContainer {
  private readonly demux = new FrameDemux();
  private ended = false;
  private readonly endedPromise: Promise<void>;
  private used = false;

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

  /** Keeps the runner waiting for good: the container is used through execs instead. */
  keep(): void {
    this.used = true;
    (this.stream as { ref?: () => void }).ref?.();
  }

  /** Closes the stream; the runner then reads end-of-file and exits. */
  release(): void {
    this.used = true;
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
        (kind === 2 ? stderr : stdout).push(data);
        check();
      });
    });

    const startedAt = Date.now();
    const t0 = performance.now();
    this.stream.write(`${nonce}\n`);
    this.stream.end(archive);

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
    } else {
      // The runner itself was ended (say, by `kill -9 -1` in the program): the container's exit code tells.
      exitCode = stdout.exitCode ?? stderr.exitCode ?? (await this.exitCode());
    }
    this.stream.destroy();
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
