/**
 * The command line's sessions go through the same SandboxService as the extension's (one session
 * path, scope checked once): this builds it for one command, with the policy the flags allow.
 */
import type { SandboxEngine } from '../core/engine/engine';
import { KnownSecrets } from '../core/secrets/knownSecrets';
import { SECRET_ENV_PREFIXES, collectSecrets } from '../core/secrets/secrets';
import { SandboxService, type SandboxServiceContext } from '../core/sessions/sandboxService';
import { parseSettings, type Settings } from '../core/spec/settings';
import { hostMappings, type ParsedArgs } from './args';
import { CLI_WORDS } from './cliSessionWords';
import { CLI_SECRET_WORDS, cliSecretValue, offeredSecrets } from './secretFlags';

/**
 * The settings a command's flags amount to: the most workspace access (--workspace, default none)
 * and network (--network, or --allow-domain for an allowlist) a sandbox gets, the images (--image), and whether an rw sandbox may change
 * .git, .vscode, ... (--allow-config-writes). `more` adds settings of its own (limits, say).
 */
export function cliSettings(values: ParsedArgs['values'], folder: string, more: object = {}): Settings {
  return parseSettings({
    workspaceAccess: values.workspace ?? 'none',
    network: {
      mode: values.network ? 'full' : values['allow-domain']?.length ? 'allowlist' : 'off',
      allow: values['allow-domain'] ?? [],
      hosts: values['map-host'] ? hostMappings(values['map-host']) : {},
    },
    configWritesAllowedIn: values['allow-config-writes'] ? [folder] : [],
    images: values.image ? { [values.runtime ?? 'python']: values.image } : {},
    envPrefixes: cliEnvPrefixes(),
    secrets: offeredSecrets(values),
    ...more,
  });
}

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

/**
 * The sessions of `folder` for one command. Its own commands (open, exec, ls, close) speak the
 * command line's words and never close a session to make room: their user closes their own. Every
 * command injects and redacts the same secrets (`more.secrets`), as the tools and VS Code do.
 */
export function cliSandboxService(
  engine: SandboxEngine,
  folder: string,
  settings: Settings,
  more: Partial<SandboxServiceContext> & { secrets: KnownSecrets },
): SandboxService {
  return new SandboxService({
    engine: () => engine,
    settings: () => settings,
    workspaceFolder: () => folder,
    trusted: () => true,
    client: 'cli',
    words: CLI_WORDS,
    secretWords: CLI_SECRET_WORDS,
    makesRoom: false,
    ...more,
  });
}
