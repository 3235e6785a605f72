/**
 * Every failure the sandbox reports carries a machine-readable `reason` and a `hint` that says what
 * to do next, written so that both a person and a language model can act on it.
 */
export type SandboxErrorReason =
  | 'engine-unavailable'
  | 'engine-permission'
  | 'engine-error'
  | 'image-unavailable'
  | 'invalid-input'
  | 'path-outside-workspace'
  | 'file-not-found'
  | 'not-a-file'
  | 'is-a-directory'
  | 'file-too-large'
  | 'disk-limit'
  | 'file-corrupted'
  | 'file-exists'
  | 'too-many-files'
  | 'read-only'
  | 'permission-denied'
  | 'session-not-found'
  | 'session-dead'
  | 'session-closed'
  | 'session-exists'
  | 'package-install-failed'
  | 'secret-unavailable'
  | 'aborted'
  | 'unsupported';

export class SandboxError extends Error {
  override readonly name = 'SandboxError';

  constructor(
    readonly reason: SandboxErrorReason,
    message: string,
    readonly hint?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  static is(error: unknown, reason?: SandboxErrorReason): error is SandboxError {
    return error instanceof SandboxError && (reason === undefined || error.reason === reason);
  }

  /** The message followed by the hint, as shown to users and models. */
  get fullMessage(): string {
    return this.hint ? `${this.message}\n${this.hint}` : this.message;
  }
}

export function abortError(signal: AbortSignal): SandboxError {
  const why = signal.reason instanceof Error ? signal.reason.message : 'the call was cancelled';
  return new SandboxError('aborted', `Cancelled: ${why}.`, undefined, { cause: signal.reason });
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

export function errorMessage(error: unknown): string {
  if (SandboxError.is(error)) return error.fullMessage;
  if (error instanceof Error) return error.message;
  return String(error);
}
