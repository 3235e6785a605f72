/**
 * A python3 command in the sandbox's worker: a new CPython in a worker thread of its own
 * (pythonWorker.ts), on the module the engine's process compiled once (cpythonModule.ts), over the
 * sandbox's files at their own paths. Each command gets a new interpreter that ends with it, so no
 * state of one run reaches the next; the sandbox's first one is started with its worker, before the
 * sandbox exists, and has run nothing. At its deadline or a cancellation the thread is ended.
 */
import { AsyncResource } from 'node:async_hooks';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import type { IFileSystem } from 'just-bash';
import { pythonWorkerLocation, startWorker } from './location';
import { SHARED_BYTES, sendToPython, type FromPython, type FsOp, type PythonWorkerSetup } from './pythonChannel';
import { doFsOp, errnoOf } from './pythonInstance';

export interface PythonOnceOptions {
  fs: IFileSystem;
  /** The arguments after `python3`, as the command got them. */
  argv: string[];
  stdin: Uint8Array;
  env: Record<string, string>;
  cwd: string;
  /** Most bytes of stdout, and of stderr, kept. */
  outputCap: number;
  memoryBytes: number;
  /** Largest file it may hold open for writing, and read whole. */
  maxFileBytes: number;
  maxFileReadBytes: number;
  /** Past this the interpreter is ended (the shell's own deadline comes first and reports it). */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface PythonOnceResult {
  exitCode: number;
  /** Its bytes, one character each (latin1), as just-bash passes bytes on. */
  stdout: string;
  stderr: string;
}

/**
 * One CPython for one python3 command: started ahead (CPython loaded, waiting in its thread), then
 * given the command, and ended with it.
 */
export class PythonProcess {
  private readonly worker: Worker;
  private readonly view: Int32Array;
  private readonly inbox: MessagePort;
  /** Why it ended before its command came. */
  private failed: string | undefined;
  private onMessage: ((message: FromPython) => void) | undefined;
  private onEnd: ((why: string) => void) | undefined;
  /** Settles when the interpreter waits for its command, or has failed. */
  readonly loaded: Promise<void>;
  private markLoaded: () => void = () => undefined;

  constructor(module: WebAssembly.Module) {
    const location = pythonWorkerLocation();
    const shared = new SharedArrayBuffer(SHARED_BYTES);
    this.view = new Int32Array(shared);
    const { port1: inbox, port2 } = new MessageChannel();
    this.inbox = inbox;
    // env, cwd and the limits come with the command.
    const setup: PythonWorkerSetup & { module: WebAssembly.Module } = {
      cpython: location.cpython,
      shared,
      inbox: port2,
      env: {},
      cwd: '/',
      outputCap: 0,
      memoryBytes: 0,
      maxFileBytes: 0,
      once: true,
      module,
    };
    this.worker = startWorker(location.entry, location.typescript, {
      workerData: setup,
      transferList: [port2],
      stdout: true,
      stderr: true,
    });
    this.worker.stdout.resume();
    this.worker.stderr.resume();
    // A waiting interpreter keeps no thread alive.
    this.worker.unref();
    this.loaded = new Promise((resolve) => (this.markLoaded = resolve));
    const end = (why: string) => {
      this.markLoaded();
      this.failed ??= why;
      this.onEnd?.(why);
    };
    this.worker.on('message', (message: FromPython) => {
      if (message.type === 'loaded') this.markLoaded();
      else if (message.type === 'ended') end(message.why);
      else this.onMessage?.(message);
    });
    this.worker.on('error', (error: Error & { code?: string }) =>
      end(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? 'the interpreter ran out of memory'
          : `the interpreter failed (${error.message})`,
      ),
    );
    this.worker.on('exit', () => end('the interpreter stopped'));
  }

  /** Runs the command and ends the interpreter. */
  run(options: PythonOnceOptions): Promise<PythonOnceResult> {
    const { view, inbox } = this;
    this.worker.ref();
    const serve = (op: FsOp) =>
      doFsOp(options.fs, op, options.maxFileReadBytes).then(
        (value) => sendToPython(view, inbox, { type: 'fs-reply', ok: true, value }),
        (error: unknown) => sendToPython(view, inbox, { type: 'fs-reply', ok: false, code: errnoOf(error) }),
      );
    return new Promise<PythonOnceResult>((resolve) => {
      let finished = false;
      const finish = (result: PythonOnceResult) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        this.kill();
        resolve(result);
      };
      const stop = (why: string, exitCode: number) => finish({ exitCode, stdout: '', stderr: `python3: ${why}\n` });
      const timer = setTimeout(() => stop('ended at its time limit', 124), options.timeoutMs);
      const onAbort = () => stop('stopped', 130);
      if (this.failed) return stop(this.failed, 1);
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      // Its messages are handled in the command's own context: just-bash's defense in depth refuses file
      // operations from code outside a command while one runs, and the listener was added before it.
      this.onEnd = AsyncResource.bind((why: string) => stop(why, 1));
      this.onMessage = AsyncResource.bind((message: FromPython) => {
        if (message.type === 'fs') void serve(message);
        else if (message.type === 'exited')
          finish({
            exitCode: message.exitCode,
            stdout: Buffer.from(message.stdout).toString('latin1'),
            stderr:
              Buffer.from(message.stderr).toString('utf8') + dropped(message.stdoutBytes, message.stderrBytes, options),
          });
      });
      sendToPython(view, inbox, {
        type: 'command',
        argv: options.argv,
        stdin: options.stdin,
        env: options.env,
        cwd: options.cwd,
        outputCap: options.outputCap,
        memoryBytes: options.memoryBytes,
        maxFileBytes: options.maxFileBytes,
      });
    });
  }

  kill(): void {
    this.failed ??= 'it was ended';
    this.inbox.close();
    void this.worker.terminate();
  }
}

/** Says what was left out when a stream wrote past the cap. */
function dropped(stdoutBytes: number, stderrBytes: number, options: PythonOnceOptions): string {
  const over = [
    stdoutBytes > options.outputCap ? `stdout (${stdoutBytes} bytes)` : '',
    stderrBytes > options.outputCap ? `stderr (${stderrBytes} bytes)` : '',
  ].filter(Boolean);
  return over.length ? `python3: output past ${options.outputCap} bytes was dropped: ${over.join(', ')}\n` : '';
}
