/**
 * Asks the user, once, whether to use the virtual engine when no container engine answers, and
 * remembers a definite answer in the extension's global state (for every window and workspace).
 */
import * as vscode from 'vscode';
import type { VirtualConsent } from '../core/engine/engineSelection';
import type { VirtualConsentPrompt } from './engineState';

export const CONSENT_KEY = 'agentSandbox.virtualEngineConsent';

export function virtualConsentPrompt(state: vscode.Memento, log: vscode.LogOutputChannel): VirtualConsentPrompt {
  return {
    get: () => {
      const value = state.get<string>(CONSENT_KEY);
      return value === 'granted' || value === 'declined' ? value : undefined;
    },
    ask: async (problem) => {
      const use = vscode.l10n.t('Use the Virtual Engine');
      const decline = vscode.l10n.t('No, Keep Waiting for Docker');
      const choice = await vscode.window.showWarningMessage(
        vscode.l10n.t(
          "Agent Sandbox: no container engine answers ({0}). Run sandboxes in the virtual engine instead? It runs bash and Python (WebAssembly) inside VS Code's extension host, with no daemon: a lighter isolation than a container, with no real processes, package installs or network. Your choice is remembered; change it with the setting agentSandbox.engine.",
          problem,
        ),
        use,
        decline,
      );
      const answer: VirtualConsent = choice === use ? 'granted' : choice === decline ? 'declined' : undefined;
      if (answer) {
        await state.update(CONSENT_KEY, answer);
        log.info(`Virtual engine when no container engine answers: ${answer}.`);
      }
      return answer;
    },
  };
}
