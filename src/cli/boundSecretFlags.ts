/**
 * `--secret NAME=DOMAIN[,DOMAIN...]:HOW` on `open` and `run`: a bound secret (core/secrets/bound.ts)
 * whose value is the host variable NAME. The sandbox gets a placeholder; the egress proxy adds the
 * value to requests to the domains, which join the allowlist (a bound secret implies reaching them).
 */
import {
  BoundSecretError,
  boundFromHost,
  boundSecretsLayer,
  parseBinding,
  type BoundSecret,
} from '../core/secrets/bound';
import type { KnownSecrets } from '../core/secrets/knownSecrets';
import type { SpecLayer } from '../core/spec/spec';
import { usageError, type ParsedArgs } from './args';

export interface BoundFromFlags {
  secrets: BoundSecret[];
  /** By name: for the egress proxy alone. */
  values: Record<string, string>;
  /** The placeholders, the CA variables, the names marked as secrets, the bindings. */
  layer: SpecLayer;
  /** The domains to add to the allowlist. */
  domains: string[];
}

export function boundSecretsFromFlags(
  values: ParsedArgs['values'],
  env: NodeJS.ProcessEnv,
): BoundFromFlags | undefined {
  const flags = values.secret ?? [];
  if (!flags.length) return undefined;
  if (values.network)
    throw usageError(
      '--secret needs the allowlist, not --network: the proxy that adds the secret is the allowlist’s. Drop --network (the secret’s domains are allowed by themselves), or add --allow-domain for the other names.',
    );
  try {
    const { secrets, values: secretValues } = boundFromHost(flags.map(parseBinding), env);
    const { networkAllow, ...layer } = boundSecretsLayer(secrets);
    return { secrets, values: secretValues, layer, domains: networkAllow };
  } catch (error) {
    if (BoundSecretError.is(error)) throw usageError(error.message);
    throw error;
  }
}

/** The flags with the bound secrets' domains on the allowlist. */
export function withBoundDomains(
  values: ParsedArgs['values'],
  bound: BoundFromFlags | undefined,
): ParsedArgs['values'] {
  if (!bound) return values;
  return { ...values, 'allow-domain': [...new Set([...(values['allow-domain'] ?? []), ...bound.domains])] };
}

/** Shows the value, and the placeholder, as `[secret:NAME]` in everything this command prints. */
export function redactBound(secrets: KnownSecrets, bound: BoundFromFlags | undefined): void {
  if (!bound) return;
  secrets.add(
    bound.secrets.flatMap((secret) => [
      [secret.name, bound.values[secret.name]!] as const,
      [secret.name, secret.placeholder] as const,
    ]),
  );
}

/** What `open` says about them. */
export function boundNotices(bound: BoundFromFlags | undefined, created: boolean): string[] {
  if (!bound) return [];
  if (!created)
    return [
      `The session was open already: --secret was not applied (its secrets are those it was opened with). Close it first to bind ${bound.secrets.map((secret) => secret.name).join(', ')}.`,
    ];
  return bound.secrets.map(
    (secret) =>
      `Bound secret ${secret.name}: the sandbox holds a placeholder; the proxy sends the value only in the ${secret.how.kind === 'header' ? `${secret.how.header} header` : 'basic auth password'} of HTTPS requests to ${secret.domains.join(', ')}, which the allowlist now includes.`,
  );
}
