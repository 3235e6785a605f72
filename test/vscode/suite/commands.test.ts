// The "Sandbox" commands, run the way a keybinding or another extension would: executeCommand with arguments.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

const EXTENSION_ID = 'agent-sandbox.agent-sandbox';

interface SessionInfo {
  name?: string;
  id: string;
  runtime: string;
  workspaceAccess: string;
}

suite('Sandbox commands', () => {
  suiteSetup(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
  });

  suiteTeardown(async () => {
    await vscode.workspace.getConfiguration('agentSandbox').update('workspaceAccess', undefined, vscode.ConfigurationTarget.Workspace);
    await vscode.commands.executeCommand('agentSandbox.closeAllSessions', 'confirmed');
  });

  test('every command is contributed with the Sandbox category and registered', async () => {
    const contributed = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.contributes.commands as { command: string; category: string }[];
    const registered = await vscode.commands.getCommands(true);
    for (const id of ['openSession', 'closeSession', 'closeAllSessions', 'restartSession', 'runSelection', 'runFile', 'openTerminal', 'setWorkspaceAccess', 'cleanUpOrphans', 'showPanel', 'showLog']) {
      const command = `agentSandbox.${id}`;
      assert.ok(contributed.some((entry) => entry.command === command && ['Sandbox', '%command.category%'].includes(entry.category)), `${command} is not contributed`);
      assert.ok(registered.includes(command), `${command} is not registered`);
    }
  });

  test('Open, Restart and Close Session', async () => {
    const opened = await vscode.commands.executeCommand<SessionInfo>('agentSandbox.openSession', { session: 'cmd-test', runtime: 'bash' });
    assert.equal(opened?.name, 'cmd-test');
    assert.equal(opened?.runtime, 'bash');
    const restarted = await vscode.commands.executeCommand<SessionInfo>('agentSandbox.restartSession', 'cmd-test');
    assert.equal(restarted?.name, 'cmd-test');
    assert.notEqual(restarted?.id, opened?.id, 'a restart makes a new container');
    const closed = await vscode.commands.executeCommand<SessionInfo>('agentSandbox.closeSession', 'cmd-test');
    assert.equal(closed?.name, 'cmd-test');
  });

  test('Run Selection and Run File run the code in a sandbox', async () => {
    const document = await vscode.workspace.openTextDocument({ language: 'python', content: 'print(6 * 7)\nprint("second line")\n' });
    const editor = await vscode.window.showTextDocument(document);
    editor.selection = new vscode.Selection(0, 0, 0, 12);
    const selection = await vscode.commands.executeCommand<{ stdout: string; exitCode: number }>('agentSandbox.runSelection');
    assert.equal(selection?.stdout, '42\n');
    const file = await vscode.commands.executeCommand<{ stdout: string }>('agentSandbox.runFile');
    assert.equal(file?.stdout, '42\nsecond line\n');
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  test('Open Terminal in Sandbox opens a terminal backed by the session', async () => {
    const opened = new Promise<vscode.Terminal>((resolve) => {
      const listener = vscode.window.onDidOpenTerminal((terminal) => {
        listener.dispose();
        resolve(terminal);
      });
    });
    await vscode.commands.executeCommand('agentSandbox.openTerminal', 'term-test');
    const terminal = await opened;
    assert.equal(terminal.name, 'Sandbox: term-test');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(terminal.exitStatus, undefined, 'the shell is still running');
    terminal.sendText('exit 0');
    const closed = await Promise.race([
      new Promise<boolean>((resolve) => vscode.window.onDidCloseTerminal((t) => t === terminal && resolve(true))),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000)),
    ]);
    assert.ok(closed, 'the terminal closes when the shell exits');
    await vscode.commands.executeCommand('agentSandbox.closeSession', 'term-test');
  });

  test('Set Workspace Access changes what new sessions see', async () => {
    await vscode.commands.executeCommand('agentSandbox.setWorkspaceAccess', 'ro');
    assert.equal(vscode.workspace.getConfiguration('agentSandbox').get('workspaceAccess'), 'ro');
    const opened = await vscode.commands.executeCommand<SessionInfo>('agentSandbox.openSession', { session: 'ro-test', runtime: 'bash' });
    assert.equal(opened?.workspaceAccess, 'ro');
    await vscode.commands.executeCommand('agentSandbox.closeSession', 'ro-test');
    await vscode.commands.executeCommand('agentSandbox.setWorkspaceAccess', 'none');
  });

  test('Close All Sessions closes every session of the workspace', async () => {
    await vscode.commands.executeCommand('agentSandbox.openSession', { session: 'all-1', runtime: 'bash' });
    await vscode.commands.executeCommand('agentSandbox.openSession', { session: 'all-2', runtime: 'bash' });
    const closed = await vscode.commands.executeCommand<SessionInfo[]>('agentSandbox.closeAllSessions', 'confirmed');
    const names = (closed ?? []).map((session) => session.name);
    assert.ok(names.includes('all-1') && names.includes('all-2'), names.join(', '));
  });
});
