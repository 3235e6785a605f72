// What several suites share: calling a tool as Copilot does, and asking the runner for a screenshot.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

/** Calls a language-model tool through VS Code and returns the text the model would read. */
export async function invoke(name: string, input: object, token?: vscode.CancellationToken): Promise<string> {
  const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, token ?? new vscode.CancellationTokenSource().token);
  return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
}

/**
 * Asks the runner (which drives the browser; the suite runs in the extension host) for a screenshot
 * of the workbench: it saves NAME.png and answers with NAME.done.
 */
export async function screenshot(name: string): Promise<string> {
  const dir = process.env.AGENT_SANDBOX_VSCODE_SCREENSHOTS;
  assert.ok(dir, 'the runner sets AGENT_SANDBOX_VSCODE_SCREENSHOTS');
  const done = path.join(dir, `${name}.done`);
  fs.rmSync(done, { force: true });
  fs.writeFileSync(path.join(dir, `${name}.request`), '');
  for (let waited = 0; waited < 10_000; waited += 100) {
    if (fs.existsSync(done)) {
      assert.equal(fs.readFileSync(done, 'utf8'), 'ok');
      return path.join(dir, `${name}.png`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no screenshot ${name} after 10 s`);
}
