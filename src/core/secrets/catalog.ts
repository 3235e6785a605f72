/**
 * The secrets a user offers to sandboxes, by name (VS Code's `agentSandbox.secrets`, or the CLI's
 * `--secret` flags), and what a sandbox that asks for some of them gets:
 * - a bound secret (core/secrets/bound.ts): the sandbox holds a placeholder; the egress proxy adds
 *   the value to requests to the secret's domains, which the sandbox then reaches;
 * - an inside secret: the value itself enters the sandbox as a variable (a password for a database
 *   the sandbox runs), shown as `[secret:NAME]` in everything that comes back.
 * Entries carry no values: those come from where the user keeps them (VS Code's SecretStorage, the
 * CLI's host variables or secrets file), only when a sandbox that asked for them opens.
 */
import { z } from 'zod';
import { SandboxError } from '../errors';
import type { SandboxSpec, SpecLayer } from '../spec/spec';
import { secretsLayer } from './knownSecrets';
import { ENV_NAME } from './secrets';
import {
  boundBindingSchema,
  boundSecretsLayer,
  describeBinding,
  newPlaceholder,
  type BoundBinding,
  type BoundSecret,
} from './bound';

const DEFAULT_HEADER = 'Authorization: Bearer {value}';

/** One entry of `agentSandbox.secrets`, as settings.json holds it. */
export const secretSettingSchema = z
  .object({
    name: z
      .string()
      .regex(ENV_NAME, 'a secret name is a variable name: letters, digits and "_", not starting with a digit')
      .max(256),
    domains: z.array(z.string()).max(20).optional(),
    header: z.string().max(600).optional(),
    basicAuthUser: z.string().max(200).optional(),
    inside: z.boolean().optional(),
  })
  .strict()
  .transform((entry, context): SecretEntry => {
    const fail = (message: string) => {
      context.addIssue({ code: 'custom', message, input: entry });
      return z.NEVER;
    };
    if (entry.inside) {
      if (entry.domains?.length || entry.header || entry.basicAuthUser)
        return fail(
          `${entry.name}: an inside secret enters the sandbox itself; it has no domains, header or basicAuthUser (drop "inside" to bind it to domains instead)`,
        );
      return { name: entry.name, inside: true };
    }
    if (!entry.domains?.length)
      return fail(
        `${entry.name}: give the domains the secret may be sent to ("domains": ["api.example.com"]), or "inside": true to put its value in the sandbox`,
      );
    if (entry.header && entry.basicAuthUser)
      return fail(`${entry.name}: give either "header" or "basicAuthUser", not both`);
    const how =
      entry.basicAuthUser !== undefined ? { kind: 'basic', user: entry.basicAuthUser } : headerHow(entry.header);
    const binding = boundBindingSchema.safeParse({ name: entry.name, domains: entry.domains, how });
    if (!binding.success) {
      const issue = binding.error.issues[0]!;
      const where =
        issue.path[0] === 'how'
          ? entry.basicAuthUser !== undefined
            ? 'basicAuthUser'
            : 'header'
          : issue.path.join('.');
      return fail(`${entry.name}: ${where} ${issueWords(issue.path, issue.message)}`);
    }
    return { name: entry.name, inside: false, binding: binding.data };
  });

export type SecretSetting = z.input<typeof secretSettingSchema>;

/** A secret the user offers: bound to domains, or one whose value enters the sandbox. */
export type SecretEntry = { name: string; inside: true } | { name: string; inside: false; binding: BoundBinding };

/** `agentSandbox.secrets` as a whole: names are unique. */
export const secretSettingsSchema = z
  .array(secretSettingSchema)
  .max(50)
  .superRefine((entries, context) => {
    const seen = new Set<string>();
    for (const entry of entries) {
      if (seen.has(entry.name))
        context.addIssue({ code: 'custom', message: `the secret ${entry.name} is listed twice: keep one entry` });
      seen.add(entry.name);
    }
  });

function headerHow(header: string | undefined): unknown {
  const text = header ?? DEFAULT_HEADER;
  const colon = text.indexOf(':');
  if (colon <= 0) return { kind: 'header', header: text, template: '' };
  return { kind: 'header', header: text.slice(0, colon).trim(), template: text.slice(colon + 1).trim() };
}

function issueWords(path: readonly PropertyKey[], message: string): string {
  if (path[0] === 'domains') return 'is not a list of domain names like api.example.com (no IP addresses, no ports)';
  if (path[0] === 'how')
    return 'must be "Header-Name: template" with {value} in the template, like "Authorization: Bearer {value}" (or basicAuthUser without ":")';
  return message;
}

/** The entry in words: `GITHUB_TOKEN → api.github.com (Authorization header)`, or `DB_PASSWORD (its value enters the sandbox)`. */
export function describeSecret(entry: SecretEntry): string {
  return entry.inside ? insideWords(entry.name) : describeBinding(entry.binding);
}

const insideWords = (name: string) => `${name} (its value enters the sandbox)`;

/** The names of the offered secrets a session has: its bound ones, and the inside ones its spec marks. */
export function secretNamesOf(spec: SandboxSpec, entries: readonly SecretEntry[]): string[] {
  const bound = (spec.boundSecrets ?? []).map((secret) => secret.name);
  const inside = insideSecretNames(spec).filter((name) => entries.some((entry) => entry.inside && entry.name === name));
  return [...bound, ...inside];
}

/**
 * The names of a session's inside secrets, whoever opened it: the secrets offered by name whose values
 * it was given (its spec records them; the host's prefixed variables, which every sandbox gets, are not among them).
 */
