/** What a kept copy session holds, in words for the CLI and the tools (no listing, no engine). */
import { changeCounts, someChanges } from '../files/copySummary';
import type { HeldSession } from './copyHold';
import { sandboxIdOf } from './sessions';

/** Why a session stays open, for the log and the command line. */
export function heldText(held: HeldSession, folder?: string): string {
  const id = sandboxIdOf(held.session);
  const where = folder ? ` --folder ${folder}` : '';
  const what = held.problem
    ? `its copy's changes could not be listed (${held.problem})`
    : `its copy of the folder has ${changeCounts(held.changes)} not applied to the folder: ${someChanges(held.changes)}`;
  return `Kept session ${id} open: ${what}. Review them with agent-sandbox diff --session ${id}${where} (in VS Code: Source Control › "Sandbox changes") and apply them, or close it losing them with agent-sandbox close --session ${id}${where} --discard.`;
}
