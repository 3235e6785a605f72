/**
 * The text a language model gets back from each tool: short, status first, and ending with what to
 * do next. The VS Code side wraps these strings in a LanguageModelTextPart.
 */
import { sandboxIdOf } from '../sessions/sessions';
import { z } from 'zod';
import type {
  EngineCapabilities,
  ExecResult,
  FileContent,
  FileEntry,
  ListResult,
  SessionInfo,
  WriteResult,
} from '../engine/engine';
import { DISK_LIMIT_REACHED, placeBytes } from '../limits/diskLimit';
import { capabilitiesLine } from '../engine/engineCapabilities';
import { displayName, quotedName } from '../results/displayName';
import { SandboxError } from '../errors';
import type { StoredFile } from '../files/fileStore';
import type { StagedFile } from '../files/staging';
import { formatSize } from '../spec/units';
import { fitToBudget, type TextBudget } from './fitBudget';

export interface ExecContext {
  /** The sandbox_id of a session; absent for sandbox_run's one-off sandbox. */
  sandboxId?: string;
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
  if (!stdout && !stderr) lines.push('(no output)');
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
    result.exitCode === null
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
    'redirect the full output to a file and read the part you need …]';
  const head = text.slice(0, headEnd);
  return `${head}${head && !head.endsWith('\n') ? '\n' : ''}${marker}${tailStart < text.length ? `\n${text.slice(tailStart)}` : ''}`;
}

/** Moves an index off the middle of a surrogate pair, so no character is cut in half. */
function avoidSplitPair(text: string, index: number): number {
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
    `network: ${info.network ? 'on' : 'off (installing packages from the internet will fail)'}`,
    ...info.notices.map((notice) => `Note: ${notice}`),
  ].join('\n');
}

function workspaceText(info: SessionInfo): string {
  const folder = info.workspaceFolder ? `the workspace folder ${info.workspaceFolder}` : 'the workspace folder';
  switch (info.workspaceAccess) {
    case 'ro':
      return `ro (${folder} is mounted read-only at /workspace; /tmp and $HOME are writable)`;
    case 'rw':
      return `rw (${folder} is mounted read-write at /workspace: changes there change the user's files)`;
    default:
      return 'none (/workspace is private to the sandbox)';
  }
}

const MAX_LISTED = 100;

export function formatWrite(result: WriteResult): string {
  const total = result.files.reduce((sum, file) => sum + file.bytes, 0);
  const lines = [`Wrote ${plural(result.files.length, 'file')} (${formatSize(total)}):`];
  for (const file of result.files.slice(0, MAX_LISTED))
    lines.push(`${displayName(file.path)}  ${formatSize(file.bytes)}`);
  if (result.files.length > MAX_LISTED) lines.push(`… and ${count(result.files.length - MAX_LISTED)} more`);
  return lines.join('\n');
}

/** A file's content as read, shortened to the budget when one is given: the head is kept, later parts are read with sandbox_exec. */
export async function formatRead(file: FileContent, budget?: TextBudget): Promise<string> {
  if (!budget) return renderRead(file);
  return fitToBudget((keep) => renderRead(file, keep), file.content.length, budget);
}

function renderRead(file: FileContent, keep = file.content.length): string {
  const base64 = file.encoding === 'base64';
  // Base64 is cut at a whole group of four characters, text never between the halves of a surrogate pair.
  const content =
    keep >= file.content.length
      ? file.content
      : file.content.slice(0, base64 ? keep - (keep % 4) : avoidSplitPair(file.content, keep));
  const shown = base64 ? Math.floor((content.length * 3) / 4) : byteLength(content);
  const lines = [`${displayName(file.path)} · ${formatSize(file.size)} · ${base64 ? 'binary, base64' : 'utf8'}`];
  if (content.length < file.content.length) {
    lines.push(
      `Only the first ${formatSize(shown)} of ${formatSize(file.size)} is shown, to fit the context. Read the part you need with sandbox_exec (grep, sed -n, or \`tail -c +${shown + 1} FILE | head -c ${shown}\` for the next part).`,
    );
  } else if (file.truncated) {
    lines.push(
      `Only the first ${formatSize(Math.min(shown, file.size))} of ${formatSize(file.size)} is shown. Read the part you need with sandbox_exec (head, tail, sed -n, grep), or pass a larger max_bytes.`,
    );
  }
  lines.push(file.content.length ? content : '(empty file)');
  return lines.join('\n');
}

/** One line per entry: type, size, modification time (UTC) and the path relative to `dir`. */
export function formatList(result: ListResult, dir = '/workspace'): string {
  const base = dir.replace(/\/+$/, '') || '/';
  if (!result.entries.length) return `${displayName(base)} is empty.`;
  const rows = result.entries.map((entry) => [
    TYPE_LABELS[entry.type],
    entry.type === 'directory' ? '-' : formatSize(entry.size),
    formatTime(entry.mtime),
    relativePath(entry, base),
  ]);
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  const lines = [
    `${displayName(base)}: ${plural(result.entries.length, 'entry', 'entries')} (type, size, modified UTC, path)`,
  ];
  for (const row of rows)
    lines.push(row.map((cell, column) => (column < 3 ? cell.padEnd(widths[column]!) : cell)).join('  '));
  if (result.truncated)
    lines.push('The listing stopped at the file count cap. List a subdirectory or use a smaller depth.');
  return lines.join('\n');
}

const TYPE_LABELS: Record<FileEntry['type'], string> = {
  file: 'file',
  directory: 'dir',
  symlink: 'link',
  other: 'other',
};

function relativePath(entry: FileEntry, base: string): string {
  const prefix = base === '/' ? '/' : `${base}/`;
  const relative =
    entry.path === base ? '.' : entry.path.startsWith(prefix) ? entry.path.slice(prefix.length) : entry.path;
  return displayName(entry.type === 'directory' && relative !== '.' ? `${relative}/` : relative);
}

function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().slice(0, 19).replace('T', ' ');
}

export function formatDelete(result: { path: string; deleted: boolean }): string {
  return result.deleted
    ? `Deleted ${displayName(result.path)}.`
    : `Nothing to delete: ${displayName(result.path)} does not exist.`;
}

export function formatClose(sandboxId: string, closed = true): string {
  return closed
    ? `Closed sandbox "${sandboxId}": its processes and the files outside a mounted workspace are gone. A later call without sandbox_id opens a new default sandbox.`
    : `No sandbox "${sandboxId}" was open; nothing to close.`;
}

export function formatStaged(staged: StagedFile, sandboxId?: string): string {
  return [
    `Staged ${staged.source} into ${sandboxId ? `sandbox "${sandboxId}"` : 'the sandbox'} at ${displayName(staged.path)} · ${formatSize(staged.size)} · sha256 ${staged.sha256}`,
    'The file is in the sandbox now: use it with sandbox_exec.',
  ].join('\n');
}

export function formatPublished(published: { file: StoredFile; path: string; savedTo?: string }): string {
  const { file } = published;
  const lines = [
    `Published ${displayName(published.path)} to the file store as ${file.key} · ${quotedName(file.name)} · ${formatSize(file.size)} · sha256 ${file.sha256}`,
    `Pass key "${file.key}" to sandbox_stage_file to place it in a sandbox.`,
  ];
  if (published.savedTo !== undefined) lines.push(`Saved it to the workspace at ${displayName(published.savedTo)}.`);
  return lines.join('\n');
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

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}

function plural(value: number, one: string, many = `${one}s`): string {
  return `${count(value)} ${value === 1 ? one : many}`;
}
