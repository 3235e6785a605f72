// The Sandbox panel in the real host, as the user sees it (the runner reads the webview's accessibility
// tree in the browser): it opens from its command, shows a real session with live figures, and its
// workspace-access dropdown, used with the mouse, really recreates the container with the new mount.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { clickDialogButton, look, lookUntil, setWorkspaceAccess } from './helpers';

interface Api {
  panel: { receive(message: unknown): Promise<void> };
  service: {
    list(): Promise<{ id: string; name?: string; workspaceAccess: string }[]>;
    sandbox(id: string): Promise<{ exec(request: object): Promise<{ stdout: string }> }>;
  };
}

/** The lines of the accessibility tree inside the session's card. */
function cardOf(aria: string, session: string): string {
  const lines = aria.split('\n');
  const start = lines.findIndex((line) => line.includes(`listitem "Session ${session}, `));
  assert.ok(start >= 0, `no card for ${session} in:\n${aria}`);
  const indent = lines[start]!.search(/\S/);
  const end = lines.findIndex((line, index) => index > start && line.search(/\S/) <= indent);
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

suite('Sandbox panel', () => {
  let api: Api;
  suiteSetup(async () => {
    api = (await vscode.extensions.getExtension('agent-sandbox.agent-sandbox')!.activate()) as Api;
  });
  suiteTeardown(async () => {
    await setWorkspaceAccess('none');
  });

  test('opens from its command and shows a real session with its live CPU and memory', async () => {
    await setWorkspaceAccess('ro');
    await vscode.commands.executeCommand('agentSandbox.openSession', { session: 'panel-test', runtime: 'bash' });
    await vscode.commands.executeCommand('agentSandbox.showPanel');
    const seen = await lookUntil('panel', /listitem "Session panel-test, (running|idle)"/, 'the session in the panel');
    assert.match(seen.aria, /region "Engine"[\s\S]*status: connected/);
    const card = cardOf(seen.aria, 'panel-test');
    assert.match(card, /workspace: read-only/);
    assert.match(card, /network: off/);
    assert.match(card, /combobox "Workspace access of panel-test"[^\n]*: ro/);
    assert.match(card, /button "Open a terminal in panel-test"/);
    // Live figures replace the placeholders ("- of 512 MiB") once the engine's stats arrive.
    const live = await lookUntil('panel', /meter "Memory: [\d.]+ (bytes|KiB|MiB) of 512 MiB"/, 'live memory use');
    assert.match(cardOf(live.aria, 'panel-test'), /meter "CPU: \d+% of 1 CPU"/);
  });

  test('choosing rw in the access dropdown asks, then recreates the container with a read-write mount', async function () {
    this.timeout(90_000);
    const before = (await api.service.list()).find((session) => session.name === 'panel-test')!;
    assert.equal(before.workspaceAccess, 'ro');
    await look('panel', { choose: { combobox: 'Workspace access of panel-test', option: 'rw' } });
    assert.match(await clickDialogButton('Recreate'), /workspace access "rw"/);
    const seen = await lookUntil(
      'panel',
      /Session panel-test now has workspace access "rw"/,
      'the answer in the panel',
    );
    assert.match(cardOf(seen.aria, 'panel-test'), /workspace: read-write/);
    assert.match(cardOf(seen.aria, 'panel-test'), /combobox "Workspace access of panel-test"[^\n]*: rw/);
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

  test('refuses a malformed message from the webview: nothing changes on screen or in the engine', async () => {
    const before = await look('panel');
    await api.panel.receive({ type: 'setAccess', sandboxId: 'panel-test', access: 'everything' });
    await api.panel.receive({ type: 'launchMissiles' });
    await api.panel.receive({ type: 'closeSession' });
    const after = await look('panel');
    assert.match(cardOf(after.aria, 'panel-test'), /workspace: read-write/);
    const toast = (aria: string) =>
      aria
        .split('\n')
        .filter((line) => /^\s*- status:/.test(line))
        .at(-1);
    assert.equal(toast(after.aria), toast(before.aria), 'no new answer in the panel');
    assert.equal((await api.service.list()).find((session) => session.name === 'panel-test')?.workspaceAccess, 'rw');
  });
});
