/**
 * The command line's sessions go through the same SandboxService as the extension's (one session
 * path, scope checked once): this builds it for one command, with the policy the flags allow.
 */
import type { SandboxEngine } from '../core/engine/engine';
import type { KnownSecrets } from '../core/secrets/knownSecrets';
import { SandboxService } from '../core/sessions/sandboxService';
import type { SandboxServiceContext } from '../core/sessions/serviceTypes';
import type { Settings } from '../core/spec/settings';
import { CLI_WORDS } from './cliSessionWords';
import { CLI_SECRET_WORDS } from './secretFlags';
export { cliEnvPrefixes, cliSecrets, cliSettings } from './cliSettings';

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
