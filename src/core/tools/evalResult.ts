/**
 * A persistent interpreter's answer as an exec result, so that it is formatted, cut to the budget
 * and redacted exactly like a command's: the final expression's value rides along (ExecResult.value),
 * a traceback follows stderr, and the hint says what became of the state.
 */
import type { ExecResult } from '../engine/engine';
import type { EvalResult } from '../interpreters/interpreter';
import type { SandboxSpec } from '../spec/spec';

const OUTCOMES: Record<EvalResult['outcome'], ExecResult['outcome']> = {
  ok: 'ok',
  error: 'error',
  timeout: 'timeout',
  cancelled: 'cancelled',
  crashed: 'error',
};

export function evalAsExec(
  result: EvalResult,
  timeoutSeconds: number,
  limits: SandboxSpec['limits'],
  notices: readonly string[],
): ExecResult {
  const stderr = result.error
    ? `${result.stderr}${result.stderr && !result.stderr.endsWith('\n') ? '\n' : ''}${result.error}`
    : result.stderr;
  return {
    outcome: OUTCOMES[result.outcome],
    exitCode: null,
    stdout: result.stdout,
    stderr,
    stdoutBytes: result.stdoutBytes,
    stderrBytes: result.stderrBytes + (result.error ? Buffer.byteLength(result.error) : 0),
    stdoutTruncated: result.stdoutBytes > limits.maxStdoutBytes,
    stderrTruncated: result.stderrBytes > limits.maxStderrBytes,
    durationMs: result.durationMs,
    ...(result.value !== undefined ? { value: result.value } : {}),
    ...(hint(result, timeoutSeconds) ? { hint: hint(result, timeoutSeconds) } : {}),
    notices: [...notices, ...result.notices],
  };
}

function hint(result: EvalResult, timeoutSeconds: number): string | undefined {
  if (result.stateLost)
    return "The interpreter's state is gone (variables, imports): the next call with code starts a new interpreter; run your setup code again.";
  if (result.notStarted)
    return 'The interpreter was busy with other calls (from other windows or clients) and did not start this code; nothing of it ran and the state is kept. Call again once they are done, or raise timeout_seconds.';
  if (result.outcome === 'timeout')
    return `The code was interrupted at its ${timeoutSeconds} s limit; the interpreter and its state are kept. Do less per call, or raise timeout_seconds.`;
  if (result.outcome === 'cancelled') return 'The code was interrupted; the interpreter and its state are kept.';
  if (result.outcome === 'error')
    return 'Read the traceback in stderr, fix the code and run it again; what the code defined before the error is kept.';
  return undefined;
}
