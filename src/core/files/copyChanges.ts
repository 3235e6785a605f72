/**
 * The changes of a `copy` session: the sandbox's /workspace listed in one exec (path, size, sha256
 * of every file; the target of every link) and compared with the baseline taken at the copy, then
 * shown as a git-style unified diff (binary files as "Binary files differ", with sizes).
 */
import type { Sandbox } from '../engine/engine';
import { SandboxError } from '../errors';
import { WORKSPACE_DIR } from './paths';
import { readHostFile } from './hostFiles/readHostFile';
import { sha256, type CopyBaseline } from './folderCopy';

/** What the sandbox has now at a path. */
export interface SandboxEntry {
  kind: 'file' | 'symlink';
  size: number;
  /** sha256 of a file's bytes, or of a link's target text. */
  sha256: string;
  /** Permission bits of a file. */
  mode?: number;
}

export interface CopyChange {
  path: string;
  change: 'added' | 'modified' | 'deleted';
  oldSize?: number;
  newSize?: number;
  /** A file's permission bits in the sandbox now. */
  newMode?: number;
}

/**
 * One exec: for each file "F <sha256> <size> <path>\0", for each link "L <target>\0<path>\0". Needs
 * only find, sha256sum, stat and readlink (coreutils), as every image has.
 */
export const LIST_SCRIPT = [
  'cd /workspace || exit 3',
  `find . \\( -name .git -prune \\) -o -type f -exec sh -c 'for f; do h=$(sha256sum < "$f") || exit 4; s=$(stat -c "%s %a" "$f"); printf "F %.64s %s %s\\0" "$h" "$s" "$\{f#./}"; done' sh {} +`,
  `find . \\( -name .git -prune \\) -o -type l -exec sh -c 'for f; do printf "L %s\\0%s\\0" "$(readlink "$f")" "$\{f#./}"; done' sh {} +`,
].join('\n');

export function parseListing(stdout: string): Map<string, SandboxEntry> {
  const entries = new Map<string, SandboxEntry>();
  const parts = stdout.split('\0');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.startsWith('F ')) {
      const match = /^F ([0-9a-f]{64}) (\d+) ([0-7]+) (.*)$/s.exec(part);
      if (match)
        entries.set(match[4]!, {
          kind: 'file',
          sha256: match[1]!,
          size: Number(match[2]),
          mode: parseInt(match[3]!, 8),
        });
    } else if (part.startsWith('L ')) {
      const target = part.slice(2);
      const path = parts[++i];
      if (path) entries.set(path, { kind: 'symlink', sha256: sha256(target), size: Buffer.byteLength(target) });
    }
  }
  return entries;
}

/** Added, modified and deleted paths, by path order. */
export function compareToBaseline(baseline: CopyBaseline, current: ReadonlyMap<string, SandboxEntry>): CopyChange[] {
  const changes: CopyChange[] = [];
  for (const [path, before] of Object.entries(baseline.files)) {
    const now = current.get(path);
    if (!now) changes.push({ path, change: 'deleted', oldSize: before.size });
    else if (now.sha256 !== before.sha256 || now.kind !== before.kind)
      changes.push({ path, change: 'modified', oldSize: before.size, newSize: now.size, newMode: now.mode });
  }
  for (const [path, now] of current) {
    if (!(path in baseline.files)) changes.push({ path, change: 'added', newSize: now.size, newMode: now.mode });
  }
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The sandbox's files now, in one exec. */
export async function listSandboxFiles(sandbox: Sandbox, signal?: AbortSignal): Promise<Map<string, SandboxEntry>> {
  const result = await sandbox.exec({ cmd: ['sh', '-c', LIST_SCRIPT], cwd: WORKSPACE_DIR }, signal);
  if (result.exitCode !== 0 || result.stdoutTruncated) {
    throw new SandboxError(
      'engine-error',
      result.stdoutTruncated
        ? 'The list of the sandbox’s files was longer than the output limit.'
        : `Listing the sandbox’s files failed (exit ${result.exitCode}): ${result.stderr.trim().slice(0, 500)}`,
    );
  }
  return parseListing(result.stdout);
}

/** Whether bytes read as text: no NUL in the first 8 KiB, and valid UTF-8. */
export function isText(data: Uint8Array): boolean {
  if (data.subarray(0, 8192).includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(data);
    return true;
  } catch {
    return false;
  }
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else lines[lines.length - 1] += '\n\\ No newline at end of file';
  return lines;
}

type Op = { kind: ' ' | '-' | '+'; line: string };

/** Line operations from the longest common subsequence (fine for the files an agent edits). */
function diffLines(a: string[], b: string[]): Op[] {
  // Common prefix and suffix first: most edits are small.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const n = midA.length;
  const m = midB.length;
  const ops: Op[] = a.slice(0, start).map((line) => ({ kind: ' ', line }));
  if (n * m > 25_000_000) {
    for (const line of midA) ops.push({ kind: '-', line });
    for (const line of midB) ops.push({ kind: '+', line });
  } else {
    const table = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        table[i]![j] = midA[i] === midB[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && midA[i] === midB[j]) {
        ops.push({ kind: ' ', line: midA[i]! });
        i++;
        j++;
      } else if (i < n && (j === m || table[i + 1]![j]! >= table[i]![j + 1]!)) {
        ops.push({ kind: '-', line: midA[i++]! });
      } else {
        ops.push({ kind: '+', line: midB[j++]! });
      }
    }
  }
  for (const line of a.slice(endA)) ops.push({ kind: ' ', line });
  return ops;
}

