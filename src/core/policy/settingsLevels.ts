/**
 * Settings come from several levels: the user's (and the machine's) settings, which only the user
 * writes, and the workspace's (`.vscode/settings.json`, a folder's settings), which any program that
 * can write the folder can change, including a sandbox with read-write access. So policy settings
 * are taken from the user level, and a workspace level may only tighten them: less workspace
 * access, no network, lower limits. Settings that pick what runs or where (engine, engine host,
 * images, host variables passed in, lifted protections) are never read from a workspace.
 */
import { WORKSPACE_ACCESS, type WorkspaceAccess } from '../spec/spec';

/** One setting's values at each level, as VS Code's `inspect` reports them. */
export interface SettingLevels<T = unknown> {
  /** User or machine settings (and a remote's machine settings). */
  user?: T;
  /** Workspace settings and folder settings, the folder's last (it is the most specific). */
  workspace?: readonly (T | undefined)[];
}

/**
 * Settings only the user may set; a value in workspace settings is ignored (and reported). VS Code's
 * settings editor offers them in user settings only (`scope: machine`, from scripts/generateSettingsManifest.ts).
 */
export const USER_ONLY_SETTINGS = [
  'engine',
  'engineHost',
  'images',
  'envPrefixes',
  // Which secrets sandboxes may ask for, and where each may be sent, are the user's alone.
  'secrets',
  'configWritesAllowedIn',
  'workspaceAccessByFolder',
  // Offering the tools to other clients over MCP is the user's choice, not a folder's.
  'mcp.enabled',
  // Showing the secrets' values is for the user who asks, never a folder's setting.
  'terminal.showSecrets',
  // What the network allowlist reaches, and where names lead, are the user's to say.
  'network.allow',
  'network.hosts',
] as const;

/**
 * Choices that loosen the policy when raised; a workspace may only lower them (tightenOrdered). With the user-only settings they are restricted in untrusted workspaces. Not
 * `confirmation`: a workspace may only ask for more confirmations, which an untrusted one may too.
 */
export const TIGHTEN_ONLY_CHOICES = ['workspaceAccess', 'network.mode'] as const;

/**
 * Settings about the machine's own resources: set per machine (a remote's settings), yet a workspace may
 * change them, since they loosen nothing.
 */
export const MACHINE_SETTINGS = ['pool.size'] as const;

/** Numeric settings that a workspace may lower but never raise. */
export const TIGHTEN_ONLY_NUMBERS = [
  'timeoutSeconds',
  'limits.memory',
  'limits.cpus',
  'limits.pids',
  'limits.maxStdoutBytes',
  'limits.maxStderrBytes',
  'limits.maxFileSizeBytes',
  'limits.maxFiles',
  'limits.maxProcessFileBytes',
  'limits.disk',
  'limits.inodes',
] as const;

export interface MergedSetting<T> {
  value: T | undefined;
  /** Set when a workspace value was ignored because it would have loosened the policy. */
  ignored?: string;
}

/** Whether a workspace value is present at all. */
function workspaceValues<T>(levels: SettingLevels<T>): T[] {
  return (levels.workspace ?? []).filter((value): value is T => value !== undefined && value !== null);
}

/** A user-only setting: the user's value; any workspace value is ignored. */
export function userOnly<T>(key: string, levels: SettingLevels<T>): MergedSetting<T> {
  const ignored = workspaceValues(levels).length
    ? `${key} is set in workspace settings, which may not choose it; only your user settings count.`
    : undefined;
  return { value: levels.user, ...(ignored ? { ignored } : {}) };
}

/** Workspace access: the smallest of the user's (or its default) and every workspace value. */
export function tightenAccess(levels: SettingLevels<string>, fallback: WorkspaceAccess): MergedSetting<string> {
  return tightenOrdered('workspaceAccess', WORKSPACE_ACCESS, levels, fallback);
}

/**
 * A choice among values ordered from the tightest to the loosest (workspace access, the network's
 * mode): the tightest of the user's (or the default) and every workspace value.
 */
export function tightenOrdered(
  key: string,
  order: readonly string[],
  levels: SettingLevels<string>,
  fallback: string,
): MergedSetting<string> {
  const rank = (value: string) => order.indexOf(value);
  let value = levels.user ?? fallback;
  let ignored: string | undefined;
  for (const candidate of workspaceValues(levels)) {
    // An unknown value is left for validation to report, never used to loosen.
    if (rank(candidate) < 0) return { value: candidate };
    if (rank(candidate) <= rank(value)) value = candidate;
    else
      ignored = `${key} "${candidate}" in workspace settings is more than your user settings allow ("${value}"); it was ignored.`;
  }
  return { value, ...(ignored ? { ignored } : {}) };
}

/** Which tool calls ask first: a workspace may ask for more confirmations ("always"), never fewer. */
export function tightenConfirmation(levels: SettingLevels<string>): MergedSetting<string> {
  const user = levels.user ?? 'reach';
  const wanted = workspaceValues(levels);
  if (wanted.includes('always') || user === 'always') {
    const ignored = user === 'always' && wanted.some((value) => value !== 'always');
    return {
      value: 'always',
      ...(ignored
        ? {
            ignored:
              'confirmation in workspace settings asks for fewer confirmations than your user settings; it was ignored.',
          }
        : {}),
    };
  }
  return { value: wanted.find((value) => value !== 'reach') ?? user };
}

/**
 * A limit: the smallest of the user's value (or the default) and every workspace value. `measure`
 * turns a value into a number (sizes like "512m" into bytes); a value it cannot measure is passed on
 * for validation to report.
 */
export function tightenNumber(
  key: string,
  levels: SettingLevels<unknown>,
  fallback: unknown,
  measure: (value: unknown) => number | undefined,
): MergedSetting<unknown> {
  let value: unknown = levels.user ?? fallback;
  let ignored: string | undefined;
  for (const candidate of workspaceValues(levels)) {
    const wanted = measure(candidate);
    if (wanted === undefined) return { value: candidate };
    const current = measure(value);
    if (current === undefined || wanted <= current) value = candidate;
    else ignored = `${key} in workspace settings is higher than your user settings allow; the lower value applies.`;
  }
  return { value, ...(ignored ? { ignored } : {}) };
}
