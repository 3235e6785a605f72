/**
 * A session's file helper: one long-lived exec (FILE_HELPER_SCRIPT) that runs the file scripts one
 * request at a time, which saves the exec's own start (about 50 ms here) on every file call after the
 * first. It runs as the sandbox's user with nothing more: the kernel's permissions, the read-only mount
 * and the scripts' symlink checks apply as in one exec per call. It is one more process against the
 * sandbox's process limit (a few more while a request runs).
 *
 * The sandbox's code runs as the same user, so it can kill the helper, stop it, or write into its
 * stdin and stdout. Nothing it sends is trusted: no length comes from it, the output is capped as an
 * exec's is, a reply must come within the call's time and without a long silence, and anything but
 * one well-formed reply per request ends the helper (its processes killed) and the call then runs as
 * one exec ('unavailable'). The connection never keeps the host process alive while idle, and the
 * helper ends with it (end of its stdin), with the container, or when the session closes.
 *
 * What stays possible: code that takes the helper's requests (it can read its stdin) can answer them
 * with the right nonce, so a read may return bytes of its choosing and a write may claim success. It
 * could do the same to one exec's process (same user, ptrace, /proc/PID/fd), only with a race to win;
 * either way it reaches nothing beyond what that user already can, and the host's bounds hold.
 */
import type Docker from 'dockerode';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { CappedOutput } from '../../core/results/output';
import { EXEC_MARKER_VAR, killMarked } from './exec';
import { FILE_HELPER_SCRIPT, FILE_OPS, type FileOp } from './fileScripts';
import { HelperReply, helperRequest } from './fileHelperProtocol';
import { FrameDemux } from './runnerStream';
import { settledWithin } from './settledWithin';

export interface HelperCall {
  op: FileOp;
  args: readonly string[];
  input?: Uint8Array;
  stdoutCap: number;
  stderrCap: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

export type HelperOutcome =
  | { kind: 'done'; exitCode: number; stdout: CappedOutput; stderr: CappedOutput }
  | { kind: 'timeout' | 'cancelled' }
  /** The helper could not answer (gone, broken, silent): the call should run as one exec. */
  | { kind: 'unavailable'; why: string };

/** A reply that shows no byte for this long means a stopped or stuck helper (the longest script pause is far shorter). */
export const HELPER_SILENCE_MS = 10_000;

/** How long a call waits for the kill of a helper that failed before it runs as one exec. */
const HELPER_KILL_WAIT_MS = 10_000;

interface Pending {
  reply: HelperReply;
  /** Called on every byte of the reply: resets the silence timer. */
  progress(): void;
  /** The reply is complete: the call is answered with it. */
  succeed(): void;
  /** The helper cannot answer: it ends, its processes are killed, then the call is answered with `outcome`. */
  fail(outcome: HelperOutcome): void;
}

/** The attach connection; a Unix or TCP socket can stop holding the process open, other transports may not. */
type Connection = Duplex & { ref?: () => void; unref?: () => void };

export class FileHelper {
  private readonly demux = new FrameDemux();
  private pending: Pending | undefined;
  private ended = false;
  /** Why it stopped answering, once it has. */
  endedWhy: string | undefined;

  private constructor(
    private readonly container: Docker.Container,
    private readonly user: string,
    private readonly stream: Connection,
    private readonly marker: string,
  ) {
    stream.unref?.();
    stream.on('data', (chunk: Buffer) => this.demux.push(chunk));
    this.demux.listen((kind, data) => this.onFrame(kind, data));
    stream.once('end', () => this.end('the helper ended'));
    stream.once('close', () => this.end('the helper ended'));
    stream.on('error', () => this.end('the connection to the helper failed'));
  }

  /** Starts a helper in the container; it answers requests as soon as they are written. */
  static async start(container: Docker.Container, user: string): Promise<FileHelper> {
    const marker = randomUUID();
    const exec = await container.exec({
      Cmd: ['sh', '-c', FILE_HELPER_SCRIPT, 'agent-sandbox-files', ...Object.values(FILE_OPS)],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      User: user,
      WorkingDir: '/workspace',
      Env: [`${EXEC_MARKER_VAR}=${marker}`],
    });
    const stream = (await exec.start({ hijack: true, stdin: true })) as Connection;
    return new FileHelper(container, user, stream, marker);
  }

  get alive(): boolean {
    return !this.ended;
  }

  get busy(): boolean {
    return this.pending !== undefined;
  }

