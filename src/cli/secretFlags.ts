/**
 * The secrets a command offers to sandboxes (core/secrets/catalog.ts), from its flags:
 * - `--secret NAME=DOMAIN[,DOMAIN...]:HOW`: a bound secret; the sandbox holds a placeholder and the
 *   egress proxy adds the value to requests to the domains, which join the allowlist;
 * - `--inside-secret NAME`: the value itself enters the sandbox (a database password, say).
 * Values come from `--secrets-file PATH` (NAME=VALUE lines, readable by the user alone), else from
 * the host variable NAME. `open` and `run` give their sandbox every secret they offer; `tool` and
 * `mcp` offer them to the model, which asks for them by name (sandbox_open's and sandbox_run's `secrets`).
 */
import { closeSync, fstatSync, openSync, readFileSync, constants } from 'node:fs';
import { BoundSecretError, parseBinding } from '../core/secrets/bound';
import type { SecretSetting, SecretWords } from '../core/secrets/catalog';
import { ENV_NAME } from '../core/secrets/secrets';
import type { Sandbox } from '../core/engine/engine';
import { usageError, type ParsedArgs } from './args';

export const CLI_SECRET_WORDS: SecretWords = {
  add: 'the user adds --secret NAME=DOMAIN:HOW (or --inside-secret NAME) to the command',
  setValue: (name) =>
    `Set the host variable ${name}, or put a line ${name}=VALUE in the file given with --secrets-file.`,
};

/** The secrets the flags offer, as settings entries (agentSandbox.secrets has the same shape). */
export function offeredSecrets(values: ParsedArgs['values']): SecretSetting[] {
  const bound = values.secret ?? [];
  const inside = values['inside-secret'] ?? [];
  if (!bound.length && !inside.length) return [];
  if (bound.length && values.network)
    throw usageError(
      '--secret needs the allowlist, not --network: the proxy that adds the secret is the allowlist’s. Drop --network (the secret’s domains are allowed by themselves), or add --allow-domain for the other names.',
    );
  const entries: SecretSetting[] = [];
  for (const text of bound) {
    try {
      const { name, domains, how } = parseBinding(text);
      entries.push(
        how.kind === 'header'
          ? { name, domains, header: `${how.header}: ${how.template}` }
          : { name, domains, basicAuthUser: how.user },
      );
    } catch (error) {
      if (BoundSecretError.is(error)) throw usageError(error.message);
      throw error;
    }
  }
  for (const name of inside) {
    if (!ENV_NAME.test(name))
      throw usageError(`--inside-secret takes a variable name like DB_PASSWORD, not "${name}".`);
    entries.push({ name, inside: true });
  }
  const names = entries.map((entry) => entry.name);
  const twice = names.find((name, index) => names.indexOf(name) !== index);
  if (twice) throw usageError(`The secret ${twice} is given twice: give it once, with all its domains.`);
  return entries;
}

/** The names a command's own sandbox gets (open, run): every secret its flags offer. */
export function askedSecrets(values: ParsedArgs['values']): string[] | undefined {
  const names = offeredSecrets(values).map((entry) => entry.name);
  return names.length ? names : undefined;
}

/**
 * NAME=VALUE lines of a secrets file (blank lines and # comments skipped). The file must be the
 * user's and readable by no one else: a secret others can read is no longer the user's.
 */
export function readSecretsFile(path: string): Record<string, string> {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw usageError(
      code === 'ELOOP'
        ? `--secrets-file ${path} is a symbolic link: give the file itself.`
        : `Cannot read --secrets-file ${path}: ${(error as Error).message}`,
    );
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw usageError(`--secrets-file ${path} is not a regular file.`);
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid())
      throw usageError(`--secrets-file ${path} belongs to another user: use a file of your own.`);
    if (stat.mode & 0o077)
      throw usageError(
        `--secrets-file ${path} can be read or written by others (mode ${(stat.mode & 0o777).toString(8)}): run chmod 600 ${path}, then try again.`,
      );
    const values: Record<string, string> = {};
    const lines = readFileSync(fd, 'utf8').split(/\r?\n/);
    lines.forEach((line, index) => {
      if (!line.trim() || line.trimStart().startsWith('#')) return;
      const eq = line.indexOf('=');
      const name = eq > 0 ? line.slice(0, eq).trim() : '';
      if (!ENV_NAME.test(name))
        throw usageError(`--secrets-file ${path}, line ${index + 1}: write NAME=VALUE (the line is not shown here).`);
      values[name] = line.slice(eq + 1);
    });
    return values;
  } finally {
    closeSync(fd);
  }
}

/** The value of a secret: from the secrets file, else the host variable. */
export function cliSecretValue(env: NodeJS.ProcessEnv, file: Readonly<Record<string, string>>) {
  return (name: string): string | undefined => (Object.hasOwn(file, name) ? file[name] : env[name]) || undefined;
}

/** What `open` says about the secrets it gave, or could not give to a session open already. */
export function secretNotices(sandbox: Sandbox, created: boolean, asked: readonly string[] | undefined): string[] {
  if (!asked?.length) return [];
  if (!created)
    return [
      `The session was open already: its secrets are those it was opened with. Close it first to give it ${asked.join(', ')}.`,
    ];
  const bound = sandbox.info.spec.boundSecrets ?? [];
  return asked.map((name) => {
    const secret = bound.find((candidate) => candidate.name === name);
    if (!secret) return `Inside secret ${name}: its value is in the sandbox's environment.`;
    const how = secret.how.kind === 'header' ? `${secret.how.header} header` : 'basic auth password';
    return `Bound secret ${name}: the sandbox holds a placeholder; the proxy sends the value only in the ${how} of HTTPS requests to ${secret.domains.join(', ')}, which the allowlist now includes.`;
  });
}
