/**
 * The network allowlist: domain patterns (`api.github.com`, `*.githubusercontent.com`) and explicit
 * ports of the user's own machine (`localhost:3000`). A sandbox with the `allowlist` tier reaches
 * exactly these through the egress proxy, and nothing else.
 */
import { z } from 'zod';

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const DOMAIN = new RegExp(`^(?:\\*\\.)?(?:${LABEL}\\.)*${LABEL}$`);
const LOCAL = /^localhost:(\d{1,5})$/;

export type AllowEntry =
  | { kind: 'domain'; pattern: string; wildcard: boolean; text: string }
  | { kind: 'local-port'; port: number; text: string };

/** One entry as the user writes it; refused with a message that says what a valid entry looks like. */
export const allowEntrySchema = z
  .string()
  .trim()
  .toLowerCase()
  .transform((text, context): AllowEntry => {
    const local = LOCAL.exec(text);
    if (local) {
      const port = Number(local[1]);
      if (port >= 1 && port <= 65535) return { kind: 'local-port', port, text };
    } else if (DOMAIN.test(text) && text.length <= 253 && !/^\*?\.?[0-9.]+$/.test(text)) {
      const wildcard = text.startsWith('*.');
      return { kind: 'domain', pattern: wildcard ? text.slice(2) : text, wildcard, text };
    }
    context.addIssue({
      code: 'custom',
      message: `"${text}" is not an allowlist entry: write a domain (api.github.com), a wildcard for its subdomains (*.githubusercontent.com) or a port of your machine (localhost:3000). IP addresses are not accepted.`,
    });
    return z.NEVER;
  });

export const allowlistSchema = z.array(allowEntrySchema).max(200);

/** The allowlist as a spec keeps it: the entries' own texts, each checked, lower-cased. */
export const allowlistTextSchema = z
  .array(
    allowEntrySchema
      .transform((entry) => entry.text)
      // For the settings editor: what an entry looks like (the parse checks ports and IP addresses too).
      .meta({
        pattern: `^\\s*(?:(?:\\*\\.)?(?:${LABEL}\\.)*${LABEL}|localhost:\\d{1,5})\\s*$`.replace(/a-z/g, 'a-zA-Z'),
      }),
  )
  .max(200)
  .describe(
    'Network allowlist: domains (api.github.com), wildcards for their subdomains (*.githubusercontent.com) and ports of your machine (localhost:3000). With entries and network off, the sandbox reaches exactly these through a proxy.',
  );

/** Names the user maps to addresses themselves (like /etc/hosts); only names on the allowlist are reached. */
export const networkHostsSchema = z
  .record(
    z
      .string()
      .trim()
      .toLowerCase()
      .regex(new RegExp(`^(?:${LABEL}\\.)*${LABEL}$`), 'a host name, like api.test'),
    z.union([z.ipv4(), z.ipv6()]),
  )
  .describe(
    'Host names mapped to addresses by you (like /etc/hosts), for the allowlist proxy; such a name may lead to your own machine or network.',
  );

/** The tier a spec's network settings make: full network, the allowlist through the proxy, or none. */
export type NetworkTier = 'off' | 'allowlist' | 'full';

export function networkTier(spec: { network: boolean; networkAllow: readonly string[] }): NetworkTier {
  return spec.network ? 'full' : spec.networkAllow.length ? 'allowlist' : 'off';
}

/** The entries of a spec's allowlist texts (already checked when the spec was made). */
export function allowEntries(texts: readonly string[]): AllowEntry[] {
  return texts.map((text) => allowEntrySchema.parse(text));
}

export type Decision = { allowed: true; rule: string; local: boolean } | { allowed: false; reason: string };

/** Whether a host name and port may be reached. Names only: a literal IP address is never on the list. */
export function decide(entries: readonly AllowEntry[], host: string, port: number): Decision {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (isIpLiteral(name))
    return { allowed: false, reason: `${host} is an IP address; only names on the allowlist are reached` };
  if (name === 'host.docker.internal' || name === 'localhost') {
    const entry = entries.find((candidate) => candidate.kind === 'local-port' && candidate.port === port);
    return entry
      ? { allowed: true, rule: entry.text, local: true }
      : { allowed: false, reason: `port ${port} of your machine is not on the allowlist (add localhost:${port})` };
  }
  for (const entry of entries) {
    if (entry.kind !== 'domain') continue;
    if (entry.wildcard ? name.endsWith(`.${entry.pattern}`) : name === entry.pattern)
      return { allowed: true, rule: entry.text, local: false };
  }
  return { allowed: false, reason: `${name} is not on the allowlist` };
}

export function isIpLiteral(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':') || /^\[.*\]$/.test(host) || /^\d+$/.test(host);
}

/** The names an allowlist sandbox may reach under a policy: any when the whole network is allowed. */
export function allowedNamesOf(network: {
  mode: 'off' | 'allowlist' | 'full';
  allow: readonly string[];
}): readonly string[] | 'any' {
  return network.mode === 'full' ? 'any' : network.mode === 'allowlist' ? network.allow : [];
}
