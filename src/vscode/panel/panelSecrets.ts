/**
 * A session's secrets as the panel shows them (issue 23, visible use): each by name, with its binding
 * in words or, for one whose value entered the sandbox, that warning; for a bound one, how often the
 * egress proxy added it and how often the sandbox sent its placeholder where it was not replaced,
 * counted from the decisions' notes ("TOKEN added for api.example.com", "TOKEN sent toward
 * other.example: not replaced"). Only names and bindings: never a value, never a placeholder.
 */
import type { LoggedDecision } from '../../core/network/decisionLog';
import type { SandboxSpec } from '../../core/spec/spec';
import type { SessionView } from '../../shared/protocol';

/** What the notes of a session's decisions say about one bound secret. */
export interface SecretUse {
  /** Decisions whose request got the value added ("NAME added for HOST"). */
  used: number;
  /** Decisions where the placeholder went out as it was ("NAME ... not replaced"). */
  refused: number;
}

export const INSIDE_WORDS = 'value inside the sandbox';

/** What one note says about the secret `name`: its value added, its placeholder not replaced, or nothing. */
export function noteKind(name: string, note: string): keyof SecretUse | undefined {
  if (!note.startsWith(`${name} `)) return undefined;
  if (note.startsWith(`${name} added for `)) return 'used';
  if (note.includes('not replaced')) return 'refused';
  return undefined;
}

/** Container id → secret name → its use, from every decision the panel has read. */
export class SecretCounts {
  private readonly byContainer = new Map<string, Map<string, SecretUse>>();

  /** Counts a decision's notes for the secrets of that container; whether any count changed. */
  count(containerId: string, names: readonly string[], decision: Pick<LoggedDecision, 'secrets'>): boolean {
    if (!decision.secrets?.length || !names.length) return false;
    let changed = false;
    for (const name of names) {
      // One decision counts once per secret and kind (a connection's notes are distinct already).
      const kinds = new Set(decision.secrets.map((note) => noteKind(name, note)));
      for (const kind of ['used', 'refused'] as const) {
        if (!kinds.has(kind)) continue;
        const uses = this.byContainer.get(containerId) ?? new Map<string, SecretUse>();
        this.byContainer.set(containerId, uses);
        const use = uses.get(name) ?? { used: 0, refused: 0 };
        uses.set(name, { ...use, [kind]: use[kind] + 1 });
        changed = true;
      }
    }
    return changed;
  }

  /** The counts of one container's secrets (none counted yet: an empty map). */
  of(containerId: string): ReadonlyMap<string, SecretUse> {
    return this.byContainer.get(containerId) ?? new Map();
  }

  /** Forgets the containers no longer listed. */
  keepOnly(containerIds: readonly string[]): void {
    for (const id of this.byContainer.keys()) if (!containerIds.includes(id)) this.byContainer.delete(id);
  }
}

/** The names of a session's bound secrets: the ones the proxy's notes are about. */
export function boundNames(spec: SandboxSpec): string[] {
  return (spec.boundSecrets ?? []).map((secret) => secret.name);
}

/**
 * A session's secrets for its card: the bound ones (`→ api.github.com, Authorization header`) with
 * their counts, then the ones whose values are in its environment (the names its spec marks as
 * secrets that are not bound: those offered as inside secrets, and the host's injected ones).
 */
export function secretsView(
  spec: SandboxSpec,
  use: ReadonlyMap<string, SecretUse> = new Map(),
): Pick<SessionView, 'secrets'> {
  const bound = spec.boundSecrets ?? [];
  const boundSet = new Set(bound.map((secret) => secret.name));
  const secrets: NonNullable<SessionView['secrets']> = [
    ...bound.map(({ name, domains, how }) => ({
      name,
      binding: `→ ${domains.join(', ')}, ${how.kind === 'header' ? `${how.header} header` : `basic auth as ${how.user}`}`,
      inside: false,
      used: use.get(name)?.used ?? 0,
      refused: use.get(name)?.refused ?? 0,
    })),
    ...[...new Set(spec.secretEnv ?? [])]
      .filter((name) => !boundSet.has(name))
      .map((name) => ({ name, binding: INSIDE_WORDS, inside: true, used: 0, refused: 0 })),
  ];
  return secrets.length ? { secrets } : {};
}

/**
 * A decision's secret notes for its Activity entry: `; TOKEN added` when added for the decision's own
 * host, each other note whole (`; TOKEN sent toward other.example: not replaced`).
 */
export function notesSuffix(host: string, notes: readonly string[] | undefined): string {
  if (!notes?.length) return '';
  return notes
    .map((note) => {
      const added = / added for (.+)$/.exec(note);
      return added && added[1] === host && !note.slice(0, added.index).includes(' ')
        ? note.slice(0, added.index + ' added'.length)
        : note;
    })
    .map((note) => `; ${note}`)
    .join('');
}
