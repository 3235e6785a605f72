/**
 * The text a language model gets back from each tool: short, status first, and ending with what to
 * do next. The VS Code side wraps these strings in a LanguageModelTextPart.
 */
import { sandboxIdOf } from '../sessions/sessions';
import { z } from 'zod';
import type { EngineCapabilities, ExecResult, SessionInfo } from '../engine/engine';
import { DISK_LIMIT_REACHED, placeBytes } from '../limits/diskLimit';
import { capabilitiesLine } from '../engine/engineCapabilities';
import { SandboxError } from '../errors';
import { formatSize } from '../spec/units';
import { fitToBudget, type TextBudget } from './fitBudget';
import { reviewPlaces } from '../sessions/copyHold';

export interface ExecContext {
  /** The sandbox_id of a session; absent for sandbox_run's one-off sandbox. */
  sandboxId?: string;
  /** A persistent interpreter's call: its name and version ("python 3.11.2"), in place of an exit code. */
  interpreter?: string;
  engine: string;
  image?: string;
}

const OUTCOME_LABELS: Record<ExecResult['outcome'], string> = {
  ok: '',
  error: 'failed',
  timeout: 'timed out',
  oom: 'out of memory',
  signal: 'killed',
  cancelled: 'cancelled',
};

/** Exit code, stdout, stderr and what to do next, shortened to fit the budget when one is given. */
export async function formatExecResult(result: ExecResult, context: ExecContext, budget?: TextBudget): Promise<string> {
  if (!budget) return renderExec(result, context);
  const streamChars = trimEnd(result.stdout).length + trimEnd(result.stderr).length;
  return fitToBudget((keep) => renderExec(result, context, keep), streamChars, budget);
}

function renderExec(result: ExecResult, context: ExecContext, keep?: number): string {
  const stdout = trimEnd(result.stdout);
  const stderr = trimEnd(result.stderr);
  const [stdoutKeep, stderrKeep] =
    keep === undefined ? [stdout.length, stderr.length] : share(stdout.length, stderr.length, keep);
  const shortened = stdoutKeep < stdout.length || stderrKeep < stderr.length;
  // The headline, notes and what to do next come before the output, so that they stay in the first
  // part a client shows the model even when it moves long parts out of sight (Copilot does past 8,192 characters).
  const lines = [statusLine(result, context, shortened)];
  for (const notice of result.notices) lines.push(`Note: ${notice}`);
  if (result.hint) lines.push(`Next: ${result.hint}`);
  if (result.value !== undefined) lines.push('value:', cutValue(result.value));
  if (!stdout && !stderr && result.value === undefined) lines.push('(no output)');
  if (stdout) lines.push('stdout:', cut(stdout, stdoutKeep, 'stdout'));
  if (stderr) lines.push('stderr:', cut(stderr, stderrKeep, 'stderr'));
  return lines.join('\n');
}

function statusLine(result: ExecResult, context: ExecContext, shortened: boolean): string {
  const label =
    result.outcome === 'signal' && result.signal ? `killed by ${result.signal}` : OUTCOME_LABELS[result.outcome];
  const parts = [
    label,
    result.diskLimitReached ? DISK_LIMIT_REACHED : '',
    context.interpreter
      ? `${context.interpreter} (persistent)`
      : result.exitCode === null
        ? result.outcome === 'ok' || result.outcome === 'error'
          ? 'no exit code'
          : ''
        : `exit code ${result.exitCode}`,
    formatDuration(result.durationMs),
    context.engine,
    context.sandboxId ? `sandbox ${context.sandboxId}` : 'one-off sandbox',
    context.image ?? '',
    result.stdoutTruncated ? `stdout truncated (${formatSize(result.stdoutBytes)} in all)` : '',
    result.stderrTruncated ? `stderr truncated (${formatSize(result.stderrBytes)} in all)` : '',
    shortened ? 'output shortened to fit the context' : '',
  ];
  return parts.filter(Boolean).join(' · ');
}

/** Splits `keep` characters between two streams: a short one keeps everything, the rest goes to the other. */
function share(a: number, b: number, keep: number): [number, number] {
  if (a + b <= keep) return [a, b];
  const half = Math.floor(keep / 2);
  if (a <= half) return [a, keep - a];
  if (b <= half) return [keep - b, b];
  return [half, keep - half];
}

