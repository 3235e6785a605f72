/**
 * Our own dialog for a call that reaches further than the user granted for its sandbox (core's
 * approvals.ts decides when). A client's per-tool "allow" never covers such a call: the dialog
 * appears whatever Copilot remembered.
 */
import * as vscode from 'vscode';
import { reachSentence, type ReachKind, type TargetView } from '../../core/tools/reach';
import type { CallDescription } from '../../core/tools/toolSpec';
import { confirmationPlainText, text } from './callText';

export type WideningAnswer = 'sandbox' | 'once' | 'declined';

export async function askToWiden(
  description: CallDescription,
  widening: readonly ReachKind[],
  target: TargetView,
  folder: string | undefined,
): Promise<WideningAnswer> {
  const forSandbox = vscode.l10n.t('Allow for This Sandbox');
  const once = vscode.l10n.t('Allow Once');
  const who =
    target.sandboxId === 'run' ? vscode.l10n.t('A one-off sandbox') : vscode.l10n.t('Sandbox "{0}"', target.sandboxId);
  const message = vscode.l10n.t(
    '{0} would {1}. Allow it? ({2})',
    who,
    vscode.l10n.t(reachSentence(widening)),
    text(description.title).replace(/\?$/, ''),
  );
  const detail = [
    confirmationPlainText(description),
    folder ? vscode.l10n.t('Workspace folder: {0}', folder) : '',
    vscode.l10n.t(
      'This is more than you have allowed for this sandbox so far, so Agent Sandbox asks even when the chat was told to allow this tool. "Allow for This Sandbox" lasts until the sandbox closes.',
    ),
  ]
    .filter(Boolean)
    .join('\n\n');
  const choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, forSandbox, once);
  return choice === forSandbox ? 'sandbox' : choice === once ? 'once' : 'declined';
}