export function insideSecretNames(spec: SandboxSpec): string[] {
  const bound = new Set((spec.boundSecrets ?? []).map((secret) => secret.name));
  return (spec.insideSecrets ?? []).filter((name) => !bound.has(name));
}

/** A session's secrets in words, as describeSecret gives them, from its spec (as it was opened, by any client). */
export function describeSessionSecrets(spec: SandboxSpec): string[] {
  return [...(spec.boundSecrets ?? []).map(describeBinding), ...insideSecretNames(spec).map(insideWords)];
}

/**
 * Why a caller whose policy is its flags (the CLI's tool and mcp) may not use a session: a secret it
 * holds that these flags do not offer, the same way (a bound one to the same domains and header).
 */
export function unofferedSecret(spec: SandboxSpec, offered: readonly SecretEntry[]): string | undefined {
  for (const secret of spec.boundSecrets ?? []) {
    const entry = offered.find((candidate) => candidate.name === secret.name);
    const same =
      entry &&
      !entry.inside &&
      JSON.stringify([...entry.binding.domains].sort()) === JSON.stringify([...secret.domains].sort()) &&
      JSON.stringify(entry.binding.how) === JSON.stringify(secret.how);
    if (!same) return describeBinding(secret);
  }
  for (const name of insideSecretNames(spec))
    if (!offered.some((entry) => entry.inside && entry.name === name)) return insideWords(name);
  return undefined;
}

/** The domains of the bound secrets offered: a sandbox that asked for one reaches them (sessionPolicy's withBoundDomains). */
export function offeredDomains(entries: readonly SecretEntry[]): string[] {
  return [...new Set(entries.flatMap((entry) => (entry.inside ? [] : entry.binding.domains)))];
}

/** Where a user adds a secret, for the errors: VS Code's command, or the CLI's flags. */
export interface SecretWords {
  /** How to offer a secret that is not configured: "run Sandbox: Add Secret". */
  readonly add: string;
  /** How to give a configured secret its value. */
  readonly setValue: (name: string) => string;
}

/** The entries a request names, in its order; an unknown or repeated name is the request's error, naming what is offered. */
export function pickSecrets(
  names: readonly string[],
  entries: readonly SecretEntry[],
  words: SecretWords,
): SecretEntry[] {
  const picked: SecretEntry[] = [];
  for (const name of names) {
    const entry = entries.find((candidate) => candidate.name === name);
    if (!entry) {
      const offered = entries.length
        ? `The secrets offered are ${entries.map((candidate) => candidate.name).join(', ')}.`
        : 'No secret is offered to sandboxes yet.';
      throw new SandboxError(
        'invalid-input',
        `There is no secret named "${name}". ${offered}`,
        `Ask for one of those, or for none; to offer another, ${words.add}.`,
      );
    }
    if (!picked.includes(entry)) picked.push(entry);
  }
  return picked;
}

/** What a session that asked for these secrets gets; the values only reach the engine, never the spec of a bound one. */
export interface ResolvedSecrets {
  bound: BoundSecret[];
  /** By name, for the egress proxy alone. */
  boundValues: Record<string, string>;
  /** By name: these enter the sandbox. */
  inside: Record<string, string>;
}

export const NO_SECRETS: ResolvedSecrets = { bound: [], boundValues: {}, inside: {} };

/** The values of the picked secrets, with a fresh placeholder for each bound one; a missing value says where to set it. */
export async function resolveSecrets(
  picked: readonly SecretEntry[],
  value: (name: string) => Promise<string | undefined>,
  words: SecretWords,
): Promise<ResolvedSecrets> {
  if (!picked.length) return NO_SECRETS;
  const resolved: ResolvedSecrets = { bound: [], boundValues: {}, inside: {} };
  for (const entry of picked) {
    const secret = await value(entry.name);
    if (!secret)
      throw new SandboxError(
        'secret-unavailable',
        `The secret ${entry.name} has no value, so no sandbox was opened with it.`,
        words.setValue(entry.name),
      );
    if (entry.inside) {
      resolved.inside[entry.name] = secret;
      continue;
    }
    // A header carries no line break or control character (and nothing past U+00FF): such a value
    // could never be sent, and is refused here rather than failing each request.
    if (/[\u0000-\u0008\u000a-\u001f\u007f]|[^\u0000-\u00ff]/.test(secret))
      throw new SandboxError(
        'secret-unavailable',
        `The value of ${entry.name} holds a line break or another character a request header cannot carry, so no sandbox was opened with it.`,
        `${words.setValue(entry.name)} Give the value alone, without a trailing newline.`,
      );
    resolved.boundValues[entry.name] = secret;
    resolved.bound.push({ ...entry.binding, placeholder: newPlaceholder() });
  }
  return resolved;
}

/** The spec layers of resolved secrets: inside values in the environment, bound placeholders and CA variables, the bindings. */
export function secretSpecLayers(resolved: ResolvedSecrets): SpecLayer[] {
  if (!resolved.bound.length && !Object.keys(resolved.inside).length) return [];
  // The bound domains are on the allowlist already (sessionPolicy's withBoundDomains).
  const { networkAllow: _domains, ...bound } = boundSecretsLayer(resolved.bound);
  const inside = Object.keys(resolved.inside);
  return [{ ...secretsLayer(resolved.inside), ...(inside.length ? { insideSecrets: inside } : {}) }, bound];
}

/** The names and values to redact for these secrets: each value, and each bound secret's placeholder, under its name. */
export function redactionPairs(resolved: ResolvedSecrets): [string, string][] {
  return [
    ...Object.entries(resolved.inside),
    ...Object.entries(resolved.boundValues),
    ...resolved.bound.map((secret) => [secret.name, secret.placeholder] as [string, string]),
  ];
}
