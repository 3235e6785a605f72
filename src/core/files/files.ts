/** Turns file-tool input into checked bytes at absolute sandbox paths, enforcing caps before anything is written. */
import { SandboxError } from '../errors';
import type { FileEncoding, FileInput, ResolvedFile } from '../engine/engine';
import { resolveWorkspacePath } from './paths';
import type { Limits } from '../spec/spec';
import { formatSize } from '../spec/units';

const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

export function decodeContent(file: FileInput): Uint8Array {
  if (file.encoding === 'base64') {
    const data = Buffer.from(file.content, 'base64');
    // Canonical base64 (what every encoder sends) comes back the same when encoded again, which is
    // about twice as fast as the pattern on megabytes; anything else is checked with the pattern.
    if (data.toString('base64') === file.content) return data;
    if (!BASE64.test(file.content)) {
      throw new SandboxError(
        'invalid-input',
        `The content for "${file.path}" is not valid base64.`,
        'Send base64 text (A-Z, a-z, 0-9, +, /, = padding), or use encoding "utf8" for text.',
      );
    }
    return data;
  }
  return Buffer.from(file.content, 'utf8');
}

export function resolveFiles(
  files: readonly FileInput[],
  limits: Pick<Limits, 'maxFileSizeBytes' | 'maxFiles'>,
): ResolvedFile[] {
  if (files.length > limits.maxFiles) {
    throw new SandboxError(
      'too-many-files',
      `${files.length} files were given; the limit is ${limits.maxFiles} per call.`,
      'Split the files across several calls, or pack them into one archive and unpack it with a command.',
    );
  }
  const seen = new Set<string>();
  return files.map((file) => {
    const path = resolveWorkspacePath(file.path);
    if (path === '/workspace') {
      throw new SandboxError(
        'invalid-input',
        'Cannot write to /workspace itself.',
        'Give a file path inside /workspace, like "notes.txt".',
      );
    }
    if (seen.has(path)) {
      throw new SandboxError('invalid-input', `"${file.path}" appears twice in one call.`, 'Give each path once.');
    }
    seen.add(path);
    const data = decodeContent(file);
    if (data.length > limits.maxFileSizeBytes) {
      throw new SandboxError(
        'file-too-large',
        `"${file.path}" is ${formatSize(data.length)}; the file size limit is ${formatSize(limits.maxFileSizeBytes)}.`,
        'Write smaller files, or raise limits.maxFileSizeBytes in the sandbox settings.',
      );
    }
    if (file.mode !== undefined && (!Number.isInteger(file.mode) || file.mode < 0 || file.mode > 0o777)) {
      throw new SandboxError(
        'invalid-input',
        `The mode for "${file.path}" must be permission bits between 0 and 0o777.`,
        'Use 0o644 for data and 0o755 for scripts.',
      );
    }
    return { path, data, mode: file.mode };
  });
}

/** A file's bytes as the file tools return them: UTF-8 text when it is (or when asked), base64 otherwise. */
export function encodeFileContent(
  data: Buffer,
  wanted: FileEncoding | 'auto',
): { content: string; encoding: FileEncoding } {
  if (wanted !== 'base64') {
    try {
      return { content: new TextDecoder('utf-8', { fatal: true }).decode(data), encoding: 'utf8' };
    } catch {
      // A part of a text file may start or end inside a character: still text.
      if (wanted === 'utf8' || isTextCutAtEdges(data))
        return { content: new TextDecoder('utf-8').decode(data), encoding: 'utf8' };
    }
  }
  return { content: data.toString('base64'), encoding: 'base64' };
}

/** Valid UTF-8 once the pieces of a character cut at either edge (at most three bytes each) are left out. */
function isTextCutAtEdges(data: Buffer): boolean {
  let start = 0;
  while (start < 3 && start < data.length && (data[start]! & 0xc0) === 0x80) start++;
  const end = data.length - incompleteTail(data);
  if ((start === 0 && end === data.length) || end <= start) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(data.subarray(start, end));
    return true;
  } catch {
    return false;
  }
}

/** How many bytes at the end are the start of a character whose other bytes are missing. */
function incompleteTail(data: Buffer): number {
  for (let back = 1; back <= Math.min(3, data.length); back++) {
    const byte = data[data.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}
