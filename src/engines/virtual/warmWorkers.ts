/**
 * A worker kept ready for the next sandbox: just-bash loaded and warmed up, waiting for the sandbox it
 * will serve. Each worker serves one sandbox and ends with it, so nothing of one sandbox (files,
 * variables, modules, a Python's state) can reach the next; what is kept warm is only code that ran
 * on a scratch file system before any sandbox existed. The spare is started with a heap limit, which
 * a worker cannot change, so it serves the next sandbox with the same memory limit (the last one's).
 */
import { cpythonModule } from './cpythonModule';
import { cpythonFolder, type WorkerLocation } from './location';
import type { WorkerSetup } from './protocol';
import { WorkerClient } from './workerClient';

/** A spare no sandbox took for this long is ended (it holds tens of MiB); the next sandbox starts one again. */
const SPARE_IDLE_MS = 10 * 60_000;
/** How long after a take the next spare boots, if the sandbox that took it is still open. */
const REFILL_MS = 1_000;

export class WarmWorkers {
  private spare: { heapLimitMb: number; client: WorkerClient; idle: NodeJS.Timeout } | undefined;
  private disposed = false;
  /** The spare to start after a take: when the sandbox closes, or REFILL_MS later. */
  private pending: { heapLimitMb: number; module: WebAssembly.Module | undefined; timer: NodeJS.Timeout } | undefined;

  constructor(private readonly location: WorkerLocation) {}

  /** A worker configured for this sandbox: the spare when it fits, else a new one; then a spare for the next. */
  async take(setup: WorkerSetup, heapLimitMb: number): Promise<WorkerClient> {
    // Compiled on the main thread while the worker boots (once per process; cpythonModule.ts).
    const cpython = setup.python ? cpythonModule(cpythonFolder(this.location)) : Promise.resolve(undefined);
    const spare = this.spare;
    this.spare = undefined;
    if (spare) clearTimeout(spare.idle);
    let client = spare && spare.heapLimitMb === heapLimitMb && !spare.client.gone ? spare.client : undefined;
    if (spare && !client) spare.client.kill('a sandbox with another memory limit came first');
    client ??= WorkerClient.boot(this.location, heapLimitMb);
    const module = await cpython;
    try {
      await client.configure(setup, module);
    } finally {
      // The next spare boots once this sandbox is closed (a compute run's is, right after its call), so
      // that its boot does not take the CPU from the call; a session's after REFILL_MS.
      clearTimeout(this.pending?.timer);
      const timer = setTimeout(() => this.refillNow(), REFILL_MS);
      timer.unref();
      this.pending = { heapLimitMb, module, timer };
    }
    return client;
  }

  /** A sandbox was closed: the spare it used is replaced now. */
  released(): void {
    this.refillNow();
  }

  /** The spare's boot, for whoever measures without it (a benchmark's untimed pause between calls). */
  async settled(): Promise<void> {
    this.refillNow();
    await this.spare?.client.whenBooted();
  }

  private refillNow(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = undefined;
    clearTimeout(pending.timer);
    this.refill(pending.heapLimitMb, pending.module);
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.pending?.timer);
    this.pending = undefined;
    if (this.spare) {
      clearTimeout(this.spare.idle);
      this.spare.client.kill('the engine was disposed');
    }
    this.spare = undefined;
  }

  private refill(heapLimitMb: number, cpython: WebAssembly.Module | undefined): void {
    if (this.disposed || this.spare) return;
    const client = WorkerClient.boot(this.location, heapLimitMb, cpython);
    const idle = setTimeout(() => {
      if (this.spare?.client !== client) return;
      this.spare = undefined;
      client.kill('no sandbox needed it');
    }, SPARE_IDLE_MS);
    idle.unref();
    this.spare = { heapLimitMb, client, idle };
  }
}
