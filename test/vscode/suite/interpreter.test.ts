// The persistent interpreter as Copilot meets it, through vscode.lm.invokeTool in the real host:
// state between calls, and a picture the code made comes back as an image part of the result; a
// plot shows as a thumbnail in the Sandbox panel, and a click opens it in VS Code's image preview.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { PNG_MAKER } from '../../engine/pngMaker';
import { invokeResult, look, lookUntil, screenshot } from './helpers';

function textOf(result: vscode.LanguageModelToolResult): string {
  return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
}

suite('Persistent Python interpreter through the tools', () => {
  suiteTeardown(async () => {
    await vscode.commands.executeCommand('agentSandbox.closeAllSessions', 'confirmed');
  });

  test('keeps state between calls and returns a picture as an image part', async function () {
    this.timeout(120_000);
    await invokeResult('sandbox_open', { session: 'interpreter', runtime: 'python' });
    await invokeResult('sandbox_exec', { sandbox_id: 'interpreter', code: `${PNG_MAKER}\nside = 96` });
    const result = await invokeResult('sandbox_exec', { sandbox_id: 'interpreter', code: 'Picture(side, side // 2)' });
    const text = textOf(result);
    assert.match(text, /^python 3\.[\d.]+ \(persistent\) /);
    assert.match(text, /1 image came back: the value \(96×48 PNG, \d+ KB, files\/f_[0-9a-f]{16}\)\./);
    const images = result.content.filter(
      (part): part is vscode.LanguageModelDataPart => part instanceof vscode.LanguageModelDataPart,
    );
    assert.equal(images.length, 1);
    assert.equal(images[0]!.mimeType, 'image/png');
    const png = Buffer.from(images[0]!.data);
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [96, 48]);
    assert.ok(result.content[0] instanceof vscode.LanguageModelTextPart, 'the text comes first');
  });

  test('a matplotlib plot comes back as an image part, shows in the panel, and opens from there', async function () {
    this.timeout(120_000);
    const result = await invokeResult('sandbox_exec', {
      sandbox_id: 'interpreter',
      code: 'import matplotlib.pyplot as plt\nplt.figure(figsize=(6, 4))\nplt.bar(["a", "b", "c"], [3, 7, 5])\nplt.title("counts")',
    });
    assert.match(textOf(result), /1 image came back: figure 1 \(600×400 PNG, \d+ KB, files\/f_[0-9a-f]{16}\)\./);
    const image = result.content.find(
      (part): part is vscode.LanguageModelDataPart => part instanceof vscode.LanguageModelDataPart,
    );
    const png = Buffer.from(image!.data);
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [600, 400]);

    await vscode.commands.executeCommand('agentSandbox.showPanel');
    const seen = await lookUntil(
      'panel',
      /group "Last images \(1\)"[\s\S]*button "Open image figure-1\.png"[\s\S]*img "figure 1, 600×400"/,
      'the plot as a thumbnail in the panel',
    );
    assert.match(seen.aria, /listitem "Session interpreter, running"/);
    // The panel maximized, so that the picture for a person shows the whole card with its thumbnail.
    await vscode.commands.executeCommand('workbench.action.toggleMaximizedPanel');
    try {
      await lookUntil('panel', /img "figure 1, 600×400"/, 'the thumbnail in the maximized panel');
      await screenshot('panel-thumbnail-in-vscode');
    } finally {
      await vscode.commands.executeCommand('workbench.action.toggleMaximizedPanel');
    }
    await look('panel', { click: { role: 'button', name: 'Open image figure-1.png' } });
    let opened: vscode.Tab | undefined;
    for (let tries = 0; tries < 100 && !opened; tries++) {
      opened = vscode.window.tabGroups.all
        .flatMap((group) => group.tabs)
        .find((tab) => tab.input instanceof vscode.TabInputCustom && tab.input.uri.path.endsWith('.png'));
      if (!opened) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(opened, 'the plot opened in an editor');
    assert.equal((opened.input as vscode.TabInputCustom).viewType, 'imagePreview.previewEditor');
    const shown = await vscode.workspace.fs.readFile((opened.input as vscode.TabInputCustom).uri);
    assert.ok(Buffer.from(shown).equals(png), 'the preview shows the very image the model got');
    await vscode.window.tabGroups.close(opened);
  });
});
