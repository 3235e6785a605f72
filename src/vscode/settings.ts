/**
 * `agentSandbox.*` settings, read into the core's validated settings shape. Policy settings come
 * from the user's settings; workspace settings (which a sandbox with read-write access could write)
 * may only tighten them (see core/policy/settingsLevels.ts).
 */
import * as vscode from 'vscode';
import { mergeSettings, type MergeOptions } from '../core/policy/mergeSettings';
import type { SettingLevels } from '../core/policy/settingsLevels';
import type { Settings } from '../core/spec/settings';

export const SECTION = 'agentSandbox';

/** Reads the settings; throws an invalid-input error naming the bad setting. */
export function readSettings(options: SettingsReadOptions = {}): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  return mergeSettings(
    {
      levels: (key) => levelsOf(config, key),
      get: (key) => config.get(key),
      defaultValue: (key) => config.inspect(key)?.defaultValue,
    },
    options,
  );
}

export type SettingsReadOptions = MergeOptions;

function levelsOf<T = unknown>(config: vscode.WorkspaceConfiguration, key: string): SettingLevels<T> {
  const inspected = config.inspect<T>(key);
  return { user: inspected?.globalValue, workspace: [inspected?.workspaceValue, inspected?.workspaceFolderValue] };
}
