/**
 * Offers `agent-sandbox mcp` to VS Code's MCP support when the user turns it on
 * (agentSandbox.mcp.enabled): one server for the window's workspace folder, started with the policy
 * of the settings (settingsInvocation). Copilot has the tools without it, as language-model tools;
 * this serves chat modes and extensions that take tools from MCP servers. Its sessions are the
 * folder's, so the panel shows them like any other (tagged MCP).
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import { settingsInvocation } from '../core/spec/settingsFlags';
import type { Settings } from '../core/spec/settings';
import { SECTION } from './settings';

export const MCP_PROVIDER_ID = 'agentSandbox.mcpServer';

export interface McpServerDeps {
  readonly extensionPath: string;
  readonly version: string;
  settings(): Settings;
  /** The folder whose sessions the server serves; none without a folder. */
  workspaceFolder(): string | undefined;
}

/** The server definitions to offer now: none unless turned on, in a trusted window with a folder. */
export function mcpServerDefinitions(deps: McpServerDeps): vscode.McpStdioServerDefinition[] {
  let settings: Settings;
  try {
    settings = deps.settings();
  } catch {
    return []; // invalid settings are reported elsewhere; no server with a policy nobody can read
  }
  const folder = deps.workspaceFolder();
  if (!settings.mcp.enabled || !vscode.workspace.isTrusted || !folder) return [];
  const { args, env } = settingsInvocation(settings, folder);
  return [
    new vscode.McpStdioServerDefinition(
      vscode.l10n.t('Agent Sandbox'),
      // The extension host's own Node.js: Electron run as Node, or Node itself in a remote host.
      process.execPath,
      [join(deps.extensionPath, 'dist', 'cli.js'), 'mcp', ...args],
      { ...env, ELECTRON_RUN_AS_NODE: '1' },
      `${deps.version}:${args.join(' ')}`,
    ),
  ];
}

export function registerMcpServer(deps: McpServerDeps): vscode.Disposable[] {
  const changed = new vscode.EventEmitter<void>();
  const fire = () => changed.fire();
  return [
    changed,
    vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
      onDidChangeMcpServerDefinitions: changed.event,
      provideMcpServerDefinitions: () => mcpServerDefinitions(deps),
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SECTION)) fire();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(fire),
    vscode.workspace.onDidChangeWorkspaceFolders(fire),
  ];
}
