/**
 * A persistent interpreter in a session, as this process reaches it: the session's kernel
 * (pythonKernel.ts, started once per session and shared by every process that uses the session)
 * through a client running as a SandboxProcess. A call's clock starts when the kernel starts it; a
 * call past its time is interrupted first (SIGINT, which keeps the state); if it does not stop
 * within INTERRUPT_GRACE_MS the kernel is killed and the result says the state was lost. A kernel
 * that ended on its own (os._exit, a segfault, the memory limit) is reported by the call it ended,
 * with its exit status, and the next call starts a new one.
 */
import { z } from 'zod';
import type { Sandbox, SandboxProcess } from '../engine/engine';
import { SandboxError, abortError } from '../errors';
import { kernelRecipe, type InterpreterLanguage, type KernelRecipe } from './kernels';
import type { EvalResult, PersistentInterpreter, RunOptions } from './persistentInterpreter';

export { INTERPRETER_LANGUAGES, interpreterName, type InterpreterLanguage } from './kernels';
export type { EvalResult } from './persistentInterpreter';

/** How long interrupted code has to stop before the interpreter is killed. */
const INTERRUPT_GRACE_MS = 5_000;
/** How long a new interpreter has to say it is ready. */
const START_TIMEOUT_MS = 30_000;

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
  private lines = '';
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
    let buffered = '';
    let stderr = '';
    process.onStderr((chunk) => (stderr = `${stderr}${chunk.toString('utf8')}`.slice(-4_000)));
    const ready = await new Promise<z.output<typeof readySchema>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer')), START_TIMEOUT_MS);
      const stop = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = () => (stop(), reject(abortError(signal!)));
      signal?.addEventListener('abort', onAbort, { once: true });
      process.onStdout((chunk) => {
        buffered += chunk.toString('utf8');
        const newline = buffered.indexOf('\n');
        if (newline < 0) return;
        const parsed = readySchema.safeParse(safeJson(buffered.slice(0, newline)));
        stop();
        if (parsed.success) resolve(parsed.data);
        else reject(new Error(buffered.slice(0, 200)));
      });
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
    const interpreter = new Interpreter(sandbox, process, recipe, language, ready.pid, ready.version, ready.calls);
    const previous = /^previous (-?\d+)$/m.exec(launched.stdout)?.[1];
    if (previous !== undefined) interpreter.previousEnd = describeEnd(recipe, Number(previous));
    interpreter.lines = buffered.slice(buffered.indexOf('\n') + 1);
    process.onStdout((chunk) => interpreter.receive(chunk));
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
    const reply = new Promise<z.output<typeof replySchema> | undefined>((resolve) => {
      this.waiting.set(id, resolve);
      void this.process.exited.then(() => resolve(undefined));
    });
    this.process.write(`${JSON.stringify({ id, code })}\n`);
    const begun = new Promise<void>((resolve) => this.starting.set(id, resolve));
    let stopped: 'timeout' | 'cancelled' | undefined;
    const stop = async (why: 'timeout' | 'cancelled') => {
      if (stopped) return;
      stopped = why;
      await this.signalKernel('INT');
      const timer = setTimeout(() => void this.kill(why), INTERRUPT_GRACE_MS);
      void reply.finally(() => clearTimeout(timer));
    };
    // The clock starts when the kernel starts the code: calls of other processes may run first.
    let timer: NodeJS.Timeout | undefined;
    void begun.then(() => {
      if (!stopped) timer = setTimeout(() => void stop('timeout'), options.timeoutMs);
    });
    const onAbort = () => void stop('cancelled');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    const answer = await reply.finally(() => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    });
    this.waiting.delete(id);
    this.starting.delete(id);
    if (!answer)
      return this.lost(
        started,
        stopped
          ? `The code did not stop within ${INTERRUPT_GRACE_MS / 1000} s of being interrupted (${stopped === 'timeout' ? `after its ${options.timeoutMs / 1000} s limit` : 'the call was cancelled'}), so the interpreter was killed.`
          : (this.endedBecause ?? 'The interpreter ended during the call.'),
        stopped,
      );
    const stdout = Buffer.from(answer.stdout, 'base64').toString('utf8');
    const stderr = Buffer.from(answer.stderr, 'base64').toString('utf8');
    return {
      outcome: stopped && answer.interrupted ? stopped : answer.error ? 'error' : 'ok',
      ...(answer.value !== null ? { value: answer.value } : {}),
      ...(answer.error !== null ? { error: answer.error } : {}),
      stdout,
      stderr,
      stdoutBytes: answer.stdoutTotal,
      stderrBytes: answer.stderrTotal,
      durationMs: Date.now() - started,
      stateLost: false,
      images: answer.images.map((image) => ({
        mime: image.mime,
        data: Buffer.from(image.data, 'base64'),
        source: image.source,
      })),
      notices: answer.imagesDropped.length
        ? [`Images not returned (at most 4, of 5 MiB each): ${answer.imagesDropped.join(', ')}.`]
        : [],
    };
  }

  private lost(started: number, why: string, stopped?: 'timeout' | 'cancelled'): EvalResult {
    return {
      outcome: stopped ?? 'crashed',
      error: why,
      stdout: '',
      stderr: '',
      stdoutBytes: 0,
      stderrBytes: 0,
      durationMs: Date.now() - started,
      stateLost: true,
      images: [],
      notices: [],
    };
  }

  private receive(chunk: Buffer): void {
    this.lines += chunk.toString('utf8');
    for (let newline = this.lines.indexOf('\n'); newline >= 0; newline = this.lines.indexOf('\n')) {
      const line = this.lines.slice(0, newline);
      this.lines = this.lines.slice(newline + 1);
      const message = safeJson(line);
      const started = startedSchema.safeParse(message);
      if (started.success) {
        this.starting.get(started.data.started)?.();
        continue;
      }
      const ended = endedSchema.safeParse(message);
      if (ended.success) {
        this.kernelEnded(ended.data.ended);
        continue;
      }
      const parsed = replySchema.safeParse(message);
      if (parsed.success) this.waiting.get(parsed.data.id)?.(parsed.data);
    }
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
