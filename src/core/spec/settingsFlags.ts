/**
 * The command line that gives a process the policy of these settings: what VS Code passes to the
 * `agent-sandbox mcp` it offers, so that the server allows what the user's settings allow and no
 * more. Images go in the environment (AGENT_SANDBOX_IMAGE_*), as the CLI reads them.
 */
import { RUNTIMES } from './spec';
import type { Settings } from './settings';

export interface ProcessInvocation {
  readonly args: string[];
  readonly env: Record<string, string>;
}

/** `--folder F --workspace X [--network | --allow-domain N...] [--map-host N=A...] [--allow-config-writes] --engine ... --timeout ... --memory ...`. */
export function settingsInvocation(settings: Settings, folder: string): ProcessInvocation {
  const args = ['--folder', folder, '--workspace', settings.workspaceAccess];
  if (settings.network.mode === 'full') args.push('--network');
  if (settings.network.mode === 'allowlist')
    for (const name of settings.network.allow) args.push('--allow-domain', name);
  if (settings.network.mode !== 'off')
    for (const [name, address] of Object.entries(settings.network.hosts)) args.push('--map-host', `${name}=${address}`);
  if (settings.configWritesAllowedIn.includes(folder)) args.push('--allow-config-writes');
  // "auto" may fall back to the virtual engine, a lighter isolation VS Code asks about first: the
  // server the user did not watch start gets Docker, or the virtual engine only when chosen outright.
  args.push('--engine', settings.engine === 'virtual' ? 'virtual' : 'docker');
  if (settings.engineHost) args.push('--engine-host', settings.engineHost);
  const { limits } = settings;
  args.push(
    '--timeout',
    String(settings.timeoutSeconds),
    '--memory',
    String(limits.memory),
    '--cpus',
    String(limits.cpus),
    '--pids',
    String(limits.pids),
    '--disk',
    String(limits.disk),
    '--inodes',
    String(limits.inodes),
  );
  // The same host variables are secrets there: the CLI reads the prefixes from here.
  const env: Record<string, string> = { AGENT_SANDBOX_ENV_PREFIXES: settings.envPrefixes.join(',') };
  for (const runtime of RUNTIMES) {
    const image = settings.images[runtime];
    if (image) env[`AGENT_SANDBOX_IMAGE_${runtime.toUpperCase()}`] = image;
  }
  return { args, env };
}
