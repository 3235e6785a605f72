/**
 * The secrets of this window: the host's for every sandbox (variables with a configured prefix, the
 * prefix stripped), the values of those the user offers by name (`agentSandbox.secrets`, kept in
 * VS Code's SecretStorage), and the one redactor (core/secrets/knownSecrets.ts) that keeps all their
 * values, and those of every session the window uses, out of every result, the log, the activity
 * list and its export, the panel and the terminal.
 */
import type * as vscode from 'vscode';
import { KnownSecrets } from '../core/secrets/knownSecrets';
import { collectSecrets } from '../core/secrets/secrets';
import { StreamRedactor } from '../core/secrets/streamRedaction';
import type { Settings } from '../core/spec/settings';

/** The SecretStorage key of an offered secret's value. */
export const secretKey = (name: string) => `agentSandbox.secret.${name}`;

export class SandboxSecrets extends KnownSecrets {
  /** The stored values read so far, by name: redacted everywhere, whether or not a sandbox asked for them. */
  private readonly stored: Map<string, string>;
  private readonly settings: () => Settings;
  private readonly storage: vscode.SecretStorage | undefined;

  constructor(settings: () => Settings, storage?: vscode.SecretStorage) {
    const stored = new Map<string, string>();
    super(
      () => collectSecrets(process.env, settings().envPrefixes),
      (name) => stored.get(name),
    );
    this.stored = stored;
    this.settings = settings;
    this.storage = storage;
  }

  /** The stored value of an offered secret, read now (and redacted from then on). */
  async value(name: string): Promise<string | undefined> {
    const value = (await this.storage?.get(secretKey(name))) || undefined;
    if (value && this.stored.get(name) !== value) {
      this.stored.set(name, value);
      this.add([[name, value]]);
    }
    return value;
  }

  async store(name: string, value: string): Promise<void> {
    await this.storage?.store(secretKey(name), value);
    await this.value(name);
  }

  async delete(name: string): Promise<void> {
    await this.storage?.delete(secretKey(name));
  }

  /** Reads every offered secret's value, so that each is redacted before any sandbox asks for it. */
  async loadOffered(): Promise<void> {
    await Promise.all(this.settings().secrets.map((entry) => this.value(entry.name)));
  }

  /** For a new terminal: its output redacted as it streams, unless the user asked to see the values (agentSandbox.terminal.showSecrets). */
  terminalRedaction(): StreamRedactor | undefined {
    return this.settings().terminal.showSecrets ? undefined : new StreamRedactor(() => this.redactor());
  }
}
