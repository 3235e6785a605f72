/**
 * Closing or restarting a copy session whose changes were neither applied nor discarded: the service
 * refuses (ChangesAwaitReview); here the user is asked, in a modal dialog, to review them first or to
 * discard them and go on.
 */
import * as vscode from 'vscode';
import type { CopyChange } from '../../core/files/copyChanges';
import { ChangesAwaitReview, type HeldSession } from '../../core/sessions/copyHold';
import { sandboxIdOf } from '../../core/sessions/sessions';

function named(changes: readonly CopyChange[]): string {
  const paths = changes.slice(0, 4).map((change) => change.path);
  return changes.length > 4 ? `${paths.join(', ')} (+${changes.length - 4})` : paths.join(', ');
}

/**
 * Runs `work` without discarding; when a copy session's changes stop it, asks the user and runs it
 * again discarding them if they say so. Undefined when the user chose to review (or cancelled).
 */
export async function askingAboutChanges<T>(
  verb: 'close' | 'restart',
  work: (discardChanges: boolean) => Promise<T>,
): Promise<T | undefined> {
  try {
    return await work(false);
  } catch (error) {
    if (!(error instanceof ChangesAwaitReview)) throw error;
    const go = verb === 'close' ? vscode.l10n.t('Discard and Close') : vscode.l10n.t('Discard and Restart');
    const review = vscode.l10n.t('Review Changes');
    const choice = await vscode.window.showWarningMessage(
      vscode.l10n.t(
        'Session {0} has {1} change(s) in its copy that were not applied to the folder: {2}. {3} loses them.',
        sandboxIdOf(error.session),
        error.changes.length,
        named(error.changes),
        verb === 'close' ? vscode.l10n.t('Closing it') : vscode.l10n.t('Restarting it'),
      ),
      { modal: true },
      review,
      go,
    );
    if (choice === go) return work(true);
    if (choice === review) await vscode.commands.executeCommand('workbench.view.scm');
    return undefined;
  }
}

/** After closing every session: the copy sessions kept for their changes, offered to close too. */
export async function askAboutHeld(held: readonly HeldSession[], closeThem: () => Promise<unknown>): Promise<boolean> {
  if (!held.length) return false;
  const go = vscode.l10n.t('Discard and Close Them');
  const review = vscode.l10n.t('Review Changes');
  const choice = await vscode.window.showWarningMessage(
    vscode.l10n.t(
      '{0} copy session(s) were kept open: their changes were not applied to the folder ({1}). Closing them loses the changes.',
      held.length,
      held.map((item) => `${sandboxIdOf(item.session)}: ${item.changes.length}`).join(', '),
    ),
    { modal: true },
    review,
    go,
  );
  if (choice === go) {
    await closeThem();
    return true;
  }
  if (choice === review) await vscode.commands.executeCommand('workbench.view.scm');
  return false;
}
