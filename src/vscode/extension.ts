/**
 * The composition root: builds the services and registers contributions. Activation makes no engine
 * call, so it stays instant; the engine is reached on first use.
 */
import * as vscode from 'vscode';

export interface AgentSandboxApi {
  readonly log: vscode.LogOutputChannel;
}

export function activate(context: vscode.ExtensionContext): AgentSandboxApi {
  const log = vscode.window.createOutputChannel('Agent Sandbox', { log: true });
  context.subscriptions.push(
    log,
    vscode.commands.registerCommand('agentSandbox.showLog', () => log.show(true)),
  );
  log.info(`Agent Sandbox ${context.extension.packageJSON.version as string} activated (${vscode.env.appName} ${vscode.version}, extension host ${process.version}).`);
  return { log };
}

export function deactivate(): void {
  // Disposables registered on the context are released by VS Code.
}
