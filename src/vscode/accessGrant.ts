/**
 * The workspace access the user chose for one folder (Set Workspace Access, or the panel), kept in
 * the user's own settings as `agentSandbox.workspaceAccessByFolder` so they can see and edit it, and
 * nothing a sandbox writes into the folder can forge it. More access than before is written only
 * after a modal confirmation (see policyDialogs.ts); workspace settings may only lower it.
 */
import * as vscode from 'vscode';
import { WORKSPACE_ACCESS, type WorkspaceAccess } from '../core/spec/spec';

const KEY = 'workspaceAccessByFolder';

export class AccessGrant {
  constructor(
    private readonly section: string,
    private readonly folder: () => string | undefined,
  ) {}

  /** The user's choice for the current folder, if they made one. */
  get(): WorkspaceAccess | undefined {
    const folder = this.folder();
    if (!folder) return undefined;
    const value = this.byFolder()[folder];
    return (WORKSPACE_ACCESS as readonly string[]).includes(value ?? '') ? (value as WorkspaceAccess) : undefined;
  }

  async set(access: WorkspaceAccess): Promise<void> {
    const folder = this.folder();
    if (!folder) {
      await vscode.workspace
        .getConfiguration(this.section)
        .update('workspaceAccess', access, vscode.ConfigurationTarget.Global);
      return;
    }
    await vscode.workspace
      .getConfiguration(this.section)
      .update(KEY, { ...this.byFolder(), [folder]: access }, vscode.ConfigurationTarget.Global);
  }

  private byFolder(): Record<string, string> {
    const value = vscode.workspace.getConfiguration(this.section).inspect<Record<string, string>>(KEY)?.globalValue;
    return value && typeof value === 'object' ? value : {};
  }
}
