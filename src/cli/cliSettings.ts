/** A command's settings from its flags: no sessions here (cliService.ts has those). */
import { parseSettings, type Settings } from '../core/spec/settings';
import { hostMappings, type ParsedArgs } from './args';
import { cliEnvPrefixes } from './cliSecrets';
import { offeredSecrets } from './secretFlags';

export { cliEnvPrefixes, cliSecrets } from './cliSecrets';

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
