/**
 * Secrets the user hands to sandboxes through the host environment: only variables carrying one of
 * the prefixes cross over, with the prefix stripped, so nothing else of the host's environment leaks in.
 */

export const SECRET_ENV_PREFIXES = ['AGENT_SANDBOX_ENV_', 'STN_CODE_'] as const;

/** What a POSIX shell accepts as a variable name: the rule for env names and secret names alike. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * AGENT_SANDBOX_ENV_API_KEY=x becomes API_KEY=x. Names that end up empty or invalid are skipped, and
 * when two prefixes give the same name the earlier prefix in `prefixes` wins.
 */
export function collectSecrets(
  env: NodeJS.ProcessEnv,
  prefixes: readonly string[] = SECRET_ENV_PREFIXES,
): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const prefix of prefixes) {
    if (!prefix) continue;
    for (const [key, value] of Object.entries(env)) {
      if (value === undefined || !key.startsWith(prefix)) continue;
      const name = key.slice(prefix.length);
      if (!ENV_NAME.test(name) || Object.hasOwn(secrets, name)) continue;
      secrets[name] = value;
    }
  }
  return secrets;
}
