// The persistent interpreter as Copilot meets it, through vscode.lm.invokeTool in the real host:
// state between calls, and a picture the code made comes back as an image part of the result.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { PNG_MAKER } from '../../engine/pngMaker';
import { invokeResult } from './helpers';

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
    assert.match(text, /1 image came back: the value \(96×48 PNG, \d+ KB\)\./);
    const images = result.content.filter(
      (part): part is vscode.LanguageModelDataPart => part instanceof vscode.LanguageModelDataPart,
    );
    assert.equal(images.length, 1);
    assert.equal(images[0]!.mimeType, 'image/png');
    const png = Buffer.from(images[0]!.data);
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [96, 48]);
    assert.ok(result.content[0] instanceof vscode.LanguageModelTextPart, 'the text comes first');
  });
});
