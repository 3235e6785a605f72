/**
 * One process in a running container, through the exec API: stdin, cwd and env in; capped stdout and
 * stderr, exit code and duration out. A timeout or an abort kills the process and everything it
 * started (found by a marker in their environment), then says so.
 */
import type Docker from 'dockerode';
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { CappedOutput } from '../../core/output';

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
  startedAt: number;
  durationMs: number;
  stdout: CappedOutput;
  stderr: CappedOutput;
}

/** How long the output may keep flowing after a kill before the stream is cut. */
const DRAIN_AFTER_KILL_MS = 2000;

export async function execInContainer(params: ExecParams): Promise<ExecOutcome> {
  const marker = randomUUID();
  const exec = await params.container.exec({
    Cmd: [...params.argv],
    AttachStdin: params.stdin !== undefined,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    User: params.user,
    WorkingDir: params.cwd,
    Env: [...params.env, `${EXEC_MARKER_VAR}=${marker}`],
    abortSignal: params.signal,
  } as Docker.ExecCreateOptions);
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
    const killed = await killMarked(params, marker).catch(() => false);
    const drained = await Promise.race([ended.then(() => true), delay(DRAIN_AFTER_KILL_MS).then(() => false)]);
    if (!drained) stream.destroy();
    unkillable = !killed || !drained;
  }

  const exitCode = unkillable ? null : await exitCodeOf(exec);
  return { exitCode, timedOut, cancelled, unkillable, startedAt, durationMs, stdout, stderr };
}

/** Kills every process carrying this exec's marker (the command and all it started). */
export async function killMarked(params: Pick<ExecParams, 'container' | 'user'>, marker: string): Promise<boolean> {
  const script = `for f in $(grep -lzxF "${EXEC_MARKER_VAR}=$1" /proc/[0-9]*/environ 2>/dev/null); do p=\${f#/proc/}; kill -KILL "\${p%/environ}" 2>/dev/null; done; exit 0`;
  const exec = await params.container.exec({ Cmd: ['sh', '-c', script, 'sh', marker], User: params.user, AttachStdout: true, AttachStderr: true, Tty: false });
  const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  stream.resume();
  await new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
  return (await exitCodeOf(exec)) === 0;
}

/** The exit code; the engine may report the process as running for a moment after its output closed. */
export async function exitCodeOf(exec: Docker.Exec): Promise<number | null> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const info = await exec.inspect();
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
