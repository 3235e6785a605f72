/**
 * The changes of a `copy` session: the sandbox's /workspace listed in one exec (path, size, sha256
 * of every file changed since the copy, or of every file; the target of every link) and compared
 * with the baseline taken at the copy, then
 * shown as a git-style unified diff (binary files as "Binary files differ", with sizes).
 */
import type { Sandbox } from '../engine/engine';
import { SandboxError } from '../errors';
import { WORKSPACE_DIR } from './paths';
import { readHostFile } from './hostFiles/readHostFile';
import { readWholeSandboxFile } from './sandboxFileBytes';
import { sha256, type CopyBaseline, type PlacedFile } from './folderCopy';

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

/** Listings up to this many bytes come back in the exec's own output; larger ones are read in parts. */
const LIST_PART = 512 * 1024;
const MAX_LISTING_BYTES = 64 * 1024 * 1024;

/** Prints the listing in "$out": inline as "inline <base64>" when small, else its path (kept for reading in parts). */
const PRINT_LISTING = [
  `if [ "$(wc -c < "$out")" -le ${LIST_PART} ]; then printf 'inline '; base64 -w0 "$out"; rm -f "$out"`,
  'else printf %s "$out"; fi',
].join('\n');

/**
 * One exec, GNU find and coreutils (as every image has), without a process per file: a listing
 * written to a file under /tmp (the output limit would cut a large one), in three parts, each entry
 * ended by NUL: "S" then "<size> <mode> <path>" per file, "H" then "<sha256>  ./<path>" per file,
 * "L" then "<path>", "<target>" per link. .git is never listed. Every file is hashed.
 */
export const LIST_SCRIPT = [
  'cd /workspace || exit 3',
  'out=$(mktemp /tmp/.agent-sandbox-list.XXXXXX) || exit 5',
  "{ printf 'S\\0'; find . -name .git -prune -o -type f -printf '%s %m %P\\0';",
  "  printf 'H\\0'; find . -name .git -prune -o -type f -print0 | xargs -0 -r sha256sum -z;",
  '  printf \'L\\0\'; find . -name .git -prune -o -type l -printf \'%P\\0%l\\0\'; } > "$out" || { rm -f "$out"; exit 4; }',
  PRINT_LISTING,
].join('\n');

/**
 * The listing of what changed since the copy was placed, in one exec: stdin holds "<blake2b>  <path>"
 * of every file as placed (b2sum's own lines), and only the files whose line is not the same now are
 * listed and hashed with sha256. Every file is read (b2sum: BLAKE2b-512, about 2.5 times as fast as
 * sha256sum here, and as sure: no edit that keeps a file's size, times or inode is missed, such as one
 * through a shared mapping of a tmpfs page, which sets no time at all). Parts, each entry ended by
 * NUL: "G" then the paths of files placed that are gone or changed, "S" then "<size> <mode> <path>"
 * and "H" then "<sha256>  <path>" for files new or changed, "L" then "<path>", "<target>" per link.
 */
export const CHANGES_SCRIPT = [
  'cd /workspace || exit 3',
  'export LC_ALL=C',
  'out=$(mktemp /tmp/.agent-sandbox-list.XXXXXX) || exit 5',
  't=$(mktemp -d /tmp/.agent-sandbox-work.XXXXXX) || { rm -f "$out"; exit 5; }',
  '{ sort -z > "$t/placed" &&',
  '  find . -name .git -prune -o -type f -printf \'%P\\0\' | xargs -0 -r b2sum -z -- | sort -z > "$t/now" &&',
  '  comm -z -13 "$t/placed" "$t/now" | cut -z -c131- > "$t/new" &&',
  '  { printf \'G\\0\'; comm -z -23 "$t/placed" "$t/now" | cut -z -c131-;',
  "    printf 'S\\0'; xargs -0 -r stat --printf '%s %a %n\\0' -- < \"$t/new\";",
  '    printf \'H\\0\'; xargs -0 -r sha256sum -z -- < "$t/new";',
  '    printf \'L\\0\'; find . -name .git -prune -o -type l -printf \'%P\\0%l\\0\'; } > "$out"; } || { rm -rf "$out" "$t"; exit 4; }',
  'rm -rf "$t"',
  PRINT_LISTING,
].join('\n');

