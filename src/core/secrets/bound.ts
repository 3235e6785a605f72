/**
 * Bound secrets: a secret whose value never enters the sandbox. The sandbox holds a placeholder
 * unique to the session; the egress proxy (core/network/egressProxy.ts) puts the value in place of
 * the placeholder only in the bound header of HTTPS requests to the domains the secret is bound to.
 * The binding (name, domains, how, placeholder) may be stored with the session; the value never is:
 * it goes from the host (an environment variable for the CLI) to the proxy process alone.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ENV_NAME } from './secrets';

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const DOMAIN = new RegExp(`^(?:${LABEL}\\.)*${LABEL}$`);
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

/** The shape of a binding, as every error about one shows it. */
export const BOUND_SECRET_SHAPE =
  'NAME=DOMAIN[,DOMAIN...]:HOW, where HOW is header:NAME: TEMPLATE with {value} in it (header:Authorization: Bearer {value}, header:x-api-key: {value}) or basic:USER';

/** How the value is sent: in a header (the template says where), or as basic auth's password. */
export const boundHowSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('header'),
    header: z.string().regex(HEADER_NAME).max(100),
    template: z
      .string()
      .max(500)
      .refine((text) => text.includes('{value}'), 'the template must hold {value}'),
  }),
  z.object({
    kind: z.literal('basic'),
    user: z
      .string()
      .min(1)
      .max(200)
      .refine((user) => !user.includes(':')),
  }),
]);
export type BoundHow = z.output<typeof boundHowSchema>;

/** A binding without its placeholder: what the user gives. */
export const boundBindingSchema = z.object({
  name: z.string().regex(ENV_NAME).max(256),
  domains: z
    .array(
      z
        .string()
        .trim()
        .toLowerCase()
        .refine((domain) => DOMAIN.test(domain) && domain.length <= 253 && !/^[0-9.]+$/.test(domain)),
    )
    .min(1)
    .max(20),
  how: boundHowSchema,
});
export type BoundBinding = z.output<typeof boundBindingSchema>;

export const PLACEHOLDER_PREFIX = 'agent-sandbox-placeholder-';

/** A binding of one session: with the placeholder the sandbox holds in place of the value. */
export const boundSecretSchema = boundBindingSchema.extend({
  placeholder: z.string().regex(new RegExp(`^${PLACEHOLDER_PREFIX}[0-9a-f]{32}$`)),
});
export type BoundSecret = z.output<typeof boundSecretSchema>;

/** A placeholder unique to one session and secret (128 random bits). */
export function newPlaceholder(): string {
  return `${PLACEHOLDER_PREFIX}${randomBytes(16).toString('hex')}`;
}

export class BoundSecretError extends Error {
  readonly reason = 'invalid-bound-secret';
  static is(error: unknown): error is BoundSecretError {
    return error instanceof BoundSecretError;
  }
}

/** `NAME=DOMAIN[,DOMAIN...]:HOW` (the CLI's --secret) as a binding; a BoundSecretError that shows the shape otherwise. */
export function parseBinding(text: string): BoundBinding {
  const eq = text.indexOf('=');
  const colon = text.indexOf(':', eq + 1);
  const bad = (why: string) =>
    new BoundSecretError(`"${text}" is not a bound secret (${why}): write ${BOUND_SECRET_SHAPE}.`);
  if (eq <= 0 || colon < 0) throw bad('it lacks NAME= or :HOW');
  const how = parseHow(text.slice(colon + 1));
  if (!how) throw bad('HOW is neither header:NAME: TEMPLATE nor basic:USER');
  const parsed = boundBindingSchema.safeParse({
    name: text.slice(0, eq),
    domains: text.slice(eq + 1, colon).split(','),
    how,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw bad(`${issue.path.join('.') || 'binding'}: ${issue.message}`);
  }
  return parsed.data;
}

function parseHow(text: string): unknown {
  if (text.startsWith('basic:')) return { kind: 'basic', user: text.slice('basic:'.length) };
  if (!text.startsWith('header:')) return undefined;
  const rest = text.slice('header:'.length);
  const colon = rest.indexOf(':');
  if (colon <= 0) return undefined;
  return { kind: 'header', header: rest.slice(0, colon).trim(), template: rest.slice(colon + 1).trim() };
}

/** The binding as the user reads it: `TOKEN → api.example.com (Authorization header)`. */
export function describeBinding(secret: BoundBinding): string {
  const how = secret.how.kind === 'header' ? `${secret.how.header} header` : `basic auth as ${secret.how.user}`;
  return `${secret.name} → ${secret.domains.join(', ')} (${how})`;
}

/** Where the sandbox finds the session's CA with the image's own authorities (written when the sandbox opens). */
export const SESSION_CA_BUNDLE = '/tmp/agent-sandbox-ca.pem';

/** The variables that make common clients trust the session's CA (its bundle holds the system's authorities too). */
export function caBundleEnv(path: string = SESSION_CA_BUNDLE): Record<string, string> {
  return {
    SSL_CERT_FILE: path,
    REQUESTS_CA_BUNDLE: path,
    NODE_EXTRA_CA_CERTS: path,
    CURL_CA_BUNDLE: path,
    PIP_CERT: path,
    NPM_CONFIG_CAFILE: path,
  };
}

/**
 * The bound secrets' spec layer: the placeholders as the variables (marked as secrets, so they show
 * as `[secret:NAME]`), the CA variables, the domains on the allowlist (a bound secret implies
 * reaching its domains) and the bindings.
 */
export function boundSecretsLayer(secrets: readonly BoundSecret[]): {
  env: Record<string, string>;
  secretEnv: string[];
  networkAllow: string[];
  boundSecrets: BoundSecret[];
} {
  if (!secrets.length) return { env: {}, secretEnv: [], networkAllow: [], boundSecrets: [] };
  return {
    env: { ...Object.fromEntries(secrets.map((secret) => [secret.name, secret.placeholder])), ...caBundleEnv() },
    secretEnv: secrets.map((secret) => secret.name),
    networkAllow: [...new Set(secrets.flatMap((secret) => secret.domains))],
    boundSecrets: [...secrets],
  };
}

/** The bindings with placeholders, and their values from the host environment; refuses an unset variable. */
export function boundFromHost(
  bindings: readonly BoundBinding[],
  env: NodeJS.ProcessEnv,
): { secrets: BoundSecret[]; values: Record<string, string> } {
  const secrets: BoundSecret[] = [];
  const values: Record<string, string> = {};
  for (const binding of bindings) {
    const value = env[binding.name];
    if (!value)
      throw new BoundSecretError(
        `The bound secret ${binding.name} has no value: the host environment variable ${binding.name} is unset or empty.`,
      );
    if (Object.hasOwn(values, binding.name))
      throw new BoundSecretError(`The secret ${binding.name} is bound twice: give it once, with all its domains.`);
    values[binding.name] = value;
    secrets.push({ ...binding, placeholder: newPlaceholder() });
  }
  return { secrets, values };
}
