/**
 * The host's secrets for sandboxes (variables with a configured prefix, the prefix stripped) and the
 * one redactor (core/secrets/knownSecrets.ts) that keeps their values, and those of every session
 * the window uses, out of every result, the log, the activity list and its export, and the terminal.
 */
import { KnownSecrets } from '../core/secrets/knownSecrets';
import { collectSecrets } from '../core/secrets/secrets';
import { StreamRedactor } from '../core/secrets/streamRedaction';
import type { Settings } from '../core/spec/settings';

export class SandboxSecrets extends KnownSecrets {
  constructor(private readonly settings: () => Settings) {
    super(() => collectSecrets(process.env, settings().envPrefixes));
  }

  /** For a new terminal: its output redacted as it streams, unless the user asked to see the values (agentSandbox.terminal.showSecrets). */
  terminalRedaction(): StreamRedactor | undefined {
    return this.settings().terminal.showSecrets ? undefined : new StreamRedactor(() => this.redactor());
  }
}
