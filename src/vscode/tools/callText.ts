/** A tool call's description from core (toolSpec.ts) in VS Code's words: localized, as Markdown. */
import * as vscode from 'vscode';
import type { CallDescription, Words } from '../../core/tools/toolSpec';

export function text(words: Words): string {
  return vscode.l10n.t(words.text, ...(words.args ?? []));
}

/** The confirmation's message: the code as a code block, then each detail on its own paragraph. */
export function confirmationMarkdown(description: CallDescription): vscode.MarkdownString {
  const message = new vscode.MarkdownString();
  if (description.code) message.appendCodeblock(description.code.text, description.code.language);
  for (const detail of description.details) message.appendMarkdown(`\n${text(detail)}\n`);
  return message;
}

/** The same, as plain text for a dialog (which shows no Markdown). */
export function confirmationPlainText(description: CallDescription): string {
  const parts: string[] = [];
  if (description.code) parts.push(description.code.text);
  for (const detail of description.details) parts.push(text(detail).replace(/`/g, ''));
  return parts.join('\n\n');
}
