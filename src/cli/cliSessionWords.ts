/** The session path's advice in the command line's words (see core/sessions/sessionWords.ts). */
import type { SessionWords } from '../core/sessions/sessionWords';

export const CLI_WORDS: SessionWords = {
  notOpen: (sandboxId, folder) => ({
    message: `No session named "${sandboxId}" is open for ${folder}.`,
    hint: `Open it first (agent-sandbox open --session ${sandboxId}), or list sessions with agent-sandbox ls.`,
  }),
  nothingToClose: (sandboxId, folder) => ({
    message: `No session named "${sandboxId}" is open for ${folder}.`,
    hint: 'List sessions with agent-sandbox ls.',
  }),
  afterDeath: (sandboxId) =>
    `Close it (agent-sandbox close --session ${sandboxId}), then open it again with agent-sandbox open.`,
  afterClosedDuringCall: (sandboxId) =>
    `Open it again (agent-sandbox open --session ${sandboxId}; its files are gone) and repeat the command if it is still needed.`,
};
