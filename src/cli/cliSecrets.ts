/** A command's secrets, from its environment and secrets file: no settings (their schema is large) and no sessions. */
import { KnownSecrets } from '../core/secrets/knownSecrets';
import { SECRET_ENV_PREFIXES, collectSecrets } from '../core/secrets/secrets';
import { cliSecretValue } from './secretFlags';

/**
 * The prefixes of the host variables that are secrets: AGENT_SANDBOX_ENV_PREFIXES (comma-separated;
 * VS Code passes its setting agentSandbox.envPrefixes so to the MCP server it starts), else the
 * setting's default.
 */
export function cliEnvPrefixes(env: NodeJS.ProcessEnv = process.env): string[] {
  const prefixes = (env.AGENT_SANDBOX_ENV_PREFIXES ?? '').split(',').filter(Boolean);
  return prefixes.length ? prefixes : [...SECRET_ENV_PREFIXES];
}

/** The command's secrets: injected into what it opens and runs, redacted from what it prints and logs. */
export function cliSecrets(env: NodeJS.ProcessEnv = process.env, file: Record<string, string> = {}): KnownSecrets {
  const secrets = new KnownSecrets(() => collectSecrets(env, cliEnvPrefixes(env)), cliSecretValue(env, file));
  // What the secrets file holds is redacted whether or not a sandbox asks for it.
  secrets.add(Object.entries(file));
  return secrets;
}
