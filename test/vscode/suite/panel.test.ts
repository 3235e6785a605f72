// The Sandbox panel in the real host: it opens from its command, shows a real session's live state,
// and its workspace-access control really recreates the container with the new mount.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { clickDialogButton, setWorkspaceAccess } from './helpers';

interface Posted {
  type: string;
  engine?: { state: string };
  sessions?: { sandboxId: string; id: string; workspaceAccess: string; state: string }[];
  stats?: { id: string; memoryBytes: number };
  ok?: boolean;
  message?: string;
}

interface Api {
  panel: { posted(): readonly Posted[]; receive(message: unknown): Promise<void> };
  service: {
    list(): Promise<{ id: string; name?: string; workspaceAccess: string }[]>;
    sandbox(id: string): Promise<{ exec(request: object): Promise<{ stdout: string }> }>;
  };
}

async function until<T>(probe: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

suite('Sandbox panel', () => {
  let api: Api;
  suiteSetup(async () => {
    api = (await vscode.extensions.getExtension('agent-sandbox.agent-sandbox')!.activate()) as Api;
  });
  suiteTeardown(async () => {
    await setWorkspaceAccess('none');
  });

  test('opens from its command and shows a real session with live stats', async () => {
    await setWorkspaceAccess('ro');
    await vscode.commands.executeCommand('agentSandbox.openSession', { session: 'panel-test', runtime: 'bash' });
    await vscode.commands.executeCommand('agentSandbox.showPanel');
    const withSession = await until(
      () =>
        [...api.panel.posted()]
          .reverse()
          .find(
            (message) =>
              (message.type === 'state' || message.type === 'sessions') &&
              message.sessions?.some((session) => session.sandboxId === 'panel-test'),
          ),
      'the panel to show the session',
    );
    const session = withSession.sessions!.find((candidate) => candidate.sandboxId === 'panel-test')!;
    assert.equal(session.workspaceAccess, 'ro');
    assert.equal(
      api.panel.posted().some((message) => message.type === 'state' && message.engine?.state === 'connected'),
      true,
    );
    const stats = await until(
      () => api.panel.posted().find((message) => message.type === 'stats' && message.stats?.id === session.id),
      'live stats of the session',
    );
    assert.ok(stats.stats!.memoryBytes > 0);
  });

  test('changing workspace access from ro to rw recreates the container with a read-write mount', async function () {
    this.timeout(90_000);
    const before = (await api.service.list()).find((session) => session.name === 'panel-test')!;
    assert.equal(before.workspaceAccess, 'ro');
    const received = api.panel.receive({ type: 'setAccess', sandboxId: 'panel-test', access: 'rw' });
    assert.match(await clickDialogButton('Recreate'), /workspace access "rw"/);
    await received;
    const result = [...api.panel.posted()].reverse().find((message) => message.type === 'result');
    assert.equal(result?.ok, true, result?.message);
    const after = (await api.service.list()).find((session) => session.name === 'panel-test')!;
    assert.notEqual(after.id, before.id, 'a new container');
    assert.equal(after.workspaceAccess, 'rw');
    // The suite runs as root here, so the sandbox runs as uid 1000: let it write the test folder, as
    // it could write a folder of its own user.
    fs.chmodSync(vscode.workspace.workspaceFolders![0]!.uri.fsPath, 0o777);
    const sandbox = await api.service.sandbox('panel-test');
    const mount = await sandbox.exec({
      command:
        'grep " /workspace " /proc/mounts; touch /workspace/.panel-probe && echo writable && rm /workspace/.panel-probe',
    });
    assert.match(mount.stdout, /\/workspace \S+ rw[,\s]/);
    assert.match(mount.stdout, /writable/);
  });

  test('refuses a malformed message from the webview', async () => {
    const count = api.panel.posted().length;
    await api.panel.receive({ type: 'setAccess', sandboxId: 'panel-test', access: 'everything' });
    await api.panel.receive({ type: 'launchMissiles' });
    assert.equal(api.panel.posted().length, count, 'nothing happened');
    assert.equal((await api.service.list()).find((session) => session.name === 'panel-test')?.workspaceAccess, 'rw');
  });
});
