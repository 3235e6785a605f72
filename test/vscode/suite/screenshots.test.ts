// Pictures of what a user sees, saved by the runner to out/screenshots/ for a person to look at.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { invoke, screenshot } from './helpers';

/** Asks the runner (which drives the browser) for a screenshot of the workbench, and waits for it. */
suite('Screenshots', () => {
  suiteSetup(async () => {
    await vscode.extensions.getExtension('agent-sandbox.agent-sandbox')!.activate();
  });

  test('the command palette filtered to "Sandbox"', async () => {
    await vscode.commands.executeCommand('workbench.action.quickOpen', '>Sandbox: ');
    await new Promise((resolve) => setTimeout(resolve, 800));
    const file = await screenshot('command-palette');
    assert.ok(fs.statSync(file).size > 10_000);
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
  });

  test('the status bar during a run', async () => {
    const run = invoke('sandbox_run', { runtime: 'bash', code: 'sleep 3; echo done' });
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const file = await screenshot('status-bar-running');
    await run;
    await new Promise((resolve) => setTimeout(resolve, 500));
    await screenshot('status-bar-idle');
    assert.ok(fs.statSync(file).size > 10_000);
  });
  test('the Sandbox panel with a live session', async () => {
    await vscode.commands.executeCommand('agentSandbox.openSession', { session: 'screenshot', runtime: 'python' });
    await vscode.commands.executeCommand('agentSandbox.showPanel');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const file = await screenshot('panel-in-vscode');
    assert.ok(fs.statSync(file).size > 10_000);
    await vscode.commands.executeCommand('agentSandbox.closeSession', 'screenshot');
  });
});
