/** sandbox_close: stops a persistent sandbox and removes its container. */
import { z } from 'zod';
import type { SessionInfo } from '../../engine/engine';
import type { CopyChange } from '../../files/copyChanges';
import { changeCounts, someChanges } from '../../files/copyPending';
import { ChangesAwaitReview, reviewPlaces } from '../../sessions/copyHold';
import { sandboxIdOf } from '../../sessions/sessions';
import { NO_REACH } from '../reach';
import { defineTool, words } from '../toolSpec';
import { SMALL_RESULT, sandboxIdField, sessionTarget, targetName } from './common';

export const closeInputSchema = z
  .object({
    sandbox_id: sandboxIdField
      .optional()
      .describe(
        'The sandbox to close: the sandbox_id returned by sandbox_open. Omit it to close the default sandbox of this workspace.',
      ),
  })
  .strict();

export function formatClose(sandboxId: string, closed = true): string {
  return closed
    ? `Closed sandbox "${sandboxId}": its processes and the files outside a mounted workspace are gone. A later call without sandbox_id opens a new default sandbox.`
    : `No sandbox "${sandboxId}" was open; nothing to close.`;
}

/** A copy session kept open: its changes await the user's review, which the model may not skip. */
export function formatHeld(session: SessionInfo, changes: readonly CopyChange[]): string {
  const id = sandboxIdOf(session);
  return [
    `Sandbox "${id}" was NOT closed: its copy of the workspace folder has ${changeCounts(changes)} that the user has not applied to their folder yet: ${someChanges(changes)}.`,
    `The user reviews them and applies or discards them: ${reviewPlaces(id)}. Closing now would lose them, so it stays open.`,
    'Next: tell the user that these changes await their review and ask them to apply or discard them; do not call sandbox_close for it again until they have.',
  ].join('\n');
}

export const closeTool = defineTool({
  name: 'sandbox_close',
  displayName: 'Close Sandbox',
  userDescription: 'Closes a persistent sandbox and removes its container.',
  modelDescription: [
    'Close a persistent sandbox: stop its processes and remove its container, with every file that is not in a mounted workspace folder.',
    'Call it when the work is done, or to start again from a clean sandbox: the next call without sandbox_id opens a new default sandbox.',
    'Without sandbox_id it closes the default sandbox of this workspace.',
    'Read anything you still need first. Idle sandboxes are also closed automatically after a while.',
    "A sandbox with workspace access copy whose changes the user has not applied or discarded is not closed: the result lists them; ask the user to review them, don't retry.",
  ].join(' '),
  icon: '$(close)',
  tags: ['sandbox'],
  schema: closeInputSchema,
  budget: SMALL_RESULT,
  // Closing loses the sandbox's own files, never the user's: it asks only under the "always" rule.
  asks: 'only under `agentSandbox.confirmation: always`',
  changes: true,
  target: sessionTarget,
  reach: () => NO_REACH,
  describe(_input, { target }) {
    return {
      progress: words('Closing sandbox {0}', targetName(target)),
      title: words('Close sandbox {0}?', targetName(target)),
      details: [words('Its files, installed packages and processes are lost.')],
    };
  },
  async run(input, context) {
    try {
      const closed = await context.service.close(input.sandbox_id, { signal: context.signal, admit: context.admit });
      return { text: [formatClose(closed.name ?? closed.id), ...closed.notices].join('\n') };
    } catch (error) {
      // Not closed is a state the model should see, not a failure to retry: the user reviews first.
      if (error instanceof ChangesAwaitReview) return { text: formatHeld(error.session, error.changes) };
      throw error;
    }
  },
});
