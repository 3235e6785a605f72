/**
 * Redaction of a stream (a terminal's output), where a value may arrive cut between two chunks:
 * the end of what has arrived, as long as the longest form a value can take, is held back until
 * more comes, or until the stream pauses (the caller flushes then), so that no value is shown half.
 */
import type { Redactor } from './redaction';

export class StreamRedactor {
  private held = '';

  constructor(private readonly redactor: () => Redactor) {}

  /** What of the stream so far can be shown now, redacted; the rest is held. */
  push(chunk: string): string {
    const redactor = this.redactor();
    const text = this.held + chunk;
    if (redactor.isEmpty) {
      this.held = '';
      return text;
    }
    let split = text.length - redactor.longestForm;
    if (split <= 0) {
      this.held = text;
      return '';
    }
    // A value that starts before the split and ends after it is held whole.
    for (const match of redactor.ranges(text)) if (match.start < split && match.end > split) split = match.start;
    // Never between the two halves of a surrogate pair.
    if (split > 0 && /[\ud800-\udbff]/.test(text[split - 1]!)) split--;
    this.held = text.slice(split);
    return redactor.redact(text.slice(0, split));
  }

  /** Everything held, redacted; a start of a value at its very end counts as the value. */
  flush(): string {
    const text = this.held;
    this.held = '';
    return text === '' ? '' : this.redactor().redact(text, { cut: true });
  }

  /** Whether anything is held back. */
  get holding(): boolean {
    return this.held !== '';
  }
}
