/** `agentSandbox.*` settings, read into the core's validated settings shape. */
import * as vscode from 'vscode';
import { parseSettings, type Settings } from '../core/settings';

export const SECTION = 'agentSandbox';

/** Reads the settings; throws an invalid-input error naming the bad setting. */
export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const images = Object.fromEntries(Object.entries(config.get<Record<string, string>>('images') ?? {}).filter(([, image]) => typeof image === 'string' && image.trim() !== ''));
  const limits = config.get<Record<string, unknown>>('limits') ?? {};
  return parseSettings({
    engine: config.get('engine'),
    engineHost: config.get<string>('engineHost') || undefined,
    images,
    defaultRuntime: config.get('defaultRuntime'),
    workspaceAccess: config.get('workspaceAccess'),
    network: config.get('network'),
    timeoutSeconds: config.get('timeoutSeconds'),
    limits: Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== null && value !== '')),
    sessions: config.get('sessions'),
    envPrefixes: config.get('envPrefixes'),
    pool: config.get('pool'),
  });
}
