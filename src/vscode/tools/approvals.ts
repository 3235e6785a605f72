/**
 * Our own dialog for a call that reaches further than the user granted for its sandbox (core's
 * approvals.ts decides when). A client's per-tool "allow" never covers such a call: the dialog
 * appears whatever Copilot remembered.
 */
import * as vscode from 'vscode';
import { RUN_TARGET, reachSentence, type ReachKind, type TargetView } from '../../core/tools/reach';
import type { CallDescription } from '../../core/tools/toolSpec';
import { confirmationPlainText, text } from './callText';

export type WideningAnswer = 'sandbox' | 'once' | 'declined';

export async function askToWiden(
  description: CallDescription,
  widening: readonly ReachKind[],
  target: TargetView,
  folder: string | undefined,
  /** wider: more than the user granted for the sandbox; unconfirmed: within it, but VS Code did not ask. */
  why: 'wider' | 'unconfirmed' = 'wider',
): Promise<WideningAnswer> {
  // One-off sandboxes close at the end of their call: what is allowed for them holds for every later one, in this window.
  const oneOff = target.sandboxId === RUN_TARGET;
  const forSandbox = oneOff
    ? vscode.l10n.t('Allow for All One-Off Sandboxes')
    : vscode.l10n.t('Allow for This Sandbox');
  const once = vscode.l10n.t('Allow Once');
  const who = oneOff ? vscode.l10n.t('A one-off sandbox') : vscode.l10n.t('Sandbox "{0}"', target.sandboxId);
  const message = vscode.l10n.t(
    '{0} would {1}. Allow it? ({2})',
    who,
    vscode.l10n.t(reachSentence(widening)),
    text(description.title).replace(/\?$/, ''),
  );
  const detail = [
    confirmationPlainText(description),
    folder ? vscode.l10n.t('Workspace folder: {0}', folder) : '',
    why === 'unconfirmed'
      ? vscode.l10n.t(
          'VS Code did not ask about this call: when it was prepared, this window did not know the sandbox as it is now. So Agent Sandbox asks.',
        )
      : oneOff
        ? vscode.l10n.t(
            'This is more than you have allowed for one-off sandboxes so far, so Agent Sandbox asks even when the chat was told to allow this tool. "Allow for All One-Off Sandboxes" lasts until this window closes: every later one-off sandbox gets it.',
          )
        : vscode.l10n.t(
            'This is more than you have allowed for this sandbox so far, so Agent Sandbox asks even when the chat was told to allow this tool. "Allow for This Sandbox" lasts until the sandbox closes.',
          ),
  ]
    .filter(Boolean)
    .join('\n\n');
  const buttons = why === 'wider' ? [forSandbox, once] : [once];
  const choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, ...buttons);
  return choice === forSandbox ? 'sandbox' : choice === once ? 'once' : 'declined';
}
