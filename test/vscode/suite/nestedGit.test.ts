// A read-write sandbox that creates a git repository below the top of the folder (with a config that
// would make git run a command on this machine) gets it set aside at once, in the real host: the
// folder keeps no nested .git that VS Code's git could open.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { invoke, invokeAllowing, setWorkspaceAccess } from './helpers';

interface Api {
  gitGuard: { onDidHold(listener: (path: string) => void): vscode.Disposable; update(): Promise<void> };
}

suite('A nested .git made by a read-write sandbox', () => {
  const root = fs.realpathSync(vscode.workspace.workspaceFolders![0]!.uri.fsPath);
  const nest = path.join(root, 'nested-repo');
  let api: Api;
  let mode = 0;

  suiteSetup(async function () {
    this.timeout(120_000);
    api = (await vscode.extensions.getExtension('agent-sandbox.agent-sandbox')!.activate()) as Api;
    await setWorkspaceAccess('rw');
    mode = fs.statSync(root).mode & 0o777;
    fs.chmodSync(root, 0o777); // the sandbox's user (not root) may write the folder, as a user's own sandbox may
  });

  suiteTeardown(async function () {
    this.timeout(60_000);
    await vscode.commands.executeCommand('agentSandbox.closeAllSessions', 'confirmed');
    fs.rmSync(nest, { recursive: true, force: true });
    if (mode) fs.chmodSync(root, mode);
    await setWorkspaceAccess('none');
  });

  test('is set aside before VS Code can open it, and the user is told', async function () {
    this.timeout(120_000);
    await invokeAllowing('Allow for This Sandbox', 'sandbox_open', {
      session: 'nested-git',
      runtime: 'bash',
      workspace_access: 'rw',
    });
    await api.gitGuard.update();
    const held = new Promise<string>((resolve) => {
      const listening = api.gitGuard.onDidHold((where) => {
        listening.dispose();
        resolve(where);
      });
    });
    const made = await invoke('sandbox_exec', {
      sandbox_id: 'nested-git',
      command:
        'mkdir -p nested-repo/.git && printf \'[core]\\n\\tfsmonitor = "touch /tmp/pwned"\\n\' > nested-repo/.git/config && echo made',
    });
    assert.match(made, /made/);
    assert.equal(await held, 'nested-repo/.git');
    assert.ok(!fs.existsSync(path.join(nest, '.git')), 'no nested .git is left in the folder');
    const aside = fs.readdirSync(nest).filter((name) => name.startsWith('.git.held-by-agent-sandbox-'));
    assert.equal(aside.length, 1);
    assert.match(fs.readFileSync(path.join(nest, aside[0]!, 'config'), 'utf8'), /fsmonitor/, 'kept, not lost');
  });
});
