/**
 * One persistent Python of a virtual sandbox, as the sandbox's worker holds it: the Python worker
 * thread (pythonWorker.ts), the file operations it asks for done on the sandbox's file system, its
 * calls, its interrupt, and its end.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import type { IFileSystem } from 'just-bash';
import { pythonWorkerLocation, startWorker } from './location';
import {
  SHARED_BYTES,
  SIGINT,
  SIGNAL,
  sendToPython,
  type FromPython,
  type FsOp,
  type FsStat,
  type PythonWorkerSetup,
} from './pythonChannel';

export type PythonReply = Extract<FromPython, { type: 'reply' }>['result'];

const START_TIMEOUT_MS = 60_000;

/** CPython's WebAssembly, compiled here when the engine's process did not send its own (cpythonModule.ts). */
let compiled: Promise<WebAssembly.Module> | undefined;

export interface PythonInstanceOptions extends Omit<PythonWorkerSetup, 'cpython' | 'shared' | 'inbox'> {
  fs: IFileSystem;
  /** Largest file it may read whole. */
  maxFileReadBytes: number;
  /** CPython compiled once per process; compiled here when absent. */
  module?: WebAssembly.Module;
}

export class PythonInstance {
  /** Why it ended, once it has. */
  ended: string | undefined;
  calls = 0;
  private waiting: { id: number; resolve: (reply: PythonReply | undefined) => void } | undefined;

  private constructor(
    private readonly worker: Worker,
    private readonly view: Int32Array,
    private readonly inbox: MessagePort,
    readonly version: string,
  ) {}

  static async start(options: PythonInstanceOptions): Promise<PythonInstance> {
    const location = pythonWorkerLocation();
    const module = options.module ?? (await compileHere(location.cpython));
    const shared = new SharedArrayBuffer(SHARED_BYTES);
    const view = new Int32Array(shared);
    const { port1: inbox, port2 } = new MessageChannel();
    const { fs, maxFileReadBytes, module: _shared, ...rest } = options;
    const setup: PythonWorkerSetup & { module: WebAssembly.Module } = {
      ...rest,
      cpython: location.cpython,
      shared,
      inbox: port2,
      module,
    };
    // Its own streams carry nothing of the code's (captured per call); they are drained and dropped.
    const worker = startWorker(location.entry, location.typescript, {
      workerData: setup,
      transferList: [port2],
      stdout: true,
      stderr: true,
    });
    worker.stdout.resume();
    worker.stderr.resume();
    const serve = (op: FsOp) =>
      doFsOp(fs, op, maxFileReadBytes).then(
        (value) => sendToPython(view, inbox, { type: 'fs-reply', ok: true, value }),
        (error: unknown) => sendToPython(view, inbox, { type: 'fs-reply', ok: false, code: errnoOf(error) }),
      );
    // The instance once it is ready; messages before that are the start's.
    const started: { instance?: PythonInstance } = {};
    const version = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('it did not start within a minute')), START_TIMEOUT_MS);
      worker.on('message', (message: FromPython) => {
        if (message.type === 'fs') void serve(message);
        else if (message.type === 'ready') {
          clearTimeout(timer);
          resolve(message.version);
        } else if (message.type === 'reply') started.instance?.answer(message.id, message.result);
        else if (message.type === 'ended') {
          clearTimeout(timer);
          reject(new Error(message.why));
          started.instance?.end(message.why);
          void worker.terminate();
        }
      });
      worker.on('error', (error) => {
        const why = `The Python interpreter failed (${error.message}).`;
        clearTimeout(timer);
        reject(new Error(why));
        started.instance?.end(why);
      });
      worker.on('exit', () => {
        clearTimeout(timer);
        reject(new Error('The Python interpreter stopped.'));
        started.instance?.end('The Python interpreter stopped.');
      });
    }).catch(async (error: unknown) => {
      await worker.terminate();
      throw error;
    });
    started.instance = new PythonInstance(worker, view, inbox, version);
    return started.instance;
  }

  /** Runs code; undefined when the interpreter ended first. */
  run(id: number, code: string): Promise<PythonReply | undefined> {
    if (this.ended) return Promise.resolve(undefined);
    // A signal meant for the last call, left in the slot, must not interrupt this one.
    Atomics.store(this.view, SIGNAL, 0);
    return new Promise((resolve) => {
      this.waiting = { id, resolve };
      sendToPython(this.view, this.inbox, { type: 'run', id, code });
    });
  }

  /** Raises KeyboardInterrupt in the running code (at its next bytecode check, or in time.sleep). */
  interrupt(): void {
    Atomics.store(this.view, SIGNAL, SIGINT);
    Atomics.notify(this.view, SIGNAL);
  }

  /** Ends the interpreter and its state. */
  kill(why: string): void {
    this.end(why);
    void this.worker.terminate();
  }

  private answer(id: number, reply: PythonReply): void {
    if (this.waiting?.id !== id) return;
    this.calls++;
    const { resolve } = this.waiting;
    this.waiting = undefined;
    resolve(reply);
  }

  private end(why: string): void {
    if (this.ended) return;
    this.ended = why;
    this.inbox.close();
    this.waiting?.resolve(undefined);
    this.waiting = undefined;
  }
}

function compileHere(cpython: string): Promise<WebAssembly.Module> {
  compiled ??= WebAssembly.compile(readFileSync(join(cpython, 'python.wasm'))).catch((error: unknown) => {
    compiled = undefined;
    throw error;
  });
  return compiled;
}

export async function doFsOp(fs: IFileSystem, op: FsOp, maxFileReadBytes: number): Promise<unknown> {
  switch (op.op) {
    case 'lstat': {
      const stat = await fs.lstat(op.path);
      const kind = stat.isSymbolicLink ? 'symlink' : stat.isDirectory ? 'directory' : 'file';
      return { kind, mode: stat.mode, size: stat.size, mtimeMs: stat.mtime.getTime() } satisfies FsStat;
    }
    case 'readdir':
      return fs.readdir(op.path);
    case 'read': {
      if ((await fs.stat(op.path)).size > maxFileReadBytes) throw new Error('EFBIG');
      return fs.readFileBuffer(op.path);
    }
    case 'write':
      return fs.writeFile(op.path, op.data);
    case 'mkdir':
      return fs.mkdir(op.path);
    case 'rm':
      return fs.rm(op.path);
    case 'rename':
      return fs.mv(op.from, op.to);
    case 'symlink':
      return fs.symlink(op.target, op.path);
    case 'readlink':
      return fs.readlink(op.path);
    case 'chmod':
      return fs.chmod(op.path, op.mode);
    case 'utimes':
      return fs.utimes(op.path, new Date(op.mtime), new Date(op.mtime));
  }
}

/** The errno's name of a file system error ("ENOENT: no such file…", a code, or words). */
export function errnoOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  const message = error instanceof Error ? error.message : String(error);
  const named = /^(E[A-Z]+)\b/.exec(message)?.[1];
  if (named) return named;
  if (/byte limit exceeded|no space/i.test(message)) return 'ENOSPC';
  if (/read-only/i.test(message)) return 'EROFS';
  if (/not found|no such file/i.test(message)) return 'ENOENT';
  if (/permission|not allowed|protected/i.test(message)) return 'EACCES';
  return 'EIO';
}
