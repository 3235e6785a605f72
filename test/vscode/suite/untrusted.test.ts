// In a workspace the user has not trusted, sandboxes never see the workspace folder.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { invoke } from './helpers';

suite('Untrusted workspace', () => {
  suiteSetup(async () => {
    await vscode.extensions.getExtension('agent-sandbox.agent-sandbox')!.activate();
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('agentSandbox.closeAllSessions', 'confirmed');
  });

  test('the folder is not trusted and the extension still works in limited mode', async () => {
    assert.equal(vscode.workspace.isTrusted, false);
    assert.match(await invoke('sandbox_run', { code: 'print(6 * 7)' }), /\b42\b/);
  });

  test('a session asking for read-write access gets none, and is told why', async () => {
    const text = await invoke('sandbox_open', { session: 'untrusted', runtime: 'bash', workspace_access: 'rw' });
    assert.match(text, /not trusted/);
    const listing = await invoke('sandbox_exec', {
      sandbox_id: 'untrusted',
      command: 'mount | grep -c " /workspace " || true',
    });
    assert.match(listing, /\b0\b/, 'nothing is mounted at /workspace');
  });

  test('Set Workspace Access refuses to share the folder', async () => {
    await vscode.commands.executeCommand('agentSandbox.setWorkspaceAccess', 'rw');
    assert.notEqual(vscode.workspace.getConfiguration('agentSandbox').get('workspaceAccess'), 'rw');
  });
  test('a .prompt file cannot choose what runs: no code lens, and the command refuses', async () => {
    const folder = vscode.workspace.workspaceFolders![0]!.uri;
    const file = vscode.Uri.joinPath(folder, 'untrusted-agent.prompt');
    await vscode.workspace.fs.writeFile(
      file,
      Buffer.from(
        '---\nmodel: x\nsandbox:\n  mode: code\n  runtime: python\n  image: attacker/image:latest\n---\nHello\n',
      ),
    );
    const document = await vscode.workspace.openTextDocument(file);
    await vscode.window.showTextDocument(document);
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', file);
    assert.equal((lenses ?? []).filter((lens) => lens.command?.command === 'agentSandbox.openAgentSession').length, 0);
    const opened = await vscode.commands.executeCommand('agentSandbox.openAgentSession', file);
    assert.equal(opened, undefined);
    const sessions = await invoke('sandbox_exec', { command: 'echo still-default' });
    assert.match(sessions, /still-default/);
  });
});
