// The "Sandbox" commands, run the way a keybinding or another extension would: executeCommand with arguments.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { clickDialogButton, setWorkspaceAccess } from './helpers';

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
    const config = vscode.workspace.getConfiguration('agentSandbox');
    for (const key of ['workspaceAccess', 'network.mode', 'limits.memory'])
      await config.update(key, undefined, vscode.ConfigurationTarget.Workspace);
    await setWorkspaceAccess('none');
  });

  test('every command is contributed with the Sandbox category and registered', async () => {
    const contributed = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.contributes.commands as {
      command: string;
      category: string;
    }[];
    const registered = await vscode.commands.getCommands(true);
    for (const id of [
      'openSession',
      'closeSession',
      'closeAllSessions',
      'restartSession',
      'runSelection',
      'runFile',
      'openTerminal',
      'setWorkspaceAccess',
      'cleanUpOrphans',
      'showPanel',
      'showLog',
    ]) {
      const command = `agentSandbox.${id}`;
      assert.ok(
        contributed.some(
          (entry) => entry.command === command && ['Sandbox', '%command.category%'].includes(entry.category),
        ),
        `${command} is not contributed`,
      );
      assert.ok(registered.includes(command), `${command} is not registered`);
    }
  });

  test('Open, Restart and Close Session', async () => {
    const opened = await vscode.commands.executeCommand<SessionInfo>('agentSandbox.openSession', {
      session: 'cmd-test',
      runtime: 'bash',
    });
    assert.equal(opened?.name, 'cmd-test');
    assert.equal(opened?.runtime, 'bash');
    const restarted = await vscode.commands.executeCommand<SessionInfo>('agentSandbox.restartSession', 'cmd-test');
    assert.equal(restarted?.name, 'cmd-test');
    assert.notEqual(restarted?.id, opened?.id, 'a restart makes a new container');
    const closed = await vscode.commands.executeCommand<SessionInfo>('agentSandbox.closeSession', 'cmd-test');
    assert.equal(closed?.name, 'cmd-test');
  });

  test('Run Selection and Run File run the code in a sandbox', async () => {
    const document = await vscode.workspace.openTextDocument({
      language: 'python',
      content: 'print(6 * 7)\nprint("second line")\n',
    });
    const editor = await vscode.window.showTextDocument(document);
    editor.selection = new vscode.Selection(0, 0, 0, 12);
    const selection = await vscode.commands.executeCommand<{ stdout: string; exitCode: number }>(
      'agentSandbox.runSelection',
    );
    assert.equal(selection?.stdout, '42\n');
    const file = await vscode.commands.executeCommand<{ stdout: string }>('agentSandbox.runFile');
    assert.equal(file?.stdout, '42\nsecond line\n');
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
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

  test('Set Workspace Access gives more access only after the user confirms, whatever its arguments (hostile)', async () => {
    await vscode.commands.executeCommand('agentSandbox.closeAllSessions', 'confirmed');
    // An agent can call commands with arguments: the dialog still stands in the way, and Cancel changes nothing.
    const declined = vscode.commands.executeCommand('agentSandbox.setWorkspaceAccess', 'rw');
    assert.match(await clickDialogButton('Cancel'), /"rw" access/);
    assert.equal(await declined, undefined);
    const still = await vscode.commands.executeCommand<SessionInfo>('agentSandbox.openSession', {
      session: 'access-test',
      runtime: 'bash',
    });
    assert.equal(still?.workspaceAccess, 'none');
    await vscode.commands.executeCommand('agentSandbox.closeSession', 'access-test');

    const allowed = vscode.commands.executeCommand('agentSandbox.setWorkspaceAccess', 'ro');
    await clickDialogButton('Allow Read-Only');
    assert.equal(await allowed, 'ro');
    const opened = await vscode.commands.executeCommand<SessionInfo>('agentSandbox.openSession', {
      session: 'ro-test',
      runtime: 'bash',
    });
    assert.equal(opened?.workspaceAccess, 'ro');
    await vscode.commands.executeCommand('agentSandbox.closeSession', 'ro-test');
    // Less access needs no confirmation.
    assert.equal(await vscode.commands.executeCommand('agentSandbox.setWorkspaceAccess', 'none'), 'none');
  });

  test('workspace settings cannot loosen the policy: more access, network or higher limits there are ignored (hostile)', async () => {
    const config = vscode.workspace.getConfiguration('agentSandbox');
    await config.update('workspaceAccess', 'rw', vscode.ConfigurationTarget.Workspace);
    await config.update('network.mode', 'full', vscode.ConfigurationTarget.Workspace);
    await config.update('limits.memory', '4g', vscode.ConfigurationTarget.Workspace);
    const opened = await vscode.commands.executeCommand<
      SessionInfo & { network: boolean; spec: { limits: { memoryBytes: number } } }
    >('agentSandbox.openSession', { session: 'policy-test', runtime: 'bash' });
    assert.equal(opened?.workspaceAccess, 'none');
    assert.equal(opened?.network, false);
    assert.equal(opened?.spec.limits.memoryBytes, 512 * 1024 * 1024);
    await vscode.commands.executeCommand('agentSandbox.closeSession', 'policy-test');
    // Lower limits from the workspace do apply.
    await config.update('limits.memory', '256m', vscode.ConfigurationTarget.Workspace);
    const lowered = await vscode.commands.executeCommand<SessionInfo & { spec: { limits: { memoryBytes: number } } }>(
      'agentSandbox.openSession',
      { session: 'policy-test', runtime: 'bash' },
    );
    assert.equal(lowered?.spec.limits.memoryBytes, 256 * 1024 * 1024);
    await vscode.commands.executeCommand('agentSandbox.closeSession', 'policy-test');
    for (const key of ['workspaceAccess', 'network.mode', 'limits.memory'])
      await config.update(key, undefined, vscode.ConfigurationTarget.Workspace);
  });

  test('Close All Sessions closes every session of the workspace', async () => {
    await vscode.commands.executeCommand('agentSandbox.openSession', { session: 'all-1', runtime: 'bash' });
    await vscode.commands.executeCommand('agentSandbox.openSession', { session: 'all-2', runtime: 'bash' });
    const closed = await vscode.commands.executeCommand<SessionInfo[]>('agentSandbox.closeAllSessions', 'confirmed');
    const names = (closed ?? []).map((session) => session.name);
    assert.ok(names.includes('all-1') && names.includes('all-2'), names.join(', '));
  });
});
