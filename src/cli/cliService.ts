/**
 * The command line's sessions go through the same SandboxService as the extension's (one session
 * path, scope checked once): this builds it for one command, with the policy the flags allow.
 */
import type { SandboxEngine } from '../core/engine/engine';
import { SandboxService, type SandboxServiceContext } from '../core/sessions/sandboxService';
import { parseSettings, type Settings } from '../core/spec/settings';
import { hostMappings, type ParsedArgs } from './args';
import { CLI_WORDS } from './cliSessionWords';

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
    ...more,
  });
}

/**
 * The sessions of `folder` for one command. Its own commands (open, exec, ls, close) speak the
 * command line's words and never close a session to make room: their user closes their own.
 */
export function cliSandboxService(
  engine: SandboxEngine,
  folder: string,
  settings: Settings,
  more: Partial<SandboxServiceContext> = {},
): SandboxService {
  return new SandboxService({
    engine: () => engine,
    settings: () => settings,
    workspaceFolder: () => folder,
    trusted: () => true,
    client: 'cli',
    words: CLI_WORDS,
    makesRoom: false,
    ...more,
  });
}
