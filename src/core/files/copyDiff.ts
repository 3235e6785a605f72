/**
 * A copy session's changes as a git-style unified diff: the folder's file (read now, through the
 * confined read) on the left, the sandbox's on the right; names quoted as git quotes them, binary
 * and large files named with their sizes; and the digest `apply --expect` checks.
 */
import type { Sandbox } from '../engine/engine';
import { compareToBaseline, type CopyChange } from './copyChanges';
import { listSandboxFiles } from './copyListing';
import { sha256, type CopyBaseline } from './folderCopy';
import { readHostFile } from './hostFiles/readHostFile';
import { WORKSPACE_DIR } from './paths';
import { readWholeSandboxFile } from './sandboxFileBytes';
import { isText, unifiedHunks } from './unifiedDiff';

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
