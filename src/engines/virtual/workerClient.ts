/**
 * The main thread's handle on one sandbox's worker: requests with replies, a watchdog that ends a
 * worker whose command ignores its deadline or a cancellation, and the reason when a worker ends.
 */
import type { Worker } from 'node:worker_threads';
import { SandboxError } from '../../core/errors';
import type { NetworkDecision } from '../../core/network/egressProxy';
import { startWorker, type WorkerLocation } from './location';
import type {
  ExecPayload,
  ExecReply,
  WireError,
  WorkerConfigure,
  WorkerMessage,
  WorkerRequest,
  WorkerSetup,
} from './protocol';

/** How long past its deadline (or a cancellation) a command may take to stop before its worker is ended. */
export const STOP_GRACE_MS = 3000;
const START_TIMEOUT_MS = 60_000;

type Pending = { resolve: (value: unknown) => void; reject: (error: unknown) => void };
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;
type Request = WithoutId<WorkerRequest>;

/** The worker ended while a request was under way. */
export class WorkerGone extends Error {
  constructor(
    readonly why: string,
    readonly outOfMemory: boolean,
  ) {
    super(why);
  }
}

export class WorkerClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private ended: WorkerGone | undefined;
  private readonly exitListeners = new Set<(gone: WorkerGone) => void>();
  private decisionListener: ((decision: NetworkDecision) => void) | undefined;

  private constructor(
    private readonly worker: Worker,
    /** Settles once just-bash is loaded: 'booted' (it waits for its sandbox), or 'ready' when the worker needs no setup. */
    private readonly booted: Promise<'booted' | 'ready'>,
  ) {
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'decision') return this.decisionListener?.(message.decision);
      if (message.type !== 'reply') return;
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (message.ok) pending.resolve(message.value);
      else pending.reject(fromWire(message.error));
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const oom = error.code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.end(new WorkerGone(oom ? 'it ran out of memory' : `its interpreter failed (${error.message})`, oom));
    });
    worker.on('exit', () => this.end(new WorkerGone('its interpreter stopped', false)));
  }

  /**
   * Starts a worker that loads just-bash and warms it up, then waits for the sandbox it is for
   * (configure). It does not keep the process alive until it is configured.
   */
  static boot(location: WorkerLocation, heapLimitMb: number, cpython?: WebAssembly.Module): WorkerClient {
    // Nothing a sandboxed program does reaches the host's console: the worker's own streams are drained and dropped.
    const options = {
      resourceLimits: { maxOldGenerationSizeMb: heapLimitMb },
      stdout: true,
      stderr: true,
      // With CPython, the worker also starts the interpreter of its sandbox's first python3 command.
      ...(cpython ? { workerData: { cpython } } : {}),
    };
    const worker = startWorker(location.entry, location.typescript, options);
    worker.stdout.resume();
    worker.stderr.resume();
    worker.unref();
    const booted = firstWord(worker, ['booted', 'ready'], 'The virtual engine did not start within a minute.');
    // A worker that failed to boot is ended; whoever configures it hears why.
    booted.catch(() => void worker.terminate());
    return new WorkerClient(worker, booted as Promise<'booted' | 'ready'>);
  }

  /** Starts a worker for this sandbox and waits until its file system is built. */
  static async start(
    location: WorkerLocation,
    setup: WorkerSetup,
    heapLimitMb: number,
    cpython?: WebAssembly.Module,
  ): Promise<WorkerClient> {
    const client = WorkerClient.boot(location, heapLimitMb);
    await client.configure(setup, cpython);
    return client;
  }

  /** Settles when just-bash is loaded, or the boot failed. */
  async whenBooted(): Promise<void> {
    await this.booted.catch(() => undefined);
  }

  /** Gives a booted worker its sandbox, and waits until its file system is built; the worker is ended if that fails. */
  async configure(setup: WorkerSetup, cpython?: WebAssembly.Module): Promise<void> {
    this.worker.ref();
    try {
      if ((await this.booted) === 'ready') return;
      const ready = firstWord(this.worker, ['ready'], 'The virtual engine did not set up its sandbox within a minute.');
      this.worker.postMessage({ type: 'setup', setup, ...(cpython ? { cpython } : {}) } satisfies WorkerConfigure);
      await ready;
    } catch (error) {
      this.kill('it did not start');
      throw error;
    }
  }

  /** Why the worker is gone; undefined while it runs. */
  get gone(): WorkerGone | undefined {
    return this.ended;
  }

  onExit(listener: (gone: WorkerGone) => void): void {
    this.exitListeners.add(listener);
  }

  /** Told of every network decision the worker's fetch makes (allowlist sandboxes). */
  onDecision(listener: (decision: NetworkDecision) => void): void {
    this.decisionListener = listener;
  }

  request<T>(request: Request): Promise<T> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.worker.postMessage({ ...request, id } as WorkerRequest);
    });
  }

  /** A request that the signal cancels inside the worker (it stops the work, and replies as it sees fit). */
  cancellable<T>(request: Request, signal?: AbortSignal): Promise<T> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.nextId;
    const reply = this.request<T>(request);
    const onAbort = () => void this.request({ type: 'abort', target: id }).catch(() => undefined);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    return reply.finally(() => signal?.removeEventListener('abort', onAbort));
  }

  /**
   * Runs a command. Its own deadline stops it inside the worker; if it does not stop within the
   * grace period after the deadline or a cancellation (a busy loop inside one command), the worker
   * is ended and WorkerGone says why.
   */
  exec(payload: ExecPayload, signal?: AbortSignal): Promise<ExecReply> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.nextId;
    const reply = this.request<ExecReply>({ type: 'exec', ...payload });
    let watchdog = setTimeout(
      () => this.kill('a command ran past its time limit and could not be stopped'),
      payload.timeoutMs + STOP_GRACE_MS,
    );
    const onAbort = () => {
      if (this.ended) return;
      void this.request({ type: 'abort', target: id }).catch(() => undefined);
      clearTimeout(watchdog);
      watchdog = setTimeout(() => this.kill('a cancelled command could not be stopped'), STOP_GRACE_MS);
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    return reply.finally(() => {
      clearTimeout(watchdog);
      signal?.removeEventListener('abort', onAbort);
    });
  }

  /** Ends the worker and everything it runs; pending requests fail with WorkerGone. */
  kill(why: string): void {
    this.end(new WorkerGone(why, false));
    void this.worker.terminate();
  }

  private end(gone: WorkerGone): void {
    if (this.ended) return;
    this.ended = gone;
    for (const pending of this.pending.values()) pending.reject(gone);
    this.pending.clear();
    for (const listener of this.exitListeners) listener(gone);
    this.exitListeners.clear();
  }
}