  /** Runs one file script in the helper; never two at once (the caller runs a second call as one exec). */
  run(call: HelperCall): Promise<HelperOutcome> {
    if (this.ended) return Promise.resolve({ kind: 'unavailable', why: this.endedWhy ?? 'the helper ended' });
    if (this.pending) return Promise.resolve({ kind: 'unavailable', why: 'the helper is busy' });
    if (call.signal?.aborted) return Promise.resolve({ kind: 'cancelled' });
    const nonce = randomBytes(16).toString('hex');
    const reply = new HelperReply(nonce, new CappedOutput(call.stdoutCap), new CappedOutput(call.stderrCap));
    return new Promise<HelperOutcome>((resolve) => {
      let silence: NodeJS.Timeout | undefined;
      let answered = false;
      const answer = (outcome: HelperOutcome) => {
        clearTimeout(overall);
        clearTimeout(silence);
        call.signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const pending: Pending = {
        reply,
        progress: () => {
          clearTimeout(silence);
          silence = setTimeout(quiet, HELPER_SILENCE_MS);
        },
        succeed: () => {
          if (answered) return;
          answered = true;
          this.pending = undefined;
          this.stream.unref?.();
          answer({ kind: 'done', exitCode: reply.exitCode!, stdout: reply.stdout, stderr: reply.stderr });
        },
        fail: (outcome) => {
          if (answered) return;
          answered = true;
          clearTimeout(overall);
          clearTimeout(silence);
          this.end(outcome.kind === 'unavailable' ? outcome.why : `the helper was stopped (${outcome.kind})`);
          // What it was running is killed before the call goes on: an exec of the same call must not race it.
          void this.kill().then(() => {
            this.pending = undefined;
            answer(outcome);
          });
        },
      };
      // Silent while the input still goes out (a slow link to a remote engine) counts as progress; a helper that reads nothing does not.
      let unsent = Infinity;
      const quiet = () => {
        const left = this.stream.writableLength;
        if (left > 0 && left < unsent) {
          unsent = left;
          return pending.progress();
        }
        pending.fail({ kind: 'unavailable', why: 'the helper went silent' });
      };
      const onAbort = () => pending.fail({ kind: 'cancelled' });
      const overall = setTimeout(() => pending.fail({ kind: 'timeout' }), call.timeoutMs);
      this.pending = pending;
      pending.progress();
      call.signal?.addEventListener('abort', onAbort, { once: true });
      this.stream.ref?.();
      const input = call.input ?? new Uint8Array(0);
      this.stream.write(helperRequest(nonce, call.op, call.args, input.length));
      if (input.length) this.stream.write(input);
    });
  }

  /** Ends the helper for good (the session closes): the connection is closed, nothing waits for it. */
  close(): void {
    this.end('the session was closed');
  }

  private onFrame(kind: number, data: Buffer): void {
    const pending = this.pending;
    if (kind !== 1) {
      const said = data.subarray(0, 200).toString('utf8').trim();
      return this.end(`the helper wrote to its own stderr (${said})`);
    }
    if (!pending) return this.end('the helper sent bytes while no request was open');
    pending.progress();
    pending.reply.push(data);
    if (pending.reply.broken) pending.fail({ kind: 'unavailable', why: pending.reply.error ?? 'a malformed reply' });
    else if (pending.reply.done && couldNotStart(pending.reply))
      pending.fail({ kind: 'unavailable', why: 'the helper could not start the script (the process limit)' });
    else if (pending.reply.done) pending.succeed();
  }

  /** Marks it ended and closes the connection; a running request fails ('unavailable'). */
  private end(why: string): void {
    if (this.ended) return;
    this.ended = true;
    this.endedWhy = why;
    this.stream.destroy();
    this.pending?.fail({ kind: 'unavailable', why });
  }

  /** Kills the helper and the request it was running (the exec marker is in their environment); waits for an engine that does not answer at most HELPER_KILL_WAIT_MS. */
  private async kill(): Promise<void> {
    await settledWithin(killMarked({ container: this.container, user: this.user }, this.marker), HELPER_KILL_WAIT_MS);
  }
}

/** The script never ran: at the process limit the helper's shell cannot fork (one exec then reports it as usual). */
function couldNotStart(reply: HelperReply): boolean {
  return (
    reply.exitCode !== 0 &&
    /Cannot fork|fork failed|Resource temporarily unavailable/i.test(reply.stderr.text('stderr'))
  );
}
