/**
 * The modal questions that stand between any caller (a command with arguments, the panel, an agent
 * calling commands) and a looser policy: only a person's click loosens it.
 */
import * as vscode from 'vscode';
import { NETWORK_MODES, type NetworkMode } from '../core/spec/settings';
import type { WorkspaceAccess } from '../core/spec/spec';

const ORDER: Record<WorkspaceAccess, number> = { none: 0, copy: 1, ro: 2, rw: 3 };

/** True when `next` gives no more than `current`, or the user confirmed it in a modal dialog. */
export async function confirmLooserAccess(current: WorkspaceAccess, next: WorkspaceAccess): Promise<boolean> {
  if (ORDER[next] <= ORDER[current]) return true;
  const allow =
    next === 'rw'
      ? vscode.l10n.t('Allow Read-Write')
      : next === 'copy'
        ? vscode.l10n.t('Allow a Copy')
        : vscode.l10n.t('Allow Read-Only');
  const detail =
    next === 'rw'
      ? vscode.l10n.t(
          'Sandboxes of this workspace will be able to change, create and delete files in the folder (not .git, .vscode, .github or .devcontainer).',
        )
      : next === 'copy'
        ? vscode.l10n.t(
            'Sandboxes of this workspace will get a copy of the folder when they open (what .gitignore does not exclude, without .git); your folder changes only when you apply their changes.',
          )
        : vscode.l10n.t('Sandboxes of this workspace will be able to read every file in the folder.');
  const choice = await vscode.window.showWarningMessage(
    vscode.l10n.t('Give sandboxes "{0}" access to this workspace folder?', next),
    { modal: true, detail },
    allow,
  );
  return choice === allow;
}

/** True when the network's mode is not raised, or the user confirmed raising it for every workspace. */
export async function confirmNetwork(
  current: NetworkMode,
  next: NetworkMode,
  allowlist: readonly string[],
): Promise<boolean> {
  if (NETWORK_MODES.indexOf(next) <= NETWORK_MODES.indexOf(current)) return true;
  const full = next === 'full';
  const allow = full ? vscode.l10n.t('Turn On Network') : vscode.l10n.t('Use the Allowlist');
  const choice = await vscode.window.showWarningMessage(
    full
      ? vscode.l10n.t('Let sandboxes reach the network?')
      : vscode.l10n.t('Let sandboxes reach the names on your allowlist?'),
    {
      modal: true,
      detail: full
        ? vscode.l10n.t(
            'Code in a sandbox could then send what it can read to any server. This is saved in your user settings and applies to every workspace.',
          )
        : vscode.l10n.t(
            'Code in a sandbox could then send what it can read to those servers ({0}); every connection goes through a proxy on your machine and is recorded. This is saved in your user settings and applies to every workspace.',
            allowlist.join(', ') || vscode.l10n.t('none yet: add them in agentSandbox.network.allow'),
          ),
    },
    allow,
  );
  return choice === allow;
}
