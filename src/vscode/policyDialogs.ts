/**
 * The modal questions that stand between any caller (a command with arguments, the panel, an agent
 * calling commands) and a looser policy: only a person's click loosens it.
 */
import * as vscode from 'vscode';
import type { WorkspaceAccess } from '../core/spec/spec';

const ORDER: Record<WorkspaceAccess, number> = { none: 0, ro: 1, rw: 2 };

/** True when `next` gives no more than `current`, or the user confirmed it in a modal dialog. */
export async function confirmLooserAccess(current: WorkspaceAccess, next: WorkspaceAccess): Promise<boolean> {
  if (ORDER[next] <= ORDER[current]) return true;
  const allow = next === 'rw' ? vscode.l10n.t('Allow Read-Write') : vscode.l10n.t('Allow Read-Only');
  const detail =
    next === 'rw'
      ? vscode.l10n.t(
          'Sandboxes of this workspace will be able to change, create and delete files in the folder (not .git, .vscode, .github or .devcontainer).',
        )
      : vscode.l10n.t('Sandboxes of this workspace will be able to read every file in the folder.');
  const choice = await vscode.window.showWarningMessage(
    vscode.l10n.t('Give sandboxes "{0}" access to this workspace folder?', next),
    { modal: true, detail },
    allow,
  );
  return choice === allow;
}

/** True when network stays off, or the user confirmed turning it on for every workspace. */
export async function confirmNetwork(current: boolean, next: boolean): Promise<boolean> {
  if (!next || current) return true;
  const allow = vscode.l10n.t('Turn On Network');
  const choice = await vscode.window.showWarningMessage(
    vscode.l10n.t('Let sandboxes reach the network?'),
    {
      modal: true,
      detail: vscode.l10n.t(
        'Code in a sandbox could then send what it can read to any server. This is saved in your user settings and applies to every workspace.',
      ),
    },
    allow,
  );
  return choice === allow;
}
