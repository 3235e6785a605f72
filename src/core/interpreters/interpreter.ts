/**
 * A persistent interpreter in a session, as this process reaches it: the session's kernel
 * (pythonKernel.ts, started once per session and shared by every process that uses the session)
 * through a client running as a SandboxProcess. A call's clock starts when the kernel starts it; a
 * call past its time is interrupted first (SIGINT, which keeps the state); if it does not stop
 * within INTERRUPT_GRACE_MS the kernel is killed and the result says the state was lost. A kernel
 * that ended on its own (os._exit, a segfault, the memory limit) is reported by the call it ended,
 * with its exit status, and the next call starts a new one.
 *
 * Everything the client sends is the sandbox's to forge (code in the kernel can write to its socket,
 * and ~/.local's usercustomize.py runs in the client itself), so this side trusts none of it: a line
 * longer than its limit closes the connection instead of filling this process's memory, a reply is
 * cut to the session's output limits and its images checked (checkedImages), and a call the kernel
 * does not start within its time limit is given up, so that every call ends.
 */
import { z } from 'zod';
import type { Sandbox, SandboxProcess } from '../engine/engine';
import { SandboxError, abortError } from '../errors';
import { checkedImages } from '../results/images';
import { kernelRecipe, type InterpreterLanguage, type KernelRecipe } from './kernels';
import { stateLostResult, type EvalResult, type PersistentInterpreter, type RunOptions } from './persistentInterpreter';

export { INTERPRETER_LANGUAGES, interpreterName, type InterpreterLanguage } from './kernels';
export type { EvalResult } from './persistentInterpreter';

/** How long interrupted code has to stop before the interpreter is killed. */
const INTERRUPT_GRACE_MS = 5_000;
/** How long a new interpreter has to say it is ready. */
const START_TIMEOUT_MS = 30_000;
const MiB = 1024 * 1024;
/** The longest first line (`ready`) taken from a new client. */
const READY_LINE_BYTES = 64 * 1024;

/**
 * The longest line taken from the client once it is ready: a reply carries at most four images of
 * 5 MiB in base64, stdout and stderr of the cap in base64 and a value of the cap's characters (up to
 * 12 bytes each in JSON), with room for a traceback. Never more than a string of V8 may hold.
 */
function replyLineBytes(cap: number): number {
  return Math.min(32 * MiB + 16 * cap, 384 * MiB);
}

const readySchema = z.object({
  ready: z.literal(true),
  pid: z.number().int().positive(),
  /** The language's version, e.g. 3.11.2. */
  version: z.string(),
  /** Calls the kernel has run so far: 0 for a new kernel, so a state that was there is gone. */
  calls: z.number().int().min(0),
});
const startedSchema = z.object({ started: z.number() });
const endedSchema = z.object({ ended: z.number().int() });
const replySchema = z.object({
  id: z.number(),
  value: z.string().nullable(),
  error: z.string().nullable(),
  interrupted: z.boolean(),
  stdout: z.string(),
  stdoutTotal: z.number(),
  stderr: z.string(),
  stderrTotal: z.number(),
  ms: z.number(),
  images: z.array(z.object({ mime: z.string(), data: z.string(), source: z.string() })).default([]),
  imagesDropped: z.array(z.string()).default([]),
});

export class Interpreter implements PersistentInterpreter {
  private readonly waiting = new Map<number, (reply: z.output<typeof replySchema> | undefined) => void>();
  private readonly starting = new Map<number, () => void>();
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private ended = false;
  private endedBecause: string | undefined;

  private constructor(
    private readonly sandbox: Sandbox,
    private readonly process: SandboxProcess,
    private readonly recipe: KernelRecipe,
    readonly language: InterpreterLanguage,
    private readonly pid: number,
    readonly version: string,
    /** Calls the kernel had run when this client connected (0: a new kernel). */
    readonly callsBefore: number,
    /** The session's output limit: stdout, stderr and a value are cut to it. */
    private readonly cap: number,
  ) {}

