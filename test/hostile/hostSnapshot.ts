/** What the hostile cases compare on the host before and after an attack: names, types, bytes, modes and owners. */
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

/** One line per entry under `dir` (recursive, links not followed), sorted; equal strings mean an untouched tree. */
export function hostSnapshot(dir: string): string {
  const lines: string[] = [];
  const visit = (relative: string) => {
    const path = relative ? join(dir, relative) : dir;
    const info = lstatSync(path);
    const kind = info.isSymbolicLink()
      ? `link→${readlinkSync(path)}`
      : info.isDirectory()
        ? 'dir'
        : info.isFile()
          ? `file ${info.size} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`
          : 'special';
    lines.push(`${relative || '.'} ${kind} mode=${(info.mode & 0o7777).toString(8)} owner=${info.uid}:${info.gid}`);
    if (info.isDirectory()) for (const name of readdirSync(path).sort()) visit(relative ? join(relative, name) : name);
  };
  visit('');
  return lines.join('\n');
}

/** The lines of `after` that are not in `before`, and the reverse, for a failure message. */
export function snapshotDiff(before: string, after: string): string {
  const was = new Set(before.split('\n'));
  const now = new Set(after.split('\n'));
  return [
    ...[...now].filter((line) => !was.has(line)).map((line) => `+ ${line}`),
    ...[...was].filter((line) => !now.has(line)).map((line) => `- ${line}`),
  ].join('\n');
}
