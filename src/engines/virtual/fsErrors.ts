/**
 * Errors of the host folder's file system as just-bash expects them: the message starts with the
 * errno code ("ENOENT: …"), which its commands look for, and the SandboxError's reason and hint are
 * kept for the file tools.
 */
import { HostFileError, hostFileError } from '../../core/files/hostFiles/hostFileError';
import type { SandboxErrorReason } from '../../core/errors';

export function fsError(error: unknown, path: string): HostFileError {
  const known = hostFileError(error, path);
  if (known.message.startsWith(`${known.code}:`)) return known;
  return new HostFileError(known.code, known.reason, `${known.code}: ${known.message}`, known.hint, {
    cause: known.cause,
  });
}

/** An error this file system raises itself, with a code as a system call would give it. */
export function fsRefusal(code: string, reason: SandboxErrorReason, message: string, hint?: string): HostFileError {
  return new HostFileError(code, reason, `${code}: ${message}`, hint);
}
