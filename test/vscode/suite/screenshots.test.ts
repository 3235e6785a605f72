// What a user sees of the extension in the workbench: the runner reads the area on screen (its
// accessibility tree and text) and saves a picture of it to out/screenshots/ for a person to look at.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { invoke, lookUntil, screenshot } from './helpers';

suite('Screenshots', () => {
  suiteSetup(async () => {
    await vscode.extensions.getExtension('agent-sandbox.agent-sandbox')!.activate();
  });

  test('the command palette filtered to "Sandbox" lists the commands', async () => {
    await vscode.commands.executeCommand('workbench.action.quickOpen', '>Sandbox: ');
    const seen = await lookUntil('palette', /Sandbox: Open Session/, 'the Sandbox commands in the palette');
    for (const command of [
      'Sandbox: Open Session',
      'Sandbox: Close All Sessions',
      'Sandbox: Open Terminal in Sandbox',
      'Sandbox: Set Workspace Access',
      'Sandbox: Add Secret',
      'Sandbox: Clean Up Orphaned Sandboxes',
    ])
      assert.ok(seen.text.includes(command), `${command} is listed:\n${seen.text}`);
    // Commands that need an editor or a .prompt file stay out of the palette without one.
    assert.doesNotMatch(seen.text, /Open Sandbox Session for Agent|Run Selection in Sandbox/);
    await screenshot('command-palette');
    // The list shows about 15 rows at a time: the rest are found by typing on.
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await vscode.commands.executeCommand('workbench.action.quickOpen', '>Sandbox: Show');
    const more = await lookUntil('palette', /Sandbox: Show Panel/, 'Show Panel in the palette');
    assert.match(more.text, /Sandbox: Show Log/);
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
  });

  test('the status bar during a run, and after it', async () => {
    const run = invoke('sandbox_run', { runtime: 'bash', code: 'sleep 3; echo done' });
    await lookUntil('statusbar', /Sandbox[^\n]*running/i, 'the status bar while a call runs');
    await screenshot('status-bar-running');
    await run;
    const idle = await lookUntil('statusbar', /Sandbox[^\n]*(ready|\d+ sessions?)/i, 'the status bar after the call');
    assert.doesNotMatch(idle.text, /Sandbox[^\n]*running/i);
    await screenshot('status-bar-idle');
  });

  test('the Sandbox panel with a live session', async () => {
    await vscode.commands.executeCommand('agentSandbox.openSession', { session: 'screenshot', runtime: 'python' });
    await vscode.commands.executeCommand('agentSandbox.showPanel');
    const seen = await lookUntil('panel', /listitem "Session screenshot, running"/, 'the session in the panel');
    assert.match(seen.aria, /region "Engine"[\s\S]*status: connected/);
    assert.match(seen.aria, /button "Open a new session"/);
    await screenshot('panel-in-vscode');
    await vscode.commands.executeCommand('agentSandbox.closeSession', 'screenshot');
    await lookUntil('panel', /^(?![\s\S]*listitem "Session screenshot,)/, 'the closed session gone from the panel');
  });
});
