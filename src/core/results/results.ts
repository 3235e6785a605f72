/** Shapes what happened in a sandbox into an `ExecResult` whose hint says what to do next. Shared by all engines. */
import type { CappedOutput } from './output';
import type { ExecOutcome, ExecResult } from '../engine/engine';
import { diskLimitHint, isDiskFull } from '../limits/diskLimit';
import type { SandboxSpec } from '../spec/spec';
import { formatSize } from '../spec/units';

const SIGNALS: Record<number, string> = {
  1: 'SIGHUP',
  2: 'SIGINT',
  3: 'SIGQUIT',
  4: 'SIGILL',
  6: 'SIGABRT',
  7: 'SIGBUS',
  8: 'SIGFPE',
  9: 'SIGKILL',
  11: 'SIGSEGV',
  13: 'SIGPIPE',
  14: 'SIGALRM',
  15: 'SIGTERM',
  24: 'SIGXCPU',
  25: 'SIGXFSZ',
};

export interface RawOutcome {
  exitCode: number | null;
  timedOut: boolean;
  cancelled: boolean;
  oomKilled: boolean;
  durationMs: number;
  stdout: CappedOutput;
  stderr: CappedOutput;
  timeoutSeconds: number;
  notices?: string[];
}

export function signalName(exitCode: number | null): string | undefined {
  if (exitCode === null || exitCode <= 128 || exitCode > 128 + 64) return undefined;
  return SIGNALS[exitCode - 128] ?? `signal ${exitCode - 128}`;
}

export function buildExecResult(raw: RawOutcome, spec: SandboxSpec): ExecResult {
  const signal = signalName(raw.exitCode);
  let outcome: ExecOutcome;
  let hint: string | undefined;
  if (raw.cancelled) {
    outcome = 'cancelled';
    hint = 'The call was cancelled and its processes were stopped.';
  } else if (raw.timedOut) {
    outcome = 'timeout';
    hint = `The command was killed after ${raw.timeoutSeconds} s, the time limit. Make it faster, work on less data, run it in the background and check on it later, or raise the timeout.`;
  } else if (raw.oomKilled) {
    outcome = 'oom';
    hint = `The process was killed for exceeding the ${formatSize(spec.limits.memoryBytes)} memory limit. Process the data in chunks or stream it, or raise limits.memory. Files in /tmp, $HOME and a private /workspace are kept in memory and count toward it: delete those you no longer need.`;
  } else if (signal) {
    outcome = 'signal';
    hint = signalHint(signal);
  } else if (raw.exitCode === 0) {
    outcome = 'ok';
  } else {
    outcome = 'error';
    hint = `The command exited with code ${raw.exitCode ?? 'unknown'}. Read stderr, fix the cause and run it again.`;
  }
  const stdout = raw.stdout.text('stdout');
  const stderr = raw.stderr.text('stderr');
  // A write that found no room: say which limit it was and what to do, whatever the exit code (a pipeline may hide it).
  const diskLimitReached =
    (outcome === 'ok' || outcome === 'error' || outcome === 'signal') && (isDiskFull(stderr) || isDiskFull(stdout));
  if (diskLimitReached) hint = diskLimitHint(spec.limits);
  const truncated = raw.stdout.truncated || raw.stderr.truncated;
  if (truncated) {
    const more = 'Output past the cap was dropped; write large output to a file and read the part you need.';
    hint = hint ? `${hint} ${more}` : more;
  }
  return {
    outcome,
    exitCode: raw.exitCode,
    ...(signal && outcome !== 'timeout' && outcome !== 'cancelled' ? { signal } : {}),
    stdout,
    stderr,
    stdoutBytes: raw.stdout.totalBytes,
    stderrBytes: raw.stderr.totalBytes,
    stdoutTruncated: raw.stdout.truncated,
    stderrTruncated: raw.stderr.truncated,
    durationMs: Math.round(raw.durationMs),
    ...(hint ? { hint } : {}),
    ...(diskLimitReached ? { diskLimitReached } : {}),
    notices: raw.notices ?? [],
  };
}

function signalHint(signal: string): string {
  switch (signal) {
    case 'SIGSEGV':
      return 'The process crashed with a segmentation fault (SIGSEGV). Look for a bug in native code or an extension module.';
    case 'SIGKILL':
      return 'The process was killed (SIGKILL), for example by the pids limit, an out-of-memory kill or from outside. Check stderr and try with less work.';
    case 'SIGABRT':
      return 'The process aborted (SIGABRT), usually a failed assertion or a fatal runtime error. Read stderr.';
    case 'SIGXFSZ':
      return 'The process tried to write a file larger than allowed (SIGXFSZ). Write smaller files.';
    default:
      return `The process was ended by ${signal}. Read stderr.`;
  }
}
