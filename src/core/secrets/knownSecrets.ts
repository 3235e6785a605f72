/**
 * The secrets one process deals with, and the one redactor over them that every output path of
 * that process uses (tool results, the CLI's output, the MCP server, the activity log and its
 * export, the terminal): the host's (variables with a configured prefix, injected into every
 * sandbox the process opens or runs) and those of each session it uses, named in the session's
 * spec (`secretEnv`) with their values from its environment, so that a session another program
 * opened with other secrets is redacted too. A secret later given as a placeholder adds its
 * placeholder under the same name.
 */
import type { SessionInfo } from '../engine/engine';
import type { SandboxSpec, SpecLayer } from '../spec/spec';
import { Redactor } from './redaction';

export class KnownSecrets {
  private hostKey = '';
  private host: Record<string, string> = {};
  /** Container id → the session's secrets as (name, value) pairs. */
  private readonly sessions = new Map<string, [string, string][]>();
  /** Pairs added by hand: bound secrets' values and placeholders (core/secrets/bound.ts). */
  private readonly added: [string, string][] = [];
  private built: Redactor | undefined;

  /**
   * `hostSecrets` is read on each use, so that a changed environment or setting takes effect;
   * `boundValue` gives the host's value of a session's bound secret, where this process has it.
   */
  constructor(
    private readonly hostSecrets: () => Record<string, string> = () => ({}),
    private readonly boundValue: (name: string) => string | undefined = () => undefined,
  ) {}

  /** Redacts these too (a bound secret's value and placeholder): shown as `[secret:NAME]`. */
  add(pairs: readonly (readonly [string, string])[]): void {
    for (const [name, value] of pairs) if (value) this.added.push([name, value]);
    this.built = undefined;
  }

  /** The value of a secret the user offers, where this process has it (the CLI's host variables or secrets file). */
  valueOf(name: string): string | undefined {
    return this.boundValue(name);
  }

  /** The variables to inject into a sandbox this process opens. */
  env(): Record<string, string> {
    this.refresh();
    return { ...this.host };
  }

  /** Adds the secrets a session holds (what it was given, by this or another program). */
  learn(info: SessionInfo): void {
    const pairs = [...sessionSecrets(info.spec), ...this.boundValues(info.spec)];
    const known = this.sessions.get(info.id);
    if (known ? JSON.stringify(known) === JSON.stringify(pairs) : pairs.length === 0) return;
    this.sessions.set(info.id, pairs);
    this.built = undefined;
  }

  redactor(): Redactor {
    this.refresh();
    return (this.built ??= new Redactor([
      ...Object.entries(this.host),
      ...[...this.sessions.values()].flat(),
      ...this.added,
    ]));
  }

  /** The values of a session's bound secrets that this process knows from its host. */
  private boundValues(spec: SandboxSpec): [string, string][] {
    return (spec.boundSecrets ?? []).flatMap(({ name }) => {
      const value = this.boundValue(name);
      return value ? [[name, value] as [string, string]] : [];
    });
  }

  /** The text with every known secret replaced by `[secret:NAME]`; bound, to be passed around. */
  readonly redact = (text: string): string => {
    const redactor = this.redactor();
    return redactor.isEmpty ? text : redactor.redact(text);
  };

  private refresh(): void {
    const host = this.hostSecrets();
    const key = JSON.stringify(host);
    if (key === this.hostKey) return;
    this.hostKey = key;
    this.host = host;
    this.built = undefined;
  }
}

/** The secrets a session was given: the names its spec marks, with their values from its environment. */
export function sessionSecrets(spec: SandboxSpec): [string, string][] {
  return (spec.secretEnv ?? []).flatMap((name) => {
    const value = spec.env[name];
    return value ? [[name, value] as [string, string]] : [];
  });
}

/** The spec layer that injects these secrets: into the environment, marked as secrets by name. */
export function secretsLayer(secrets: Readonly<Record<string, string>> | undefined): SpecLayer {
  const names = Object.keys(secrets ?? {});
  return names.length ? { env: { ...secrets }, secretEnv: names } : {};
}
