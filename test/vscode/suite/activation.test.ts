// What a user sees first: the extension is installed, activates, offers its commands, and the
// host has the language model tool API the extension builds on.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

const EXTENSION_ID = 'agent-sandbox.agent-sandbox';

async function activeExtension(): Promise<vscode.Extension<unknown>> {
  const extension = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(extension, `${EXTENSION_ID} is not installed in the extension host`);
  await extension.activate();
  return extension;
}

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

suite('Activation', () => {
  test('the extension is present and becomes active', async () => {
    const extension = await activeExtension();
    assert.equal(extension.isActive, true);
    assert.equal(extension.packageJSON.name, 'agent-sandbox');
  });

  test('the command agentSandbox.showLog is registered and runs', async () => {
    await activeExtension();
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('agentSandbox.showLog'), 'agentSandbox.showLog is not registered');
    // The user sees the extension's output channel open (output channels are `output:` documents).
    const logVisible = () =>
      vscode.window.visibleTextEditors.some(
        (editor) => editor.document.uri.scheme === 'output' && editor.document.uri.path.includes(EXTENSION_ID),
      );
    await vscode.commands.executeCommand('agentSandbox.showLog');
    let shown = await waitFor(logVisible, 3000);
    if (!shown) {
      // While the workbench is still restoring its layout (this test can run in the first second
      // of the window's life) it may close the panel again: run the command once more, as a user would.
      await vscode.commands.executeCommand('agentSandbox.showLog');
      shown = await waitFor(logVisible, 5000);
    }
    assert.ok(
      shown,
      `no output channel of ${EXTENSION_ID} is visible; visible editors: ` +
        vscode.window.visibleTextEditors.map((editor) => editor.document.uri.toString()).join(', '),
    );
  });

  test('the host offers the language model tool API', () => {
    assert.ok(vscode.lm, 'vscode.lm is missing');
    assert.equal(typeof vscode.lm.registerTool, 'function');
  });
});
