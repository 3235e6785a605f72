/**
 * The host's secrets for sandboxes (variables with a configured prefix, the prefix stripped) and the
 * redactor that keeps their values out of every result the model sees and out of the log.
 */
import { Redactor } from '../core/secrets/redaction';
import { collectSecrets } from '../core/secrets/secrets';
import type { Settings } from '../core/spec/settings';

export class SandboxSecrets {
  private key = '';
  private secrets: Record<string, string> = {};
  private redactor = new Redactor();

  constructor(private readonly settings: () => Settings) {}

  /** The variables to inject, read from the environment on each use. */
  env(): Record<string, string> {
    this.refresh();
    return this.secrets;
  }

  redact(text: string): string {
    this.refresh();
    return this.redactor.isEmpty ? text : this.redactor.redact(text);
  }

  private refresh(): void {
    const secrets = collectSecrets(process.env, this.settings().envPrefixes);
    const key = JSON.stringify(secrets);
    if (key === this.key) return;
    this.key = key;
    this.secrets = secrets;
    this.redactor = new Redactor(secrets);
  }
}
