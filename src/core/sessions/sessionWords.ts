/**
 * How the session path tells a caller what to do next, in that caller's words: the tools name
 * sandbox_open and sandbox_close, the command line its own commands (src/cli/cliSessionWords.ts).
 */
export interface SessionWords {
  /** No session with that id is open in the folder. */
  notOpen(sandboxId: string, workspaceFolder: string): { message: string; hint: string };
  /** Closing a session that is not open. */
  nothingToClose(sandboxId: string, workspaceFolder: string): { message: string; hint: string };
  /** Added to why a session died: how to go on. */
  afterDeath(sandboxId: string): string;
  /** A call stopped because its session was closed meanwhile: how to go on. */
  afterClosedDuringCall(sandboxId: string): string;
}

/** The tools' words, for the model (also through agent-sandbox tool). */
export const TOOL_WORDS: SessionWords = {
  notOpen: (sandboxId) => ({
    message: `No sandbox "${sandboxId}" is open in this workspace.`,
    hint: 'Call sandbox_open to open one (it returns the sandbox_id to use), or omit sandbox_id to use the default sandbox.',
  }),
  nothingToClose: (sandboxId) => ({
    message: `No sandbox "${sandboxId}" is open in this workspace.`,
    hint: 'Nothing to close.',
  }),
  afterDeath: () => 'Close it with sandbox_close, or call sandbox_open to start a new sandbox with that name.',
  afterClosedDuringCall: () =>
    'Open a sandbox again with sandbox_open (its files are gone) and repeat the call if it is still needed.',
};
