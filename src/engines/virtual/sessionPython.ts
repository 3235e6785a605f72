/**
 * The session's persistent Python, in the sandbox's worker: started on first use, shared by every
 * handle of this process (calls run one at a time, each with its own clock from when it starts), a
 * new one after the last ended (saying once how that one ended). At a call's deadline, or when it is
 * cancelled, the code is interrupted (KeyboardInterrupt, the state is kept); code that does not stop
 * within INTERRUPT_GRACE_MS is ended with its interpreter, and the result says the state was lost.
 */
import type { IFileSystem } from 'just-bash';
import { stateLostResult, type EvalResult } from '../../core/interpreters/persistentInterpreter';
import { SandboxError } from '../../core/errors';
import { WORKSPACE_DIR } from '../../core/files/paths';
import { PythonInstance } from './pythonInstance';
import type { PythonOpenPayload, PythonOpened, PythonRunPayload, WorkerSetup } from './protocol';

/** As long as the Docker engine's interpreter gives interrupted code (core/interpreters/interpreter.ts). */
export const INTERRUPT_GRACE_MS = 5_000;

export class SessionPython {
  private instance: PythonInstance | undefined;
  private starting: Promise<PythonInstance> | undefined;
  private generation = 0;
  /** How the last interpreter ended, until a new one has said so. */
  private unreported: string | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 1;

  constructor(
    private readonly fs: IFileSystem,
    private readonly setup: WorkerSetup,
    /** CPython compiled by the engine's process, shared by every interpreter it starts. */
    private readonly cpython?: WebAssembly.Module,
  ) {}

  async open(payload: PythonOpenPayload): Promise<PythonOpened> {
    const instance = await this.running(payload);
    const previousEnd = instance.calls === 0 ? this.unreported : undefined;
    if (previousEnd) this.unreported = undefined;
    return {
      generation: this.generation,
      version: instance.version,
      calls: instance.calls,
      ...(previousEnd ? { previousEnd } : {}),
    };
  }

  run(payload: PythonRunPayload, signal: AbortSignal): Promise<EvalResult> {
    const call = this.queue.then(() => this.runNow(payload, signal));
    this.queue = call.catch(() => undefined);
    return call;
  }

  private async running(payload: PythonOpenPayload): Promise<PythonInstance> {
    if (this.instance && !this.instance.ended) return this.instance;
    this.starting ??= PythonInstance.start({
      fs: this.fs,
      env: payload.env,
      cwd: WORKSPACE_DIR,
      outputCap: payload.outputCap,
      memoryBytes: payload.memoryBytes,
      maxFileBytes: this.setup.maxMemoryBytes,
      maxFileReadBytes: this.setup.maxFileReadBytes,
      ...(this.cpython ? { module: this.cpython } : {}),
    })
      .catch((error: unknown) => {
        throw new SandboxError(
          'engine-error',
          `The Python interpreter did not start: ${(error as Error).message}`,
          'Run the code with command (python3 -c ...) to see what fails; if it persists, reopen the session.',
        );
      })
      .then((instance) => {
        if (this.instance?.ended) this.unreported = this.instance.ended;
        this.instance = instance;
        this.generation++;
        return instance;
      })
      .finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async runNow(payload: PythonRunPayload, signal: AbortSignal): Promise<EvalResult> {
    const started = Date.now();
    const instance = this.instance;
    if (!instance || instance.ended || payload.generation !== this.generation)
      return stateLostResult(started, instance?.ended ?? 'The Python interpreter had ended.');
    let stopped: 'timeout' | 'cancelled' | undefined;
    let grace: NodeJS.Timeout | undefined;
    const stop = (why: 'timeout' | 'cancelled') => {
      if (stopped) return;
      stopped = why;
      instance.interrupt();
      grace = setTimeout(
        () =>
          instance.kill(
            `The Python interpreter was ended: its code ${why === 'timeout' ? 'ran past its time limit' : 'was cancelled'} and did not stop within ${INTERRUPT_GRACE_MS / 1000} s of being interrupted.`,
          ),
        INTERRUPT_GRACE_MS,
      );
    };
    const timer = setTimeout(() => stop('timeout'), payload.timeoutMs);
    const onAbort = () => stop('cancelled');
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    const reply = await instance.run(this.nextId++, payload.code).finally(() => {
      clearTimeout(timer);
      clearTimeout(grace);
      signal.removeEventListener('abort', onAbort);
    });
    if (!reply)
      return stateLostResult(started, instance.ended ?? 'The Python interpreter ended during the call.', stopped);
    const { interrupted, ...rest } = reply;
    return {
      ...rest,
      outcome: stopped && interrupted ? stopped : reply.error !== undefined ? 'error' : 'ok',
      durationMs: Date.now() - started,
      stateLost: false,
    };
  }
}
