/**
 * How the sandbox's worker and its Python worker talk. CPython runs synchronously in its own thread,
 * so that thread cannot wait for a message event: the sandbox's worker posts to the Python worker's
 * inbox and rings a doorbell (a counter in shared memory) that the Python worker waits on with
 * Atomics.wait before it takes the message with receiveMessageOnPort. The Python worker posts its
 * own messages (file operations, replies) to its parent port as usual.
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { EvalResult } from '../../core/interpreters/persistentInterpreter';

/** Slots of the Int32Array over the shared buffer. */
export const DOORBELL = 0;
/** CPython's signal buffer (Module.Py_EmscriptenSignalBuffer): a signal number here is raised in Python. */
export const SIGNAL = 1;
export const SIGINT = 2;
export const SHARED_BYTES = 8;

/** What the Python worker is started with (its workerData). */
export interface PythonWorkerSetup {
  /** The folder with just-bash's CPython: python.cjs, python.wasm, python313.zip. */
  cpython: string;
  shared: SharedArrayBuffer;
  inbox: MessagePort;
  env: Record<string, string>;
  cwd: string;
  /** Most bytes of stdout (and of stderr) kept per call. */
  outputCap: number;
  /** Most bytes the interpreter's heap may grow to. */
  memoryBytes: number;
  /** Largest file it may hold open for writing. */
  maxFileBytes: number;
  /**
   * For a python3 command (pythonOnce.ts): CPython is loaded ahead and waits for its one command
   * (ToPython 'command'), whose fields replace env, cwd and the limits here. Without it, the worker
   * runs the session's persistent kernel (virtualKernel.ts).
   */
  once?: boolean;
}

/** The one command of a python3 worker: `python3 ARGV` in that folder, reading that stdin. */
export interface PythonCommand {
  argv: string[];
  stdin: Uint8Array;
  env: Record<string, string>;
  cwd: string;
  outputCap: number;
  memoryBytes: number;
  maxFileBytes: number;
}

/** File operations on the sandbox's file system, asked by the Python worker and done by the sandbox's worker. */
export type FsOp =
  | { op: 'lstat'; path: string }
  | { op: 'readdir'; path: string }
  | { op: 'read'; path: string }
  | { op: 'write'; path: string; data: Uint8Array }
  | { op: 'mkdir'; path: string }
  | { op: 'rm'; path: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'symlink'; target: string; path: string }
  | { op: 'readlink'; path: string }
  | { op: 'chmod'; path: string; mode: number }
  | { op: 'utimes'; path: string; mtime: number };

export interface FsStat {
  kind: 'file' | 'directory' | 'symlink';
  mode: number;
  size: number;
  mtimeMs: number;
}

/** Python worker → sandbox's worker. */
export type FromPython =
  | { type: 'ready'; version: string }
  | ({ type: 'fs' } & FsOp)
  | {
      type: 'reply';
      id: number;
      result: Omit<EvalResult, 'durationMs' | 'stateLost' | 'outcome'> & { interrupted: boolean };
    }
  | { type: 'ended'; why: string }
  /** A python3 command's interpreter is loaded and waits for its command. */
  | { type: 'loaded' }
  /** A python3 command ended: its exit code and output (at most outputCap bytes of each stream, the rest counted). */
  | {
      type: 'exited';
      exitCode: number;
      stdout: Uint8Array;
      stderr: Uint8Array;
      stdoutBytes: number;
      stderrBytes: number;
    };

/** Sandbox's worker → Python worker, through the inbox. */
export type ToPython =
  | { type: 'fs-reply'; ok: true; value: unknown }
  | { type: 'fs-reply'; ok: false; code: string }
  | { type: 'run'; id: number; code: string }
  | ({ type: 'command' } & PythonCommand);

/** Sandbox's worker: posts to the inbox and rings. */
export function sendToPython(view: Int32Array, inbox: MessagePort, message: ToPython): void {
  inbox.postMessage(message);
  Atomics.add(view, DOORBELL, 1);
  Atomics.notify(view, DOORBELL);
}

/** Python worker: blocks until the next message arrives in the inbox. */
export function receiveInPython(view: Int32Array, inbox: MessagePort): ToPython {
  for (;;) {
    const rung = Atomics.load(view, DOORBELL);
    const received = receiveMessageOnPort(inbox);
    if (received) return received.message as ToPython;
    Atomics.wait(view, DOORBELL, rung);
  }
}
