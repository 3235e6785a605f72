/** Problems of `.prompt` files in the Problems view: on open, as you type (debounced), and for the whole workspace on request. */
import * as vscode from 'vscode';
import { analyzePrompt } from '../../core/prompt/analyzePrompt';
import type { PromptProblem } from '../../core/prompt/problems';
import { SECRETS_SETTING, promptEnvironment } from './promptEnvironment';

export const DOTPROMPT = 'dotprompt';
export const DIAGNOSTIC_SOURCE = 'dotprompt';
const DEBOUNCE_MS = 300;

export interface ValidationSummary {
  files: number;
  errors: number;
  warnings: number;
}

export function toDiagnostic(problem: PromptProblem): vscode.Diagnostic {
  const { start, end } = problem.range;
  const severity = problem.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning;
  const diagnostic = new vscode.Diagnostic(
    new vscode.Range(start.line, start.character, end.line, end.character),
    problem.message,
    severity,
  );
  diagnostic.source = DIAGNOSTIC_SOURCE;
  diagnostic.code = problem.code;
  return diagnostic;
}

export class PromptDiagnostics implements vscode.Disposable {
  readonly collection = vscode.languages.createDiagnosticCollection(DOTPROMPT);
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly subscriptions: vscode.Disposable[];

  constructor() {
    this.subscriptions = [
      vscode.workspace.onDidOpenTextDocument((document) => this.update(document)),
      vscode.workspace.onDidChangeTextDocument((event) => this.schedule(event.document)),
      vscode.workspace.onDidCloseTextDocument((document) => {
        this.cancel(document.uri);
        if (document.languageId === DOTPROMPT) this.collection.delete(document.uri);
      }),
      // The secrets a sandbox block may name are the user's: check open files again when they change.
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (!event.affectsConfiguration(SECRETS_SETTING)) return;
        for (const document of vscode.workspace.textDocuments) this.update(document);
      }),
    ];
    for (const document of vscode.workspace.textDocuments) this.update(document);
  }

  /** Analyses a document now; other languages are left alone. */
  update(document: vscode.TextDocument): void {
    if (document.languageId !== DOTPROMPT) return;
    this.cancel(document.uri);
    this.collection.set(
      document.uri,
      analyzePrompt(document.getText(), promptEnvironment()).problems.map(toDiagnostic),
    );
  }

  /** Analyses a document once typing pauses. */
  schedule(document: vscode.TextDocument): void {
    if (document.languageId !== DOTPROMPT) return;
    this.cancel(document.uri);
    this.timers.set(
      document.uri.toString(),
      setTimeout(() => this.update(document), DEBOUNCE_MS),
    );
  }

  /** Every `*.prompt` file of the workspace, open or not, into the Problems view. */
  async validateWorkspace(token?: vscode.CancellationToken): Promise<ValidationSummary> {
    const files = await vscode.workspace.findFiles('**/*.prompt', '**/node_modules/**', undefined, token);
    const summary: ValidationSummary = { files: 0, errors: 0, warnings: 0 };
    const decoder = new TextDecoder();
    const environment = promptEnvironment();
    for (const uri of files) {
      if (token?.isCancellationRequested) break;
      const open = vscode.workspace.textDocuments.find((document) => document.uri.toString() === uri.toString());
      const text = open ? open.getText() : decoder.decode(await vscode.workspace.fs.readFile(uri));
      const problems = analyzePrompt(text, environment).problems;
      this.collection.set(uri, problems.map(toDiagnostic));
      summary.files++;
      summary.errors += problems.filter((problem) => problem.severity === 'error').length;
      summary.warnings += problems.filter((problem) => problem.severity === 'warning').length;
    }
    return summary;
  }

  dispose(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const subscription of this.subscriptions) subscription.dispose();
    this.collection.dispose();
  }

  private cancel(uri: vscode.Uri): void {
    const key = uri.toString();
    const timer = this.timers.get(key);
    if (timer) clearTimeout(timer);
    this.timers.delete(key);
  }
}
