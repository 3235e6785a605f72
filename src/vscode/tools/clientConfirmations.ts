/**
 * Which calls VS Code was asked to confirm. prepareInvocation decides on what this window knows of a
 * sandbox, invoke on what the engine has, and the two can differ: a session this window holds no
 * handle of (opened by another client, before a reload or an engine setting change, or named by its
 * container id). invoke looks here to know whether a call that needs VS Code's confirmation got it.
 * The API hands both nothing but the call's input, so a call is matched by its input, the latest
 * first (VS Code prepares a call, then invokes it).
 */
import { createHash } from 'node:crypto';

const MAX_INPUTS = 256;
const MAX_PER_INPUT = 8;

export class ClientConfirmations {
  private readonly byInput = new Map<string, boolean[]>();

  /** prepareInvocation attached VS Code's confirmation to this call, or not. */
  note(input: unknown, confirmed: boolean): void {
    const key = keyOf(input);
    const notes = this.byInput.get(key) ?? [];
    notes.push(confirmed);
    if (notes.length > MAX_PER_INPUT) notes.shift();
    this.byInput.delete(key);
    this.byInput.set(key, notes);
    // Calls the user declined are never invoked: their notes go, the oldest first.
    if (this.byInput.size > MAX_INPUTS) this.byInput.delete(this.byInput.keys().next().value!);
  }

  /** Whether VS Code was asked to confirm this call; false when prepareInvocation did not see it. */
  take(input: unknown): boolean {
    const key = keyOf(input);
    const notes = this.byInput.get(key);
    const confirmed = notes?.pop() ?? false;
    if (notes?.length === 0) this.byInput.delete(key);
    return confirmed;
  }
}

function keyOf(input: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(input) ?? 'undefined')
    .digest('base64');
}
