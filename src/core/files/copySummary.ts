/** A copy session's changes in a few words, for messages (no listing, no engine). */
import { displayName } from '../results/displayName';
import type { CopyChange } from './copyChanges';

/** "3 changes (1 added, 2 modified, 0 deleted)". */
export function changeCounts(changes: readonly CopyChange[]): string {
  const count = (kind: CopyChange['change']) => changes.filter((change) => change.change === kind).length;
  const total = changes.length === 1 ? '1 change' : `${changes.length.toLocaleString('en-US')} changes`;
  return `${total} (${count('added')} added, ${count('modified')} modified, ${count('deleted')} deleted)`;
}

/** The first few changes, "modified README.md, added src/new.py and 4 more". */
export function someChanges(changes: readonly CopyChange[], max = 5): string {
  // Names come from the sandbox: one with a newline or terminal escapes is shown quoted.
  const shown = changes.slice(0, max).map((change) => `${change.change} ${displayName(change.path)}`);
  const more = changes.length - shown.length;
  if (more > 0) return `${shown.join(', ')} and ${more.toLocaleString('en-US')} more`;
  return shown.length > 1 ? `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}` : (shown[0] ?? '');
}
