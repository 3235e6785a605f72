/**
 * The settings as Agent Sandbox applies them, from the values at each level: user (and machine)
 * settings, which only the user writes, and workspace and folder settings, which a sandbox with
 * read-write access could have written. Policy settings come from the user level and a workspace
 * level may only tighten them (settingsLevels.ts). VS Code's reader (src/vscode/settings.ts) gives
 * the levels from `inspect`; tests give them from files.
 */
import { NETWORK_MODES, parseSettings, type Settings } from '../spec/settings';
import type { WorkspaceAccess } from '../spec/spec';
import { parseSize } from '../spec/units';
import {
  TIGHTEN_ONLY_NUMBERS,
  USER_ONLY_SETTINGS,
  tightenAccess,
  tightenConfirmation,
  tightenNumber,
  tightenOrdered,
  userOnly,
  type MergedSetting,
  type SettingLevels,
} from './settingsLevels';

export interface SettingSource {
  /** A setting's values at each level (`key` without the `agentSandbox.` section). */
  levels<T = unknown>(key: string): SettingLevels<T>;
  /** The value that applies when policy does not matter (VS Code's own merge of the levels). */
  get(key: string): unknown;
  /** The product default of a setting. */
  defaultValue(key: string): unknown;
}

export interface MergeOptions {
  /** Workspace access the user granted this workspace with Set Workspace Access (a user-level value). */
  accessGrant?: WorkspaceAccess;
  /** Told about each workspace value that was ignored because it would have loosened the policy. */
  onIgnored?(message: string): void;
}

/** Reads the settings; throws an invalid-input error naming the bad setting. */
export function mergeSettings(source: SettingSource, options: MergeOptions = {}): Settings {
  const ignored: string[] = [];
  const take = <T>(merged: MergedSetting<T>): T | undefined => {
    if (merged.ignored) ignored.push(merged.ignored);
    return merged.value;
  };
  const value = (key: string) => {
    if ((USER_ONLY_SETTINGS as readonly string[]).includes(key)) return take(userOnly(key, source.levels(key)));
    if ((TIGHTEN_ONLY_NUMBERS as readonly string[]).includes(key))
      return take(tightenNumber(key, source.levels(key), source.defaultValue(key), measure));
    return source.get(key);
  };

  const images = Object.fromEntries(
    ['python', 'node', 'bash', 'linux']
      .map((runtime) => [runtime, take(userOnly(`images.${runtime}`, source.levels<string>(`images.${runtime}`)))])
      .filter(([, image]) => typeof image === 'string' && image.trim() !== ''),
  );
  const limits = Object.fromEntries(
    TIGHTEN_ONLY_NUMBERS.filter((key) => key.startsWith('limits.'))
      .map((key) => [key.slice('limits.'.length), value(key)])
      .filter(([, limit]) => limit !== undefined && limit !== null && limit !== ''),
  );
  // The user's grant for this workspace (confirmed in a dialog) counts as a user-level value.
  const accessLevels = source.levels<string>('workspaceAccess');
  const access = take(tightenAccess({ ...accessLevels, user: options.accessGrant ?? accessLevels.user }, 'none'));
  const settings = parseSettings({
    engine: value('engine'),
    engineHost: (value('engineHost') as string | undefined) || undefined,
    images,
    defaultRuntime: source.get('defaultRuntime'),
    workspaceAccess: access,
    workspaceAccessByFolder: value('workspaceAccessByFolder'),
    network: {
      mode: take(tightenOrdered('network.mode', NETWORK_MODES, source.levels<string>('network.mode'), 'off')),
      allow: value('network.allow'),
      hosts: value('network.hosts'),
    },
    confirmation: take(tightenConfirmation(source.levels<string>('confirmation'))),
    timeoutSeconds: value('timeoutSeconds'),
    limits,
    sessions: source.get('sessions'),
    envPrefixes: value('envPrefixes'),
    secrets: value('secrets'),
    configWritesAllowedIn: value('configWritesAllowedIn'),
    pool: source.get('pool'),
    mcp: { enabled: value('mcp.enabled') },
    terminal: { showSecrets: value('terminal.showSecrets') },
  });
  for (const message of ignored) options.onIgnored?.(message);
  return settings;
}

function measure(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string') return parseSize(value);
  return undefined;
}
