/**
 * A session's persistent interpreter as the tools use it, whatever keeps it: a kernel process in
 * the sandbox (interpreter.ts, for engines with processes) or the engine itself (the virtual
 * engine's WebAssembly Python, through Sandbox.openInterpreter).
 */
import type { ImageOutput } from '../results/images';
import type { InterpreterLanguage } from './kernels';

export interface EvalResult {
  outcome: 'ok' | 'error' | 'timeout' | 'cancelled' | 'crashed';
  /** The repr of the final expression's value, when it had one. */
  value?: string;
  /** The traceback of an exception (or a KeyboardInterrupt after a timeout). */
  error?: string;
  stdout: string;
  stderr: string;
  stdoutBytes: number;
  stderrBytes: number;
  durationMs: number;
  /** The state is gone: the interpreter ended or was killed. */
  stateLost: boolean;
  /** The interpreter never started the code (it was busy with other calls until the limit): nothing ran. */
  notStarted?: boolean;
  /** Figures left open, an image value, pictures written to /tmp/outputs during the call. */
  images: ImageOutput[];
  notices: string[];
}

export interface RunOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface PersistentInterpreter {
  readonly language: InterpreterLanguage;
  /** The language's version, e.g. 3.11.2. */
  readonly version: string;
  /** Calls the interpreter had run when this handle reached it (0: a new interpreter). */
  readonly callsBefore: number;
  /** How the session's last interpreter ended, when this one replaced it: its state is gone. */
  readonly previousEnd: string | undefined;
  /** Whether it still runs: a new call on one that ended starts a new interpreter. */
  readonly alive: boolean;
  /** Why it ended, once it has. */
  readonly endReason: string | undefined;
  /** Runs code after the calls before it; never throws for the code's own failures. */
  run(code: string, options: RunOptions): Promise<EvalResult>;
  /** Ends this handle; the interpreter, and its state, stay with the session. */
  close(): Promise<void>;
}

/** A call whose interpreter ended (or had ended) before it answered: the state is gone. */
export function stateLostResult(startedMs: number, why: string, stopped?: 'timeout' | 'cancelled'): EvalResult {
  return {
    outcome: stopped ?? 'crashed',
    error: why,
    stdout: '',
    stderr: '',
    stdoutBytes: 0,
    stderrBytes: 0,
    durationMs: Date.now() - startedMs,
    stateLost: true,
    images: [],
    notices: [],
  };
}
