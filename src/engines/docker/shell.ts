/**
 * An interactive shell in a running container: an exec with a TTY, whose raw output is decoded as
 * UTF-8. Its processes carry the same environment marker as exec.ts gives commands, so closing the
 * shell kills everything it started.
 */
import { settledWithin } from './settledWithin';
import type Docker from 'dockerode';
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { ShellSession } from '../../core/engine/engine';
import { ShellOutput } from '../../core/sessions/shellOutput';
import { inspectExec } from './engineCalls';
import { EXEC_MARKER_VAR, exitCodeOf, killMarked } from './exec';

/**
 * bash where the image has it, else sh; interactive but not a login shell, because Debian's
 * /etc/profile resets PATH and would drop what the image or the sandbox's env put there.
 */
export const DEFAULT_SHELL: readonly string[] = [
  '/bin/sh',
  '-c',
  'if command -v bash >/dev/null 2>&1; then exec bash -i; else exec sh -i; fi',
];

export const DEFAULT_TERMINAL_SIZE = { cols: 80, rows: 24 };

export interface ShellParams {
  container: Docker.Container;
  user: string;
  argv: readonly string[];
  cwd: string;
  env: readonly string[];
  cols: number;
  rows: number;
  /** Turns engine failures into errors that say what to do (DockerEngine.guard). */
  guard: <T>(call: () => Promise<T>) => Promise<T>;
}

/** How long the stream may stay open after the kill before it is cut. */
const CLOSE_DRAIN_MS = 2000;
/** Output held for a listener that has not subscribed yet; beyond this the oldest is dropped. */

export async function openDockerShell(params: ShellParams): Promise<ShellSession> {
  const marker = randomUUID();
  const { cols, rows } = validSize(params.cols, params.rows)
    ? { cols: Math.floor(params.cols), rows: Math.floor(params.rows) }
    : DEFAULT_TERMINAL_SIZE;
  // ConsoleSize (API 1.42+) sets the size before the shell draws its first prompt; older engines ignore
  // it, so the resize after start below is what sets the size there.
  const exec = await params.container.exec({
    Cmd: [...params.argv],
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: true,
    User: params.user,
    WorkingDir: params.cwd,
    Env: ['TERM=xterm-256color', ...params.env, `${EXEC_MARKER_VAR}=${marker}`],
    ConsoleSize: [rows, cols],
  });
  // Tty is repeated at start: the engine decides from the start request whether to multiplex the stream.
  const stream = (await exec.start({
    hijack: true,
    stdin: true,
    Tty: true,
    ConsoleSize: [rows, cols],
  } as Docker.ExecStartOptions)) as Duplex;
  const shell = new DockerShell(exec, stream, marker, params);
  await shell.initialResize(cols, rows);
  return shell;
}

class DockerShell extends ShellOutput implements ShellSession {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly ended: Promise<void>;
  private readonly exitReported: Promise<void>;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly exec: Docker.Exec,
    private readonly stream: Duplex,
    private readonly marker: string,
    private readonly params: ShellParams,
  ) {
    super();
    stream.on('data', (chunk: Buffer) => this.emit(this.decoder.decode(chunk, { stream: true })));
    stream.on('error', () => undefined);
    this.ended = new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    });
    this.exitReported = this.ended.then(async () => {
      this.emit(this.decoder.decode());
      this.finish(await exitCodeOf(exec).catch(() => null));
    });
  }

  write(data: string | Uint8Array): void {
    if (this.exited || this.stream.destroyed || this.stream.writableEnded) return;
    this.stream.write(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  }

  async resize(cols: number, rows: number): Promise<void> {
    if (this.exited || !validSize(cols, rows)) return;
    try {
      await this.params.guard(() =>
        this.exec.resize({ h: Math.floor(rows), w: Math.floor(cols) }).catch((error: { statusCode?: number }) => {
          // Podman answers 201 Created where Docker (and dockerode's check) has 200: the resize was done.
          if (error?.statusCode !== 201) throw error;
        }),
      );
    } catch (error) {
      // The shell may have exited while the request was under way; resizing it is moot then.
      if (
        this.exited ||
        !(await inspectExec(this.exec)
          .then((info) => info.Running)
          .catch(() => false))
      )
        return;
      throw error;
    }
  }

  /** Right after start the engine may not have the TTY ready yet (as the docker CLI knows), so one retry. */
  async initialResize(cols: number, rows: number): Promise<void> {
    try {
      await this.resize(cols, rows);
    } catch {
      await delay(50);
      // Still failing: the shell works at the engine's default size, and the next resize corrects it.
      await this.resize(cols, rows).catch(() => undefined);
    }
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      if (!this.exited) {
        await killMarked(this.params, this.marker).catch(() => false);
        const drained = await settledWithin(this.ended, CLOSE_DRAIN_MS);
        if (!drained) this.stream.destroy();
      }
      await this.exitReported;
    })();
    return this.closing;
  }
}

function validSize(cols: number, rows: number): boolean {
  return Number.isFinite(cols) && Number.isFinite(rows) && cols >= 1 && rows >= 1;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
