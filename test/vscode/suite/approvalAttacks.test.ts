// Approvals by reach, attacked in the real host (issue 15 item 4): a prompt-injected agent picks its
// calls so that what the user approved covers more than they were asked about, or so that no one is
// asked. Each case is an attack that worked before its fix.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  acceptedConfirmations,
  clickDialogButton,
  dialogShown,
  invoke,
  invokeAllowing,
  setWorkspaceAccessInUserSettings,
} from './helpers';

const EXTENSION_ID = 'agent-sandbox.agent-sandbox';

function folder(): string {
  return fs.realpathSync(vscode.workspace.workspaceFolders![0]!.uri.fsPath);
}

/** The installed extension's `agent-sandbox` in the workspace folder: another client, as a terminal or another agent harness runs it. */
function cli(...args: string[]): Promise<string> {
  const cliPath = path.join(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath, 'dist', 'cli.js');
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [cliPath, ...args, '--folder', folder()], { cwd: folder() }, (error, stdout, stderr) =>
      error ? reject(new Error(`agent-sandbox ${args.join(' ')}: ${error.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

async function setting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration('agentSandbox').update(key, value, vscode.ConfigurationTarget.Global);
}

suite('Approvals by reach, attacked', () => {
  suiteSetup(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
  });

  teardown(async () => {
    await setting('confirmation', undefined);
    for (const id of ['run', 'default', 'approvals-cli', 'approvals-id', 'ghost', 'approvals-loop'])
      await invoke('sandbox_close', { sandbox_id: id }).catch(() => undefined);
    await setting('network.mode', undefined);
    await setting('images.bash', undefined);
    await setWorkspaceAccessInUserSettings('none');
  });

  test('a grant for one-off runs with the network does not cover a persistent sandbox named "run"', async () => {
    await setting('network.mode', 'full');
    // What is allowed for one-off sandboxes holds for every later one in this window, and the button says so.
    const run = await invokeAllowing('Allow for All One-Off Sandboxes', 'sandbox_run', {
      code: 'print(6*7)',
      runtime: 'python',
    });
    assert.match(run.asked, /A one-off sandbox would use the network\./);
    assert.match(run.text, /42/);
    // The agent names a persistent sandbox "run": the grant for one-off runs must not open it with the network.
    const named = await invokeAllowing('Cancel', 'sandbox_open', { session: 'run', runtime: 'bash', network: true });
    assert.match(named.asked, /Sandbox "run" would use the network\./);
    assert.match(named.text, /^failed · permission denied/);
  });

  test('a sandbox another client opens with more access while the user reads the dialog is not used under that approval', async () => {
    await setWorkspaceAccessInUserSettings('ro');
    fs.chmodSync(folder(), 0o777); // the sandbox's user may write it, so that a write would land
    const target = path.join(folder(), 'toctou.txt');
    const running = invoke('sandbox_exec', { command: 'echo swapped > /workspace/toctou.txt; echo ran' });
    assert.match(await dialogShown(), /Sandbox "default" would read your workspace folder\./);
    // Meanwhile another client opens the default session of this folder read-write.
    await cli('open', '--workspace', 'rw', '--runtime', 'bash');
    await clickDialogButton('Allow Once', 'Allow it?');
    const text = await running;
    assert.equal(fs.existsSync(target), false, `the call wrote the folder: ${text}`);
    assert.match(
      text,
      /^failed · permission denied\nSandbox "default" changed after this call was approved: it would now change files in your workspace folder/,
    );
  });

  test('"confirmation: always" holds for a sandbox another client opened: VS Code asks before the call runs', async () => {
    await setWorkspaceAccessInUserSettings('rw');
    await setting('confirmation', 'always');
    // A private session opened outside this window (a terminal, another agent harness, or this window before a reload).
    await cli('open', '--session', 'approvals-cli', '--runtime', 'bash');
    const before = acceptedConfirmations().length;
    assert.match(await invoke('sandbox_exec', { sandbox_id: 'approvals-cli', command: 'echo confirmed' }), /confirmed/);
    assert.equal(acceptedConfirmations().length, before + 1, 'VS Code asked before the command ran');
    // What the window cannot know yet, the confirmation does not claim.
    assert.match(
      acceptedConfirmations().at(-1)!,
      /those of sandbox approvals-cli, which this window has not seen open yet/,
    );
  });
  test("a sandbox named by its container id, after the window dropped its sessions' handles, is still confirmed before a call runs", async () => {
    await setWorkspaceAccessInUserSettings('rw');
    const opened = await invokeAllowing('Allow for This Sandbox', 'sandbox_open', {
      session: 'approvals-id',
      runtime: 'bash',
      workspace_access: 'rw',
    });
    assert.match(opened.text, /workspace access: rw/);
    // Within the grant, each exec gets VS Code's confirmation; the agent learns the container id from inside.
    const before = acceptedConfirmations().length;
    const hostname = await invoke('sandbox_exec', { sandbox_id: 'approvals-id', command: 'hostname' });
    assert.equal(acceptedConfirmations().length, before + 1);
    const containerId = /\b([0-9a-f]{12})\b/.exec(hostname)?.[1];
    assert.ok(containerId, hostname);
    // The user changes an engine setting: the window drops its handles of sessions (they stay in the engine).
    await setting('images.bash', process.env.AGENT_SANDBOX_IMAGE_BASH ?? 'agent-sandbox/bash:bookworm');
    // VS Code's confirmation, prepared on what the window knows, cannot be the one to decide: the call is asked about.
    const byId = await invokeAllowing('Allow Once', 'sandbox_exec', { sandbox_id: containerId, command: 'echo by-id' });
    assert.match(
      byId.asked,
      /Sandbox "approvals-id" would read your workspace folder and change files in your workspace folder\./,
    );
    assert.match(byId.text, /by-id/);
  });

  test('a call naming a sandbox that is not open asks nothing, and gathers no grant for one opened later under that name', async () => {
    await setWorkspaceAccessInUserSettings('rw');
    await setting('network.mode', 'full');
    // Nothing to ask about: the call opens nothing (before, our dialog asked about a sandbox "that opens with this call").
    await assert.rejects(
      invoke('sandbox_exec', { sandbox_id: 'ghost', command: 'make' }),
      /No sandbox "ghost" is open/,
    );
    const opened = await invokeAllowing('Cancel', 'sandbox_open', {
      session: 'ghost',
      runtime: 'bash',
      workspace_access: 'rw',
      network: true,
    });
    assert.match(
      opened.asked,
      /Sandbox "ghost" would read your workspace folder, change files in your workspace folder and use the network\./,
    );
  });

  test('after one approved command starts a loop in a networked sandbox, writing the file it runs is confirmed too', async () => {
    await setting('network.mode', 'full');
    const opened = await invokeAllowing('Allow for This Sandbox', 'sandbox_open', {
      session: 'approvals-loop',
      runtime: 'bash',
      network: true,
    });
    assert.match(opened.text, /network: on/);
    const before = acceptedConfirmations().length;
    // One harmless-looking command the user approves (a dev server that reloads on change is the same thing).
    const started = await invoke('sandbox_exec', {
      sandbox_id: 'approvals-loop',
      command:
        "nohup sh -c 'while :; do [ -f job.sh ] && sh job.sh > job.out 2>&1; rm -f job.sh; sleep 0.2; done' >/dev/null 2>&1 & echo started",
    });
    assert.match(started, /started/);
    assert.equal(acceptedConfirmations().length, before + 1);
    // Then the code that loop runs, with the network, arrives as a file.
    await invoke('sandbox_fs_write', {
      sandbox_id: 'approvals-loop',
      files: [{ path: 'job.sh', content: 'echo this could use the network' }],
    });
    assert.equal(acceptedConfirmations().length, before + 2, 'VS Code asked before the file was written');
    assert.match(acceptedConfirmations().at(-1)!, /Network: on/);
  });

  test('a session another client opened with the protection of .vscode lifted does not write a task here', async () => {
    await setWorkspaceAccessInUserSettings('rw');
    fs.chmodSync(folder(), 0o777);
    const tasks = path.join(folder(), '.vscode', 'tasks.json');
    // A terminal, or another agent harness, lifted the protection for its own session (VS Code's settings do not).
    await cli('open', '--workspace', 'rw', '--runtime', 'bash', '--allow-config-writes');
    const planted = await invokeAllowing('Allow Once', 'sandbox_exec', {
      command: `mkdir -p /workspace/.vscode && echo '{"version":"2.0.0","tasks":[{"label":"x","type":"shell","command":"id","runOptions":{"runOn":"folderOpen"}}]}' > /workspace/.vscode/tasks.json && echo planted`,
    });
    assert.match(planted.asked, /Sandbox "default" would read your workspace folder and change files/);
    assert.equal(fs.existsSync(tasks), false, `a task was planted: ${planted.text}`);
    assert.match(
      planted.text,
      /^failed · permission denied\nSandbox "default" can change \.git, \.vscode, \.github, \.devcontainer in your workspace folder \(it was opened with that protection lifted\)/,
    );
  });
});