/** Keeps the head and the (usually more telling) tail, at line breaks when close, with a marker in between. */
function cut(text: string, keep: number, stream: string): string {
  if (keep >= text.length) return text;
  let headEnd = Math.floor(keep * 0.4);
  let tailStart = text.length - (keep - headEnd);
  const headBreak = text.lastIndexOf('\n', headEnd);
  if (headBreak >= headEnd * 0.8 && headBreak > 0) headEnd = headBreak + 1;
  const tailBreak = text.indexOf('\n', tailStart);
  if (tailBreak !== -1 && tailBreak - tailStart <= (text.length - tailStart) * 0.2) tailStart = tailBreak + 1;
  headEnd = avoidSplitPair(text, headEnd);
  tailStart = avoidSplitPair(text, tailStart);
  const removed = text.slice(headEnd, tailStart);
  const lineCount = removed.split('\n').length - (removed.endsWith('\n') ? 1 : 0);
  const marker =
    `[… ${count(removed.length)} characters (${count(lineCount)} ${lineCount === 1 ? 'line' : 'lines'}) of ${stream} cut to fit the context; ` +
    'redirect the full output to a file and read it in parts with sandbox_fs_read (offset, max_bytes) …]';
  const head = text.slice(0, headEnd);
  return `${head}${head && !head.endsWith('\n') ? '\n' : ''}${marker}${tailStart < text.length ? `\n${text.slice(tailStart)}` : ''}`;
}

/** Moves an index off the middle of a surrogate pair, so no character is cut in half. */
export function avoidSplitPair(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return index > 0 && code >= 0xdc00 && code <= 0xdfff ? index - 1 : index;
}

/** A session's id and configuration, so the model knows what it is working in. */
export function formatSession(info: SessionInfo, created: boolean, capabilities?: EngineCapabilities): string {
  const id = sandboxIdOf(info);
  const limits = info.spec.limits;
  return [
    `${created ? 'Opened new' : 'Using open'} sandbox "${id}": pass sandbox_id "${id}" to the other sandbox tools${id === 'default' ? ', or omit sandbox_id' : ''}.`,
    `runtime ${info.runtime} · image ${info.image} · engine ${info.engine} · ${info.state}`,
    ...(capabilities ? [`capabilities: ${capabilitiesLine(info.engine, capabilities)}`] : []),
    `limits: ${formatSize(limits.memoryBytes)} memory (no swap), ${limits.cpus} CPU, ${limits.pids} processes, ${info.spec.timeoutSeconds} s per call, ` +
      `stdout ${formatSize(limits.maxStdoutBytes)} and stderr ${formatSize(limits.maxStderrBytes)} per call, files up to ${formatSize(limits.maxFileSizeBytes)}, ${limits.maxFiles} files per operation, ` +
      `disk ${formatSize(placeBytes(limits))} and ${count(limits.inodes)} files per writable place (/tmp, $HOME, a private /workspace; kept in memory, so they count toward the memory)`,
    `workspace access: ${workspaceText(info)}`,
    `network: ${
      info.network
        ? 'on'
        : info.spec.networkAllow.length
          ? info.engine === 'virtual'
            ? `only ${info.spec.networkAllow.join(', ')}, for curl and wget (a refusal is HTTP 403 naming the reason)`
            : `only ${info.spec.networkAllow.join(', ')}, through a proxy that refuses everything else (HTTP_PROXY and HTTPS_PROXY are set; a refusal is HTTP 403 naming the reason)`
          : 'off (installing packages from the internet will fail)'
    }`,
    ...info.notices.map((notice) => `Note: ${notice}`),
  ].join('\n');
}

function workspaceText(info: SessionInfo): string {
  const folder = info.workspaceFolder ? `the workspace folder ${info.workspaceFolder}` : 'the workspace folder';
  switch (info.workspaceAccess) {
    case 'copy':
      return `copy (${folder} was copied into a private /workspace at open, minus what .gitignore excludes: changes there do not change the user's files until the user reviews and applies them, ${reviewPlaces(sandboxIdOf(info))})`;
    case 'ro':
      return `ro (${folder} is mounted read-only at /workspace; /tmp and $HOME are writable)`;
    case 'rw':
      return `rw (${folder} is mounted read-write at /workspace: changes there change the user's files)`;
    default:
      return 'none (/workspace is private to the sandbox)';
  }
}

/** A failure as the model should read it: what happened, then what to do next. */
export function formatError(error: unknown): string {
  if (SandboxError.is(error)) return error.hint ? `${error.message}\nNext: ${error.hint}` : error.message;
  if (error instanceof z.ZodError)
    return `The input is not valid:\n${z.prettifyError(error)}\nNext: fix these fields and call the tool again.`;
  if (error instanceof Error) return error.message;
  return String(error);
}

export function formatDuration(ms: number): string {
  if (ms < 100) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

function trimEnd(text: string): string {
  return text.endsWith('\n') ? text.slice(0, text.endsWith('\r\n') ? -2 : -1) : text;
}

export function count(value: number): string {
  return value.toLocaleString('en-US');
}

export function plural(value: number, one: string, many = `${one}s`): string {
  return `${count(value)} ${value === 1 ? one : many}`;
}

/** The most of a value shown: a repr is meant to be read at a glance (print it to see more). */
const VALUE_CHARS = 4_000;

function cutValue(value: string): string {
  if (value.length <= VALUE_CHARS) return value;
  return `${value.slice(0, VALUE_CHARS)}\n[… ${value.length - VALUE_CHARS} more characters of the value; print it, or a part of it, to see more]`;
}
