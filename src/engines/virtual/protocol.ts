/** Messages between a virtual sandbox (main thread) and its worker thread, where just-bash runs. */
import type { SandboxErrorReason } from '../../core/errors';
import type { FileContent, FileEntry, ListResult, WriteResult } from '../../core/engine/engine';
import type { EvalResult } from '../../core/interpreters/persistentInterpreter';
import type { NetworkDecision } from '../../core/network/egressProxy';
import type { WorkspaceAccess } from '../../core/spec/spec';
import type { AllowlistNetwork } from './allowlistFetch';

/** How the worker builds its sandbox (sent once it has loaded just-bash, in WorkerConfigure). */
export interface WorkerSetup {
  access: WorkspaceAccess;
  /** The host folder behind /workspace for ro and rw. */
  folder?: string;
  python: boolean;
  /** js-exec (QuickJS) is usable only where Node.js has stripTypeScriptTypes (22.6+). */
  javascript: boolean;
  /** Most bytes of files kept in memory (the in-memory file system and the overlay's writes). */
  maxMemoryBytes: number;
  /** Largest workspace file a program may read through the mount. */
  maxFileReadBytes: number;
  /** Names at the top of the folder that an rw sandbox may not create, change, rename or remove. */
  protectedPaths: readonly string[];
  /** The allowlist that curl and wget reach through (the `allowlist` network tier); no network commands without it. */
  network?: AllowlistNetwork;
  /** Most bytes the heap of a python3 command may grow to (the sandbox's memory limit). */
  pythonMemoryBytes: number;
}

/** The first message to a worker that said it booted: the sandbox it is for, and CPython compiled once per process. */
export interface WorkerConfigure {
  type: 'setup';
  setup: WorkerSetup;
  cpython?: WebAssembly.Module;
}

export interface ExecPayload {
  /** Shell source, run by just-bash's bash. */
  script: string;
  /** Run this script file's content in place of `script` (so output printed before a deadline is kept, as at top level). */
  scriptFile?: string;
  stdin?: string;
  stdinKind?: 'text' | 'bytes';
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Output past this stops the command (just-bash's aggregate output limit). */
  maxOutputBytes: number;
}

export interface ExecReply {
  stdout: string;
  stderr: string;
  exitCode: number;
  timedOut: boolean;
  cancelled: boolean;
}

/** Opens the session's persistent Python, or reaches the one that runs (sessionPython.ts). */
export interface PythonOpenPayload {
  env: Record<string, string>;
  /** Most bytes of stdout, and of stderr, a call returns. */
  outputCap: number;
  /** Most bytes its heap may grow to. */
  memoryBytes: number;
}

export interface PythonOpened {
  /** Which interpreter of the session this is: a call names it, and fails once it has ended. */
  generation: number;
  version: string;
  /** Calls it has run so far (0: a new one). */
  calls: number;
  /** How the session's last interpreter ended, said once, to whoever opens the next. */
  previousEnd?: string;
}

export interface PythonRunPayload {
  generation: number;
  code: string;
  timeoutMs: number;
}

export interface FilePayload {
  path: string;
  data: Uint8Array;
  mode?: number;
}

export type WorkerRequest =
  | ({ id: number; type: 'exec' } & ExecPayload)
  | { id: number; type: 'abort'; target: number }
  /** Places files anywhere (the engine's own files, e.g. a compute-mode program); no path policy. */
  | { id: number; type: 'place'; files: FilePayload[] }
  | { id: number; type: 'write'; files: FilePayload[] }
  | { id: number; type: 'read'; path: string; maxBytes: number; offset: number; encoding: 'utf8' | 'base64' | 'auto' }
  | { id: number; type: 'list'; path: string; depth: number; most: number }
  | { id: number; type: 'delete'; path: string; recursive: boolean }
  | ({ id: number; type: 'python-open' } & PythonOpenPayload)
  | ({ id: number; type: 'python-run' } & PythonRunPayload);

export interface WireError {
  reason: SandboxErrorReason;
  message: string;
  hint?: string;
}

export type WorkerMessage =
  /** just-bash is loaded and warmed up; the worker waits for its WorkerConfigure. */
  | { type: 'booted' }
  /** The sandbox's file system is built; requests may come. */
  | { type: 'ready' }
  | { type: 'failed'; error: WireError }
  /** A network decision of the allowlist, sent when its request ended (before the reply of the command that made it). */
  | { type: 'decision'; decision: NetworkDecision }
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; error: WireError };

export type ReplyValue =
  | ExecReply
  | WriteResult
  | FileContent
  | ListResult
  | { path: string; deleted: boolean }
  | FileEntry[]
  | PythonOpened
  | EvalResult
  | null;