/** Waits for the worker's first message, which must be one of the words; a failure, an error or a minute's silence rejects. */
function firstWord(worker: Worker, words: string[], late: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => done(new SandboxError('engine-error', late, 'Try again; if it persists, use the Docker engine.')),
      START_TIMEOUT_MS,
    );
    // A waiting spare keeps no process alive, not even through this timer.
    timer.unref();
    const onMessage = (message: WorkerMessage) => {
      if (words.includes(message.type)) done(undefined, message.type);
      else if (message.type === 'failed') done(fromWire(message.error));
    };
    const onError = (error: Error) =>
      done(
        new SandboxError(
          'engine-error',
          `The virtual engine could not start: ${error.message}`,
          'Reinstall the extension, or use the Docker engine.',
          { cause: error },
        ),
      );
    const onExit = () =>
      done(
        new SandboxError(
          'engine-error',
          'The virtual engine stopped while it started.',
          'Try again; if it persists, use the Docker engine.',
        ),
      );
    const done = (error: Error | undefined, word?: string) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (error) reject(error);
      else resolve(word!);
    };
    worker.on('message', onMessage);
    worker.once('error', onError);
    worker.once('exit', onExit);
  });
}

function fromWire(error: WireError): SandboxError {
  return new SandboxError(error.reason, error.message, error.hint);
}
