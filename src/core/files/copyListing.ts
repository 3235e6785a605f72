/**
 * The sandbox's /workspace listed in one exec: path, size, mode and sha256 of every file changed
 * since the copy (or of every file, for a baseline without the record of what was placed), and the
 * target of every link. The list is written inside the sandbox, where the agent can touch it: what
 * it names is checked where it is used, never trusted.
 */
import type { Sandbox } from '../engine/engine';
import { SandboxError } from '../errors';
import type { SandboxEntry } from './copyChanges';
import { sha256, type CopyBaseline, type PlacedFile } from './folderCopy';
import { WORKSPACE_DIR } from './paths';

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
