/**
 * "Sandbox: Run Agent" (and the "Run Agent" code lens of a `.prompt` file): asks @sandbox in the chat
 * to run the file. A file whose input has required fields leaves the request for the user to
 * complete with the input; any other runs at once.
 */
import * as vscode from 'vscode';
import { analyzePrompt } from '../../core/prompt/analyzePrompt';
import { DOTPROMPT } from '../prompt/promptDiagnostics';

export const RUN_AGENT = 'agentSandbox.runAgent';

/** The input fields the file must be given: required in its schema (Picoschema or JSON Schema) and without a default. */
export function requiredInputs(data: Record<string, unknown> | undefined): string[] {
  const input = data?.input as { schema?: unknown; default?: unknown } | undefined;
  const schema = input?.schema;
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return [];
  const defaults = (input?.default ?? {}) as Record<string, unknown>;
  const record = schema as Record<string, unknown>;
  const names = Array.isArray(record.required)
    ? record.required.map(String)
    : record.properties
      ? []
      : // Picoschema: `name: type` is required, `name?: type` is not; `name(type, note)` names it too.
        Object.keys(record)
          .filter((key) => !/^\w+\?/.test(key) && key !== 'type')
          .map((key) => key.split('(')[0]!.trim());
  return names.filter((name) => !(name in defaults));
}

async function pickPromptFile(): Promise<vscode.Uri | undefined> {
  const active = vscode.window.activeTextEditor?.document;
  if (active?.languageId === DOTPROMPT) return active.uri;
  const files = await vscode.workspace.findFiles('**/*.prompt', '**/node_modules/**', 200);
  if (!files.length) throw new Error(vscode.l10n.t('No .prompt files in this workspace.'));
  const picked = await vscode.window.showQuickPick(
    files.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri })),
    { placeHolder: vscode.l10n.t('Run which agent?') },
  );
  return picked?.uri;
}

export async function runAgent(arg?: unknown): Promise<void> {
  const uri = arg instanceof vscode.Uri ? arg : await pickPromptFile();
  if (!uri) return;
  const document = await vscode.workspace.openTextDocument(uri);
  const path = vscode.workspace.asRelativePath(uri);
  const quoted = /\s/.test(path) ? `"${path}"` : path;
  const required = requiredInputs(analyzePrompt(document.getText()).data);
  // With required input, the request waits for the user to fill in the values.
  const input = required.length ? ` ${JSON.stringify(Object.fromEntries(required.map((name) => [name, ''])))}` : '';
  await vscode.commands.executeCommand('workbench.action.chat.open', {
    query: `@sandbox /run ${quoted}${input}`,
    isPartialQuery: required.length > 0,
  });
}
