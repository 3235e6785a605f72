/** Completions, hovers and quick fixes in `.prompt` files, as thin adapters over src/core/prompt. */
import * as vscode from 'vscode';
import { analyzePrompt } from '../../core/prompt/analyzePrompt';
import { completePrompt } from '../../core/prompt/completions';
import { hoverPrompt } from '../../core/prompt/hover';
import { DIAGNOSTIC_SOURCE, DOTPROMPT } from './promptDiagnostics';
import { promptEnvironment } from './promptEnvironment';

const SELECTOR: vscode.DocumentSelector = { language: DOTPROMPT };

function range(document: vscode.TextDocument, start: number, end: number): vscode.Range {
  return new vscode.Range(document.positionAt(start), document.positionAt(end));
}

const completions: vscode.CompletionItemProvider = {
  provideCompletionItems(document, position, _token, context) {
    // Typing a space opens the list only where a value is due: after "key: ", a list's "- ", or ", " in [a, b].
    if (
      context.triggerKind === vscode.CompletionTriggerKind.TriggerCharacter &&
      !/(:|,|^\s*-)\s$/.test(document.lineAt(position.line).text.slice(0, position.character))
    )
      return undefined;
    const result = completePrompt(document.getText(), document.offsetAt(position), promptEnvironment());
    if (!result) return undefined;
    const replace = range(document, result.start, result.end);
    return result.items.map((item, index) => {
      const completion = new vscode.CompletionItem(
        item.label,
        item.kind === 'key' ? vscode.CompletionItemKind.Property : vscode.CompletionItemKind.EnumMember,
      );
      completion.detail = item.detail;
      if (item.documentation) completion.documentation = new vscode.MarkdownString(item.documentation);
      completion.insertText = item.snippet ? new vscode.SnippetString(item.insertText) : item.insertText;
      completion.range = replace;
      completion.sortText = String(index).padStart(3, '0');
      if (item.retrigger) completion.command = { title: 'Suggest', command: 'editor.action.triggerSuggest' };
      return completion;
    });
  },
};

const hovers: vscode.HoverProvider = {
  provideHover(document, position) {
    const hover = hoverPrompt(document.getText(), document.offsetAt(position), promptEnvironment());
    return (
      hover && new vscode.Hover(new vscode.MarkdownString(hover.contents), range(document, hover.start, hover.end))
    );
  },
};

const quickFixes: vscode.CodeActionProvider = {
  provideCodeActions(document, requested, context) {
    const actions: vscode.CodeAction[] = [];
    for (const problem of analyzePrompt(document.getText(), promptEnvironment()).problems) {
      const where = range(document, problem.start, problem.end);
      if (problem.fixes.length === 0 || !where.intersection(requested)) continue;
      const diagnostic = context.diagnostics.find(
        (candidate) =>
          candidate.source === DIAGNOSTIC_SOURCE && candidate.code === problem.code && candidate.range.isEqual(where),
      );
      for (const fix of problem.fixes) {
        const action = new vscode.CodeAction(fix.title, vscode.CodeActionKind.QuickFix);
        action.edit = new vscode.WorkspaceEdit();
        for (const edit of fix.edits)
          action.edit.replace(document.uri, range(document, edit.start, edit.end), edit.newText);
        if (diagnostic) action.diagnostics = [diagnostic];
        action.isPreferred = fix.preferred ?? false;
        actions.push(action);
      }
    }
    return actions;
  },
};

export function registerPromptProviders(): vscode.Disposable[] {
  return [
    vscode.languages.registerCompletionItemProvider(SELECTOR, completions, ' '),
    vscode.languages.registerHoverProvider(SELECTOR, hovers),
    vscode.languages.registerCodeActionsProvider(SELECTOR, quickFixes, {
      providedCodeActionKinds: [vscode.CodeActionKind.QuickFix],
    }),
  ];
}
