/**
 * The `.prompt` (Dotprompt) language: live diagnostics, completions, hovers, quick fixes, the agent's
 * code lens, and "Sandbox: Validate Prompt Files". The grammar and language configuration are in
 * syntaxes/ and package.json.
 */
import * as vscode from 'vscode';
import { registerAgentSession, type AgentSessionServices } from './agentSession';
import { PromptDiagnostics } from './promptDiagnostics';
import { registerPromptProviders } from './promptProviders';

export function registerPromptLanguage(services: AgentSessionServices): vscode.Disposable[] {
  const diagnostics = new PromptDiagnostics();
  return [
    diagnostics,
    ...registerPromptProviders(),
    ...registerAgentSession(services),
    vscode.commands.registerCommand('agentSandbox.validatePromptFiles', async () => {
      const summary = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: vscode.l10n.t('Validating prompt files') },
        (_, token) => diagnostics.validateWorkspace(token),
      );
      services.log.info(
        `Validated ${summary.files} prompt file(s): ${summary.errors} error(s), ${summary.warnings} warning(s).`,
      );
      if (summary.files === 0) {
        void vscode.window.showInformationMessage(vscode.l10n.t('No .prompt files in this workspace.'));
      } else {
        await vscode.commands.executeCommand('workbench.actions.view.problems');
        void vscode.window.showInformationMessage(
          vscode.l10n.t(
            'Validated {0} prompt file(s): {1} error(s), {2} warning(s).',
            summary.files,
            summary.errors,
            summary.warnings,
          ),
        );
      }
      return summary;
    }),
  ];
}
