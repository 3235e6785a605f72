/**
 * Errors of host file operations: a SandboxError (reason and hint for the model) that also keeps the
 * errno-style code, so that a file system built on these operations can answer as Node's would.
 */
import { SandboxError, type SandboxErrorReason } from '../../errors';
import { quotedName as quoteName } from '../../results/displayName';

export class HostFileError extends SandboxError {
  constructor(
    readonly code: string,
    reason: SandboxErrorReason,
    message: string,
    hint?: string,
    options?: { cause?: unknown },
  ) {
    super(reason, message, hint, options);
  }

  static isHostFileError(error: unknown): error is HostFileError {
    return error instanceof HostFileError;
  }
}

export function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** A system call's failure on `path` (relative to the folder) as the model should read it. */
export function hostFileError(error: unknown, path: string): HostFileError {
  if (error instanceof HostFileError) return error;
  const code = errnoOf(error) ?? 'EIO';
  const shown = quoteName(path);
  switch (code) {
    case 'ENOENT':
      return new HostFileError(
        code,
        'file-not-found',
        `The workspace has no file ${shown}.`,
        'Check the path: it is relative to the workspace folder.',
      );
    case 'ELOOP':
      return linkRefused(path);
    case 'ENOTDIR':
      return new HostFileError(
        code,
        'not-a-file',
        `A part of the path ${shown} is a file, not a folder.`,
        'Check the path: only its last name may be a file.',
      );
    case 'EISDIR':
      return new HostFileError(
        code,
        'is-a-directory',
        `The path ${shown} is a directory.`,
        'Give the path of a file, like "results/output.csv".',
      );
    case 'EEXIST':
      return new HostFileError(
        code,
        'file-exists',
        `The workspace already has a file ${shown}.`,
        'Pick another path, or pass overwrite: true to replace it.',
      );
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new HostFileError(
        code,
        'permission-denied',
        `The workspace file ${shown} cannot be accessed: permission denied.`,
        "Check the file's permissions, or use another path.",
      );
    case 'ENAMETOOLONG':
      return new HostFileError(
        code,
        'invalid-input',
        `A name in the path ${shown} is too long.`,
        'Use names of at most 255 bytes.',
      );
    case 'ENOSPC':
    case 'EDQUOT':
      return new HostFileError(
        code,
        'file-too-large',
        `The disk holding the workspace is full; ${shown} was not written.`,
        'Free some space, then try again.',
      );
    default:
      // The code only: the system's message repeats the path unescaped (and as /proc/self/fd/N/…).
      return new HostFileError(
        code,
        'engine-error',
        `The workspace file ${shown} cannot be accessed (${code}).`,
        'Check the path, then try again.',
        { cause: error },
      );
  }
}

/** The error a system call would give with `code`, for a check made on a descriptor's fstat. */
export function errnoError(code: string, path: string): HostFileError {
  return hostFileError(Object.assign(new Error(code), { code }), path);
}

/** A name on the way is a symbolic link: never followed on the host, wherever it points. */
export function linkRefused(path: string): HostFileError {
  return new HostFileError(
    'ELOOP',
    'path-outside-workspace',
    `The path ${quoteName(path)} goes through a symbolic link; the host does not follow links in the workspace folder, since a sandbox could point them anywhere.`,
    'Give the real path of the file, without links, inside the workspace folder.',
  );
}

export function notRegularFile(path: string): HostFileError {
  return new HostFileError(
    'EACCES',
    'not-a-file',
    `The workspace path ${quoteName(path)} is not a regular file (a FIFO, socket, device or link).`,
    'Give the path of a regular file.',
  );
}

export function movedOutside(path: string): HostFileError {
  return new HostFileError(
    'EACCES',
    'path-outside-workspace',
    `The path ${quoteName(path)} led outside the workspace folder while it was opened (a folder on the way was moved or removed).`,
    "Try again once nothing is moving the folder's contents.",
  );
}
