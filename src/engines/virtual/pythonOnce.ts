/**
 * A python3 command in the sandbox's worker: a new CPython in a worker thread of its own
 * (pythonWorker.ts), on the module the engine's process compiled once (cpythonModule.ts), over the
 * sandbox's files at their own paths. Each command gets a new interpreter that ends with it, so no
 * state of one run reaches the next. At its deadline or a cancellation the thread is ended.
 */
import { MessageChannel } from 'node:worker_threads';
import type { IFileSystem } from 'just-bash';
import { pythonWorkerLocation, startWorker } from './location';
import { SHARED_BYTES, sendToPython, type FromPython, type FsOp, type PythonWorkerSetup } from './pythonChannel';
import { doFsOp, errnoOf } from './pythonInstance';

export interface PythonOnceOptions {
  fs: IFileSystem;
  module: WebAssembly.Module;
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

export function runPythonOnce(options: PythonOnceOptions): Promise<PythonOnceResult> {
  const location = pythonWorkerLocation();
  const shared = new SharedArrayBuffer(SHARED_BYTES);
  const view = new Int32Array(shared);
  const { port1: inbox, port2 } = new MessageChannel();
  const setup: PythonWorkerSetup & { module: WebAssembly.Module } = {
    cpython: location.cpython,
    shared,
    inbox: port2,
    env: options.env,
    cwd: options.cwd,
    outputCap: options.outputCap,
    memoryBytes: options.memoryBytes,
    maxFileBytes: options.maxFileBytes,
    once: { argv: options.argv, stdin: options.stdin },
    module: options.module,
  };
  const worker = startWorker(location.entry, location.typescript, {
    workerData: setup,
    transferList: [port2],
    stdout: true,
    stderr: true,
  });
  worker.stdout.resume();
  worker.stderr.resume();
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
      inbox.close();
      void worker.terminate();
      resolve(result);
    };
    const stop = (why: string, exitCode: number) => finish({ exitCode, stdout: '', stderr: `python3: ${why}\n` });
    const timer = setTimeout(() => stop('ended at its time limit', 124), options.timeoutMs);
    const onAbort = () => stop('stopped', 130);
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (message: FromPython) => {
      if (message.type === 'fs') void serve(message);
      else if (message.type === 'exited')
        finish({
          exitCode: message.exitCode,
          stdout: Buffer.from(message.stdout).toString('latin1'),
          stderr:
            Buffer.from(message.stderr).toString('utf8') + dropped(message.stdoutBytes, message.stderrBytes, options),
        });
      else if (message.type === 'ended') stop(message.why, 1);
    });
    worker.on('error', (error: Error & { code?: string }) =>
      stop(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? 'the interpreter ran out of memory'
          : `the interpreter failed (${error.message})`,
        1,
      ),
    );
    worker.on('exit', () => stop('the interpreter stopped', 1));
  });
}

/** Says what was left out when a stream wrote past the cap. */
function dropped(stdoutBytes: number, stderrBytes: number, options: PythonOnceOptions): string {
  const over = [
    stdoutBytes > options.outputCap ? `stdout (${stdoutBytes} bytes)` : '',
    stderrBytes > options.outputCap ? `stderr (${stderrBytes} bytes)` : '',
  ].filter(Boolean);
  return over.length ? `python3: output past ${options.outputCap} bytes was dropped: ${over.join(', ')}\n` : '';
}