  /** Starts the kernel in the sandbox; throws what to do when the sandbox cannot run one. */
  static async start(
    sandbox: Sandbox,
    language: InterpreterLanguage,
    stdoutCap: number,
    signal?: AbortSignal,
  ): Promise<Interpreter> {
    const recipe = kernelRecipe(language);
    if (!sandbox.openProcess)
      throw new SandboxError(
        'unsupported',
        'This engine cannot keep an interpreter running between calls.',
        `Run the code with ${recipe.oneShot} instead, or use the Docker engine.`,
      );
    // The session's kernel, started once (detached, so it outlives this process); then this process's client.
    const launched = await sandbox.exec({ cmd: recipe.launch(stdoutCap), timeoutSeconds: 30 }, signal);
    if (launched.exitCode !== 0) {
      const missing = launched.exitCode === 127 || /not found|No such file/.test(launched.stderr);
      throw notStarted(recipe, missing, `exit code ${launched.exitCode}: ${launched.stderr.trim().slice(-2_000)}`);
    }
    const process = await sandbox.openProcess(recipe.client());
    let stderr = '';
    process.onStderr((chunk) => (stderr = `${stderr}${chunk.toString('utf8')}`.slice(-4_000)));
    // One reader for the client's whole life: the first line is `ready`, the lines after it (kept
    // until the interpreter takes them, at most the rest of one chunk) are its.
    const early: string[] = [];
    const reader = new LineReader(READY_LINE_BYTES);
    process.onStdout((chunk) => reader.push(chunk));
    const ready = await new Promise<z.output<typeof readySchema>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer')), START_TIMEOUT_MS);
      const stop = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = () => (stop(), reject(abortError(signal!)));
      signal?.addEventListener('abort', onAbort, { once: true });
      reader.onTooLong = () => (
        stop(),
        reject(new Error(`its first line was longer than ${READY_LINE_BYTES / 1024} KiB`))
      );
      reader.onLine = (line) => {
        reader.onLine = (later) => early.push(later);
        const parsed = readySchema.safeParse(safeJson(line));
        stop();
        if (parsed.success) resolve(parsed.data);
        else reject(new Error(line.slice(0, 200)));
      };
      void process.exited.then((code) => (stop(), reject(new Error(`it exited with code ${code}`))));
    }).catch(async (error: unknown) => {
      await process.close();
      if (SandboxError.is(error, 'aborted')) throw error;
      throw notStarted(
        recipe,
        /not found|No such file/.test(stderr),
        `${(error as Error).message}${stderr ? `: ${stderr.trim()}` : ''}`,
      );
    });
    const version = ready.version.replace(/[^\w.+-]/g, '').slice(0, 32);
    const interpreter = new Interpreter(sandbox, process, recipe, language, ready.pid, version, ready.calls, stdoutCap);
    const previous = /^previous (-?\d+)$/m.exec(launched.stdout)?.[1];
    if (previous !== undefined) interpreter.previousEnd = describeEnd(recipe, Number(previous));
    reader.limit = replyLineBytes(stdoutCap);
    reader.onLine = (line) => interpreter.receive(line);
    reader.onTooLong = () => interpreter.tooLong(reader.limit);
    for (const line of early.splice(0)) interpreter.receive(line);
    void process.exited.then((code) => interpreter.onExit(code));
    return interpreter;
  }

  /** How the session's last kernel ended, when this one replaced it: its state is gone. */
  previousEnd: string | undefined;

  /** Why it ended, once it has. */
  get endReason(): string | undefined {
    return this.ended ? this.endedBecause : undefined;
  }

  /** Whether it still runs: a new call on one that ended starts a new interpreter. */
  get alive(): boolean {
    return !this.ended;
  }

  /** Runs code after the calls before it; never throws for the code's own failures. */
  run(code: string, options: RunOptions): Promise<EvalResult> {
    const call = this.queue.then(() => this.runNow(code, options));
    this.queue = call.catch(() => undefined);
    return call;
  }

  /** Ends this process's client; the kernel, and the state, stay with the session. */
  close(): Promise<void> {
    this.ended = true;
    return this.process.close();
  }

  private async runNow(code: string, options: RunOptions): Promise<EvalResult> {
    const started = Date.now();
    if (this.ended) return this.lost(started, this.endedBecause ?? 'The interpreter had ended.');
    const id = this.nextId++;
    // Answered by the reply, or with nothing when the client ends (onExit): no handler per call on
    // `exited`, which would keep every call's reply for as long as the client lives.
    const reply = new Promise<z.output<typeof replySchema> | undefined>((resolve) => this.waiting.set(id, resolve));
    let stopped: 'timeout' | 'cancelled' | undefined;
    // Given up before the kernel started the code: only this connection is closed, since the kernel
    // may be running another process's call, which an interrupt would hit.
    let unstarted: 'timeout' | 'cancelled' | undefined;
    let begun = false;
    const stop = async (why: 'timeout' | 'cancelled') => {
      if (stopped || unstarted) return;
      if (!begun) {
        unstarted = why;
        this.endedBecause ??= `This connection to the ${this.recipe.name} interpreter was closed before it started the code.`;
        await this.process.close();
        return;
      }
      stopped = why;
      await this.signalKernel('INT');
      const timer = setTimeout(() => void this.kill(why), INTERRUPT_GRACE_MS);
      void reply.finally(() => clearTimeout(timer));
    };
    // The clock starts when the kernel starts the code: calls of other processes may run first, but
    // for no longer than the call's own limit (a kernel that never starts it cannot hold it forever).
    let timer = setTimeout(() => void stop('timeout'), options.timeoutMs);
    this.starting.set(id, () => {
      if (begun || stopped || unstarted) return;
      begun = true;
      clearTimeout(timer);
      timer = setTimeout(() => void stop('timeout'), options.timeoutMs);
    });
    // The kernel skips the code if it cannot start it within the call's limit: by then this side has given up.
    this.process.write(`${JSON.stringify({ id, code, startWithinMs: options.timeoutMs })}\n`);
    const onAbort = () => void stop('cancelled');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    const answer = await reply.finally(() => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    });
    this.waiting.delete(id);
    this.starting.delete(id);
    if (!answer && unstarted)
      return {
        ...this.lost(
          started,
          `The ${this.recipe.name} interpreter had not started the code ${unstarted === 'timeout' ? `within its ${options.timeoutMs / 1000} s limit` : 'when the call was cancelled'} (it was busy with another call, or did not answer), so this connection to it was closed; the interpreter will not run it.`,
          unstarted,
        ),
        // Nothing was signalled: the interpreter, and its state, are as they were.
        stateLost: false,
        notStarted: true,
      };
    if (!answer)
      return this.lost(
        started,
        stopped
          ? `The code did not stop within ${INTERRUPT_GRACE_MS / 1000} s of being interrupted (${stopped === 'timeout' ? `after its ${options.timeoutMs / 1000} s limit` : 'the call was cancelled'}), so the interpreter was killed.`
          : (this.endedBecause ?? 'The interpreter ended during the call.'),
        stopped,
      );
    // What the kernel keeps to, kept to here: a forged reply gets no further than a real one.
    const { images, notices } = checkedImages(answer.images, answer.imagesDropped);
    return {
      outcome: stopped && answer.interrupted ? stopped : answer.error ? 'error' : 'ok',
      ...(answer.value !== null ? { value: answer.value.slice(0, this.cap) } : {}),
      ...(answer.error !== null ? { error: headAndTail(answer.error, this.cap) } : {}),
      stdout: this.decoded(answer.stdout),
      stderr: this.decoded(answer.stderr),
      stdoutBytes: answer.stdoutTotal,
      stderrBytes: answer.stderrTotal,
      durationMs: Date.now() - started,
      stateLost: false,
      images,
      notices,
    };
  }

  /** Base64 from the kernel as text, at most the cap's bytes of it. */
  private decoded(base64: string): string {
    return Buffer.from(base64.slice(0, Math.ceil(this.cap / 3) * 4), 'base64')
      .subarray(0, this.cap)
      .toString('utf8');
  }

  private lost(started: number, why: string, stopped?: 'timeout' | 'cancelled'): EvalResult {
    return stateLostResult(started, why, stopped);
  }

  private receive(line: string): void {
    const message = safeJson(line);
    const started = startedSchema.safeParse(message);
    if (started.success) {
      this.starting.get(started.data.started)?.();
      return;
    }
    const ended = endedSchema.safeParse(message);
    if (ended.success) {
      this.kernelEnded(ended.data.ended);
      return;
    }
    const parsed = replySchema.safeParse(message);
    if (parsed.success) this.waiting.get(parsed.data.id)?.(parsed.data);
  }

  /** A line past its limit: the connection is closed rather than held in memory (the kernel is left alone). */
  private tooLong(limit: number): void {
    this.endedBecause ??= `The ${this.recipe.name} interpreter sent a line longer than ${Math.round(limit / MiB)} MiB, so this connection to it was closed.`;
    this.ended = true;
    void this.process.close();
  }

  /** The kernel's exit status, as its supervisor wrote it: negative for a signal. */
  private kernelEnded(code: number): void {
    this.ended = true;
    this.endedBecause ??= describeEnd(this.recipe, code);
    for (const resolve of this.waiting.values()) resolve(undefined);
  }

  /** This process's client ended: without the kernel's status, the connection was lost (the kernel may live on). */
  private onExit(code: number | null): void {
    this.ended = true;
    this.endedBecause ??= `The connection to the ${this.recipe.name} interpreter was lost${code === null ? '' : ` (its client exited with code ${code})`}.`;
    for (const resolve of this.waiting.values()) resolve(undefined);
  }

  private async kill(why: 'timeout' | 'cancelled'): Promise<void> {
    this.endedBecause = `The interpreter was killed (${why === 'timeout' ? 'its code ran past the time limit and ignored the interrupt' : 'the call was cancelled and the code ignored the interrupt'}).`;
    await this.signalKernel('KILL');
    await this.process.close();
  }

  /** kill -SIG the kernel, from a separate command in the sandbox (the kernel's pid is the sandbox's own). */
  private async signalKernel(name: 'INT' | 'KILL'): Promise<void> {
    await this.sandbox.exec({ cmd: ['kill', `-${name}`, String(this.pid)], timeoutSeconds: 10 }).catch(() => undefined);
  }
}

