/**
 * Path policy for the file tools: every path is resolved against /workspace and may not leave it.
 * Purely lexical; the sandbox's own user permissions guard what symlinks point at.
 */
import { posix } from 'node:path';
import { displayName, quotedName } from '../results/displayName';
import { SandboxError } from '../errors';

export const WORKSPACE_DIR = '/workspace';
/** Where a session keeps the whole output of a command whose result was cut; sandbox_fs_read reads it too. */
export const SAVED_OUTPUT_DIR = '/tmp/sandbox-output';
const MAX_PATH_BYTES = 4096;
const MAX_NAME_BYTES = 255;

/** Resolves `input` (relative to /workspace, or absolute inside it) to a normalized absolute path. */
export function resolveWorkspacePath(input: string): string {
  if (typeof input !== 'string' || input.length === 0) {
    throw new SandboxError(
      'invalid-input',
      'A path is required.',
      'Give a path relative to /workspace, like "data/input.csv".',
    );
  }
  if (input.includes('\0')) {
    throw new SandboxError('invalid-input', 'The path contains a NUL character.', 'Remove the NUL byte from the path.');
  }
  if (Buffer.byteLength(input) > MAX_PATH_BYTES) {
    throw new SandboxError('invalid-input', `The path is longer than ${MAX_PATH_BYTES} bytes.`, 'Use a shorter path.');
  }
  const absolute = posix.normalize(input.startsWith('/') ? input : posix.join(WORKSPACE_DIR, input));
  const resolved = absolute.length > 1 && absolute.endsWith('/') ? absolute.slice(0, -1) : absolute;
  if (resolved !== WORKSPACE_DIR && !resolved.startsWith(`${WORKSPACE_DIR}/`)) {
    throw new SandboxError(
      'path-outside-workspace',
      `The path ${quotedName(input)} resolves to ${displayName(resolved)}, outside ${WORKSPACE_DIR}.`,
      `File tools only reach ${WORKSPACE_DIR}. Use a path inside it, like "${posix.basename(resolved) || 'file.txt'}"; to move other files, run a command with sandbox_exec.`,
    );
  }
  for (const name of resolved.split('/')) {
    if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
      throw new SandboxError(
        'invalid-input',
        `A path component is longer than ${MAX_NAME_BYTES} bytes.`,
        'Use shorter file names.',
      );
    }
  }
  return resolved;
}

/** The path relative to /workspace ("" for /workspace itself). */
export function workspaceRelative(absolute: string): string {
  return absolute === WORKSPACE_DIR ? '' : absolute.slice(WORKSPACE_DIR.length + 1);
}

/** Like resolveWorkspacePath, and also a file the session saved under SAVED_OUTPUT_DIR (for reading only). */
export function resolveReadablePath(input: string): string {
  if (typeof input === 'string' && input.startsWith(`${SAVED_OUTPUT_DIR}/`) && !input.includes('\0')) {
    const resolved = posix.normalize(input);
    if (resolved.startsWith(`${SAVED_OUTPUT_DIR}/`) && Buffer.byteLength(resolved) <= MAX_PATH_BYTES) return resolved;
  }
  return resolveWorkspacePath(input);
}
