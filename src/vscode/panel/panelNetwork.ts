/**
 * The export of the folder's audit log (tool calls and network decisions). The decisions the panel
 * shows as they happen are panelDecisions.ts's.
 */
import * as vscode from 'vscode';
import type { SandboxEngine } from '../../core/engine/engine';
import { auditLog, jsonLines } from '../../core/sessions/auditLog';

/** Saves the folder's audit log (tool calls and network decisions) where the user picks, as JSON Lines. */
export async function exportAuditLog(
  folder: string | undefined,
  engine: SandboxEngine,
  redact: (text: string) => string,
): Promise<string | undefined> {
  if (!folder) return vscode.l10n.t('Open a folder first: the audit log is kept per workspace folder.');
  const target = await vscode.window.showSaveDialog({
    defaultUri: vscode.Uri.file(`${folder}/agent-sandbox-log-${new Date().toISOString().slice(0, 10)}.jsonl`),
    filters: { 'JSON Lines': ['jsonl'] },
    title: vscode.l10n.t('Export the Agent Sandbox audit log'),
  });
  if (!target) return undefined;
  const records = await auditLog(folder, engine, undefined, redact);
  await vscode.workspace.fs.writeFile(target, Buffer.from(jsonLines(records)));
  return vscode.l10n.t('Exported {0} records to {1}.', records.length, target.fsPath);
}