export function parseListing(listing: string): Map<string, SandboxEntry> {
  const entries = new Map<string, SandboxEntry>();
  const hashes = new Map<string, string>();
  const parts = listing.split('\0');
  let section = '';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === 'S' || part === 'H' || part === 'L') {
      section = part;
      continue;
    }
    if (part === '') continue;
    if (section === 'S') {
      const match = /^(\d+) ([0-7]+) (.*)$/s.exec(part);
      if (match)
        entries.set(match[3]!, { kind: 'file', sha256: '', size: Number(match[1]), mode: parseInt(match[2]!, 8) });
    } else if (section === 'H') {
      const match = /^([0-9a-f]{64}) {2}\.\/(.*)$/s.exec(part);
      if (match) hashes.set(match[2]!, match[1]!);
    } else if (section === 'L') {
      const target = parts[++i] ?? '';
      entries.set(part, { kind: 'symlink', sha256: sha256(target), size: Buffer.byteLength(target) });
    }
  }
  // A file without a hash changed while it was listed: it counts as changed.
  for (const [path, entry] of entries) if (entry.kind === 'file') entry.sha256 = hashes.get(path) ?? '';
  return entries;
}

/** The sandbox's files from a CHANGES_SCRIPT listing: those still as placed with their placed hash, the rest as listed. */
export function parseChangedListing(
  listing: string,
  placed: Readonly<Record<string, PlacedFile>>,
): Map<string, SandboxEntry> {
  const gone = new Set<string>();
  const listed = new Map<string, SandboxEntry>();
  const hashes = new Map<string, string>();
  const parts = listing.split('\0');
  let section = '';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === 'G' || part === 'S' || part === 'H' || part === 'L') {
      section = part;
      continue;
    }
    if (part === '') continue;
    if (section === 'G') gone.add(part);
    else if (section === 'S') {
      const match = /^(\d+) ([0-7]+) (.*)$/s.exec(part);
      if (match)
        listed.set(match[3]!, { kind: 'file', sha256: '', size: Number(match[1]), mode: parseInt(match[2]!, 8) });
    } else if (section === 'H') {
      const match = /^([0-9a-f]{64}) {2}(.*)$/s.exec(part);
      if (match) hashes.set(match[2]!, match[1]!);
    } else if (section === 'L') {
      const target = parts[++i] ?? '';
      listed.set(part, { kind: 'symlink', sha256: sha256(target), size: Buffer.byteLength(target) });
    }
  }
  const entries = new Map<string, SandboxEntry>();
  for (const [path, file] of Object.entries(placed)) {
    if (!gone.has(path)) entries.set(path, { kind: 'file', sha256: file.sha256, size: file.size, mode: file.mode });
  }
  // A file without a hash changed while it was listed: it counts as changed.
  for (const [path, entry] of listed) {
    if (entry.kind === 'file') entry.sha256 = hashes.get(path) ?? '';
    entries.set(path, entry);
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

/**
 * The sandbox's files now, in one exec when the listing is small. With a baseline that keeps what
 * was placed, every file is read once with BLAKE2b and only those changed since the copy are hashed
 * with sha256 (CHANGES_SCRIPT); without one, every file is hashed with sha256 (LIST_SCRIPT).
 */
export async function listSandboxFiles(
  sandbox: Sandbox,
  signal?: AbortSignal,
  baseline?: CopyBaseline,
): Promise<Map<string, SandboxEntry>> {
  const placed = baseline?.placed;
  const snapshot = placed && Object.entries(placed).map(([path, file]) => `${file.blake2b}  ${path}\0`);
  const result = await sandbox.exec(
    snapshot
      ? { cmd: ['sh', '-c', CHANGES_SCRIPT], cwd: WORKSPACE_DIR, stdin: snapshot.join('') }
      : { cmd: ['sh', '-c', LIST_SCRIPT], cwd: WORKSPACE_DIR },
    signal,
  );
  const printed = result.stdout.trim();
  const inline = printed.startsWith('inline ');
  if (result.exitCode !== 0 || result.stdoutTruncated || !(inline || printed.startsWith('/tmp/.agent-sandbox-list.'))) {
    throw new SandboxError(
      'engine-error',
      `Listing the sandbox's files failed (exit ${result.exitCode}): ${result.stderr.trim().slice(0, 500)}`,
    );
  }
  const listing = inline
    ? Buffer.from(printed.slice('inline '.length), 'base64').toString('utf8')
    : await readListing(sandbox, printed, signal);
  return snapshot ? parseChangedListing(listing, placed!) : parseListing(listing);
}

/** A listing too large for one output, read in parts that fit the output limit as base64 (the file tools see only /workspace). */
async function readListing(sandbox: Sandbox, listingPath: string, signal?: AbortSignal): Promise<string> {
  try {
    const chunks: Buffer[] = [];
    for (let part = 0; ; part++) {
      const read = await sandbox.exec(
        {
          cmd: [
            'sh',
            '-c',
            'dd if="$1" bs=$2 skip=$3 count=1 2>/dev/null | base64 -w0',
            'sh',
            listingPath,
            `${LIST_PART}`,
            `${part}`,
          ],
          cwd: WORKSPACE_DIR,
        },
        signal,
      );
      if (read.exitCode !== 0 || read.stdoutTruncated)
        throw new SandboxError(
          'engine-error',
          `Reading the list of the sandbox's files failed (exit ${read.exitCode}).`,
        );
      const chunk = Buffer.from(read.stdout.trim(), 'base64');
      chunks.push(chunk);
      if (chunk.length < LIST_PART) break;
      if (part * LIST_PART > MAX_LISTING_BYTES)
        throw new SandboxError(
          'too-many-files',
          `The list of the sandbox's files is larger than ${MAX_LISTING_BYTES} bytes.`,
        );
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    await sandbox.exec({ cmd: ['rm', '-f', listingPath], cwd: WORKSPACE_DIR }, signal).catch(() => undefined);
  }
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

/**
 * A path as git writes it in a diff header: plain when it is printable ASCII without `"` or `\`,
 * else in double quotes with C escapes and each other byte in octal. A name from the sandbox can
 * hold a newline; unquoted, it could forge the header of another file.
 */
export function gitQuotedPath(prefix: string, path: string): string {
  const bytes = Buffer.from(`${prefix}${path}`, 'utf8');
  if (bytes.every((byte) => byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c)) return `${prefix}${path}`;
  const named: Record<number, string> = {
    7: 'a',
    8: 'b',
    9: 't',
    10: 'n',
    11: 'v',
    12: 'f',
    13: 'r',
    0x22: '"',
    0x5c: '\\',
  };
  let out = '"';
  for (const byte of bytes) {
    if (named[byte]) out += `\\${named[byte]}`;
    else if (byte < 0x20 || byte >= 0x7f) out += `\\${byte.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(byte);
  }
  return `${out}"`;
}

/** A file's mode as git writes it. */
function gitMode(mode: number | undefined): string {
  return (mode ?? 0o644) & 0o111 ? '100755' : '100644';
}

/** Files larger than this are listed with their sizes, not diffed line by line. */
export const DIFF_TEXT_LIMIT = 1024 * 1024;

/** One file's part of a git-style diff; `tooLarge` when a side was too large to read for it. */
export function fileDiff(
  change: CopyChange,
  oldData: Uint8Array | undefined,
  newData: Uint8Array | undefined,
  oldMode?: number,
  tooLarge = false,
): string {
  const { path } = change;
  const lines = [`diff --git ${gitQuotedPath('a/', path)} ${gitQuotedPath('b/', path)}`];
  if (change.change === 'added') lines.push(`new file mode ${gitMode(change.newMode)}`);
  if (change.change === 'deleted') lines.push(`deleted file mode ${gitMode(oldMode)}`);
  if (change.change === 'modified' && oldMode !== undefined && gitMode(oldMode) !== gitMode(change.newMode))
    lines.push(`old mode ${gitMode(oldMode)}`, `new mode ${gitMode(change.newMode)}`);
  const oldName = change.change === 'added' ? '/dev/null' : gitQuotedPath('a/', path);
  const newName = change.change === 'deleted' ? '/dev/null' : gitQuotedPath('b/', path);
  const oldSize = change.oldSize ?? 0;
  const newSize = change.newSize ?? 0;
  if (tooLarge) {
    lines.push(`Files ${oldName} and ${newName} differ (${oldSize} → ${newSize} bytes; too large to show)`);
    return lines.join('\n') + '\n';
  }
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
 * One short digest of a set of changes as reviewed: each path, its kind and the sha256 of the
 * sandbox's bytes. `agent-sandbox apply --expect` compares it with the changes at apply time.
 */
export function reviewDigest(entries: readonly { path: string; change: string; sha256?: string }[]): string {
  const lines = [...entries]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((entry) => `${entry.change}\0${entry.path}\0${entry.sha256 ?? ''}`);
  return sha256(lines.join('\n')).slice(0, 16);
}

/**
 * The diff of a copy session: the host's file (as read now, through the confined read) on the left,
 * the sandbox's on the right. A host file that changed since the copy is named: applying it would be a conflict.
 * The digest covers the sandbox's bytes the diff showed (the listing's hash for a file too large to show).
 */
export async function copyDiff(
  sandbox: Sandbox,
  baseline: CopyBaseline,
  options: { maxBytes: number; signal?: AbortSignal },
): Promise<{ changes: CopyChange[]; diff: string; hostChanged: string[]; digest: string }> {
  const current = await listSandboxFiles(sandbox, options.signal, baseline);
  const changes = compareToBaseline(baseline, current);
  const parts: string[] = [];
  const hostChanged: string[] = [];
  const reviewed: { path: string; change: string; sha256?: string }[] = [];
  for (const change of changes) {
    let oldData: Uint8Array | undefined;
    let newData: Uint8Array | undefined;
    let tooLarge = false;
    const before = baseline.files[change.path];
    if (change.change !== 'added' && before?.kind === 'file') {
      const host = await readHostFile(baseline.folder, change.path, options.maxBytes).catch(() => undefined);
      if (!host || sha256(host) !== before.sha256) hostChanged.push(change.path);
      if (host && host.length > DIFF_TEXT_LIMIT) tooLarge = true;
      else oldData = host;
    }
    let shown = current.get(change.path)?.sha256;
    if (change.change !== 'deleted' && (change.newSize ?? 0) > DIFF_TEXT_LIMIT) tooLarge = true;
    else if (change.change !== 'deleted') {
      newData = await readWholeSandboxFile(sandbox, `${WORKSPACE_DIR}/${change.path}`, {
        maxBytes: options.maxBytes,
        signal: options.signal,
      });
      shown = sha256(newData);
    }
    reviewed.push({
      path: change.path,
      change: change.change,
      ...(change.change !== 'deleted' ? { sha256: shown } : {}),
    });
    parts.push(
      fileDiff(change, tooLarge ? undefined : oldData, tooLarge ? undefined : newData, before?.mode, tooLarge),
    );
  }
  return { changes, diff: parts.join(''), hostChanged, digest: reviewDigest(reviewed) };
}
