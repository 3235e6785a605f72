/**
 * A handle on a virtual session's persistent Python (kept by its worker, sessionPython.ts) for the
 * tools: what interpreter it reached, its calls, and its end. Closing a handle keeps the interpreter;
 * closing the session ends it.
 */
import type { InterpreterLanguage } from '../../core/interpreters/kernels';
import {
  stateLostResult,
  type EvalResult,
  type PersistentInterpreter,
  type RunOptions,
} from '../../core/interpreters/persistentInterpreter';
import type { PythonOpenPayload, PythonOpened } from './protocol';
import { WorkerGone, type WorkerClient } from './workerClient';

export class VirtualInterpreter implements PersistentInterpreter {
  readonly language: InterpreterLanguage = 'python';
  private ended: string | undefined;

  private constructor(
    private readonly worker: WorkerClient,
    private readonly opened: PythonOpened,
  ) {}

  static async open(
    worker: WorkerClient,
    payload: PythonOpenPayload,
    signal?: AbortSignal,
  ): Promise<VirtualInterpreter> {
    const opened = await worker.cancellable<PythonOpened>({ type: 'python-open', ...payload }, signal);
    return new VirtualInterpreter(worker, opened);
  }

  get version(): string {
    return this.opened.version;
  }

  get callsBefore(): number {
    return this.opened.calls;
  }

  get previousEnd(): string | undefined {
    return this.opened.previousEnd;
  }

  get alive(): boolean {
    return this.endReason === undefined;
  }

  get endReason(): string | undefined {
    const gone = this.worker.gone;
    return this.ended ?? (gone ? `The virtual sandbox was stopped because ${gone.why}.` : undefined);
  }

  async run(code: string, options: RunOptions): Promise<EvalResult> {
    const started = Date.now();
    if (this.endReason) return stateLostResult(started, this.endReason);
    try {
      const result = await this.worker.cancellable<EvalResult>(
        { type: 'python-run', generation: this.opened.generation, code, timeoutMs: options.timeoutMs },
        options.signal,
      );
      if (result.stateLost) this.ended ??= result.error ?? 'The Python interpreter ended.';
      return result;
    } catch (error) {
      if (!(error instanceof WorkerGone)) throw error;
      return stateLostResult(started, `The virtual sandbox was stopped because ${error.why}; its files are gone too.`);
    }
  }

  async close(): Promise<void> {
    this.ended ??= 'This handle on the interpreter was closed.';
  }
}
