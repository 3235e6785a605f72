/**
 * Work a call leaves for its session after returning its result (saving a cut output): the
 * session's next call waits for it first, and what it could not do is told once, by the next call
 * that asks.
 */
import { abortError, throwIfAborted } from '../errors';

export class AfterCallWork {
  /** Container id → the work under way, which the next call waits for. */
  private readonly later = new Map<string, Promise<void>>();
  /** Container id → what that work could not do. */
  private readonly notices = new Map<string, string[]>();

  add(containerId: string, work: () => Promise<string[]>): void {
    const previous = this.later.get(containerId) ?? Promise.resolve();
    const done: Promise<void> = previous
      .then(work)
      .then(
        (notices) => {
          if (notices.length) this.notices.set(containerId, [...(this.notices.get(containerId) ?? []), ...notices]);
        },
        () => undefined,
      )
      .finally(() => {
        if (this.later.get(containerId) === done) this.later.delete(containerId);
      });
    this.later.set(containerId, done);
  }

  /** What work after earlier calls could not do, once. */
  takeNotices(containerId: string): string[] {
    const notices = this.notices.get(containerId) ?? [];
    this.notices.delete(containerId);
    return notices;
  }

  /** Waits for the session's work under way (never rejecting), or throws as soon as the call is cancelled. */
  async waitFor(containerId: string, signal: AbortSignal | undefined): Promise<void> {
    const work = this.later.get(containerId);
    if (!work) return;
    throwIfAborted(signal);
    if (!signal) return work;
    let onAbort: (() => void) | undefined;
    try {
      await Promise.race([
        work,
        new Promise<never>((_, reject) => {
          onAbort = () => reject(abortError(signal));
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  /** Resolves when no work is under way. */
  async settled(): Promise<void> {
    while (this.later.size) await Promise.allSettled([...this.later.values()]);
  }

  forget(containerId: string): void {
    this.notices.delete(containerId);
  }
}