/**
 * The client's output as lines of at most `limit` bytes, each joined once from its chunks (a long
 * line is not searched again with every chunk). A longer line stops the reading: onTooLong.
 */
class LineReader {
  private parts: Buffer[] = [];
  private size = 0;
  private over = false;
  onLine: (line: string) => void = () => undefined;
  onTooLong: () => void = () => undefined;

  constructor(public limit: number) {}

  push(chunk: Buffer): void {
    let from = 0;
    while (!this.over) {
      const newline = chunk.indexOf(10, from);
      const part = chunk.subarray(from, newline < 0 ? chunk.length : newline);
      if (this.size + part.length > this.limit) {
        this.over = true;
        this.parts = [];
        this.size = 0;
        this.onTooLong();
        return;
      }
      if (newline < 0) {
        if (part.length) this.parts.push(part);
        this.size += part.length;
        return;
      }
      const line = (this.size ? Buffer.concat([...this.parts, part]) : part).toString('utf8');
      this.parts = [];
      this.size = 0;
      from = newline + 1;
      this.onLine(line);
    }
  }
}

/** Text cut to at most `most` characters, keeping its start and its end (a traceback's last line says what happened). */
function headAndTail(text: string, most: number): string {
  if (text.length <= most) return text;
  const half = Math.floor(most / 2);
  return `${text.slice(0, half)}\n… (${text.length - 2 * half} characters left out) …\n${text.slice(-half)}`;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A kernel's exit status in words: negative for a signal. */
function describeEnd(recipe: KernelRecipe, code: number): string {
  return code < 0
    ? `The ${recipe.name} interpreter was killed by signal ${-code}${-code === 9 ? ' (SIGKILL: the memory limit, or a kill)' : ''}.`
    : `The ${recipe.name} interpreter ended with exit code ${code}.`;
}

/** Why an interpreter did not start, and what to do instead. */
function notStarted(recipe: KernelRecipe, missing: boolean, detail: string): SandboxError {
  return missing
    ? new SandboxError(
        'unsupported',
        `This sandbox has no ${recipe.program}, so it cannot run a ${recipe.name} interpreter.`,
        `Open a sandbox with runtime ${recipe.runtime} (sandbox_open with runtime "${recipe.runtime}").`,
      )
    : new SandboxError(
        'engine-error',
        `The ${recipe.name} interpreter did not start (${detail}).`,
        `Run the code with ${recipe.oneShot} to see what fails.`,
      );
}