/** The hunks of a unified diff with three lines of context. */
export function unifiedHunks(oldText: string, newText: string, context = 3): string[] {
  const ops = diffLines(splitLines(oldText), splitLines(newText));
  const out: string[] = [];
  let index = 0;
  while (index < ops.length) {
    while (index < ops.length && ops[index]!.kind === ' ') index++;
    if (index >= ops.length) break;
    const begin = Math.max(0, index - context);
    let end = index;
    // Extend the hunk while changes are within 2 × context of each other.
    for (;;) {
      while (end < ops.length && ops[end]!.kind !== ' ') end++;
      let next = end;
      while (next < ops.length && ops[next]!.kind === ' ') next++;
      if (next < ops.length && next - end <= 2 * context) end = next;
      else break;
    }
    const stop = Math.min(ops.length, end + context);
    let oldStart = 1;
    let newStart = 1;
    for (let k = 0; k < begin; k++) {
      if (ops[k]!.kind !== '+') oldStart++;
      if (ops[k]!.kind !== '-') newStart++;
    }
    const slice = ops.slice(begin, stop);
    const oldCount = slice.filter((op) => op.kind !== '+').length;
    const newCount = slice.filter((op) => op.kind !== '-').length;
    const range = (startLine: number, count: number) =>
      count === 1 ? `${startLine}` : `${count === 0 ? startLine - 1 : startLine},${count}`;
    out.push(`@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@`);
    for (const op of slice) out.push(`${op.kind}${op.line}`);
    index = stop;
  }
  return out;
}

/** One file's part of a git-style diff. */
export function fileDiff(change: CopyChange, oldData: Uint8Array | undefined, newData: Uint8Array | undefined): string {
  const { path } = change;
  const lines = [`diff --git a/${path} b/${path}`];
  if (change.change === 'added') lines.push('new file mode 100644');
  if (change.change === 'deleted') lines.push('deleted file mode 100644');
  const oldName = change.change === 'added' ? '/dev/null' : `a/${path}`;
  const newName = change.change === 'deleted' ? '/dev/null' : `b/${path}`;
  const old = oldData ?? new Uint8Array();
  const now = newData ?? new Uint8Array();
  if (!isText(old) || !isText(now)) {
    lines.push(`Binary files ${oldName} and ${newName} differ (${old.length} → ${now.length} bytes)`);
    return lines.join('\n') + '\n';
  }
  const hunks = unifiedHunks(Buffer.from(old).toString('utf8'), Buffer.from(now).toString('utf8'));
  if (hunks.length) lines.push(`--- ${oldName}`, `+++ ${newName}`, ...hunks);
  return lines.join('\n') + '\n';
}

/**
 * The diff of a copy session: the host's file (as read now, through the confined read) on the left,
 * the sandbox's on the right. A host file that changed since the copy is named: applying it would be a conflict.
 */
export async function copyDiff(
  sandbox: Sandbox,
  baseline: CopyBaseline,
  options: { maxBytes: number; signal?: AbortSignal },
): Promise<{ changes: CopyChange[]; diff: string; hostChanged: string[] }> {
  const changes = compareToBaseline(baseline, await listSandboxFiles(sandbox, options.signal));
  const parts: string[] = [];
  const hostChanged: string[] = [];
  for (const change of changes) {
    let oldData: Uint8Array | undefined;
    let newData: Uint8Array | undefined;
    if (change.change !== 'added' && baseline.files[change.path]?.kind === 'file') {
      oldData = await readHostFile(baseline.folder, change.path, options.maxBytes).catch(() => undefined);
      if (!oldData || sha256(oldData) !== baseline.files[change.path]!.sha256) hostChanged.push(change.path);
    }
    if (change.change !== 'deleted') {
      const content = await sandbox.readFile(
        `${WORKSPACE_DIR}/${change.path}`,
        { encoding: 'base64', maxBytes: options.maxBytes },
        options.signal,
      );
      newData = Buffer.from(content.content, 'base64');
    }
    parts.push(fileDiff(change, oldData, newData));
  }
  return { changes, diff: parts.join(''), hostChanged };
}
