/**
 * `agentSandbox.*` settings, read into the core's validated settings shape. Policy settings come
 * from the user's settings; workspace settings (which a sandbox with read-write access could write)
 * may only tighten them (see core/policy/settingsLevels.ts).
 */
import * as vscode from 'vscode';
import {
  TIGHTEN_ONLY_NUMBERS,
  USER_ONLY_SETTINGS,
  tightenAccess,
  tightenNumber,
  tightenSwitch,
  userOnly,
  type MergedSetting,
  type SettingLevels,
} from '../core/policy/settingsLevels';
import { parseSettings, type Settings } from '../core/settings';
import type { WorkspaceAccess } from '../core/spec';
import { parseSize } from '../core/units';

export const SECTION = 'agentSandbox';

/** Reads the settings; throws an invalid-input error naming the bad setting. */
export function readSettings(options: SettingsReadOptions = {}): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const ignored: string[] = [];
  const take = <T>(merged: MergedSetting<T>): T | undefined => {
    if (merged.ignored) ignored.push(merged.ignored);
    return merged.value;
  };
  const value = (key: string) => {
    if ((USER_ONLY_SETTINGS as readonly string[]).includes(key)) return take(userOnly(key, levelsOf(config, key)));
    if ((TIGHTEN_ONLY_NUMBERS as readonly string[]).includes(key))
      return take(tightenNumber(key, levelsOf(config, key), config.inspect(key)?.defaultValue, measure));
    return config.get(key);
  };

  const images = Object.fromEntries(
    ['python', 'node', 'bash', 'linux']
      .map((runtime) => [runtime, take(userOnly(`images.${runtime}`, levelsOf<string>(config, `images.${runtime}`)))])
      .filter(([, image]) => typeof image === 'string' && image.trim() !== ''),
  );
  const limits = Object.fromEntries(
    TIGHTEN_ONLY_NUMBERS.filter((key) => key.startsWith('limits.'))
      .map((key) => [key.slice('limits.'.length), value(key)])
      .filter(([, limit]) => limit !== undefined && limit !== null && limit !== ''),
  );
  // The user's grant for this workspace (Set Workspace Access, confirmed in a dialog) counts as a user-level value.
  const accessLevels = levelsOf<string>(config, 'workspaceAccess');
  const access = take(tightenAccess({ ...accessLevels, user: options.accessGrant ?? accessLevels.user }, 'none'));
  const settings = parseSettings({
    engine: value('engine'),
    engineHost: (value('engineHost') as string | undefined) || undefined,
    images,
    defaultRuntime: config.get('defaultRuntime'),
    workspaceAccess: access,
    network: take(tightenSwitch('network', levelsOf(config, 'network'), false)),
    timeoutSeconds: value('timeoutSeconds'),
    limits,
    sessions: config.get('sessions'),
    envPrefixes: value('envPrefixes'),
    configWritesAllowedIn: value('configWritesAllowedIn'),
    pool: config.get('pool'),
  });
  for (const message of ignored) options.onIgnored?.(message);
  return settings;
}

export interface SettingsReadOptions {
  /** Workspace access the user granted this workspace with Set Workspace Access (kept in the workspace's extension state, outside the folder). */
  accessGrant?: WorkspaceAccess;
  /** Told about each workspace value that was ignored because it would have loosened the policy. */
  onIgnored?(message: string): void;
}

function levelsOf<T = unknown>(config: vscode.WorkspaceConfiguration, key: string): SettingLevels<T> {
  const inspected = config.inspect<T>(key);
  return { user: inspected?.globalValue, workspace: [inspected?.workspaceValue, inspected?.workspaceFolderValue] };
}

function measure(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string') return parseSize(value);
  return undefined;
}
