// The language-model tools as Copilot calls them, through vscode.lm.invokeTool, against the real engine.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { invoke } from './helpers';

const EXTENSION_ID = 'agent-sandbox.agent-sandbox';
const TOOLS = [
  'sandbox_run',
  'sandbox_open',
  'sandbox_exec',
  'sandbox_fs_write',
  'sandbox_fs_read',
  'sandbox_fs_list',
  'sandbox_fs_delete',
  'sandbox_stage_file',
  'sandbox_publish_file',
  'sandbox_close',
];

suite('Language-model tools', () => {
  suiteSetup(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('agentSandbox.closeAllSessions', 'confirmed');
  });

  test('every tool is registered with the schema of package.json', () => {
    const manifest = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON.contributes.languageModelTools as {
      name: string;
      inputSchema: object;
    }[];
    for (const name of TOOLS) {
      const tool = vscode.lm.tools.find((candidate) => candidate.name === name);
      assert.ok(tool, `${name} is not in vscode.lm.tools`);
      assert.deepEqual(tool.inputSchema, manifest.find((entry) => entry.name === name)!.inputSchema);
      assert.ok(tool.description.length > 50, `${name} has a model description`);
    }
  });

  test('sandbox_run returns 42 from Python', async () => {
    const text = await invoke('sandbox_run', { code: 'print(6 * 7)' });
    assert.match(text, /exit code 0/);
    assert.match(text, /\b42\b/);
  });

  test('a session round trip: open, write, exec, read, list, delete, close', async () => {
    const opened = await invoke('sandbox_open', { session: 'tools-test', runtime: 'python' });
    assert.match(opened, /tools-test/);
    await invoke('sandbox_fs_write', {
      sandbox_id: 'tools-test',
      files: [{ path: 'src/main.py', content: 'open("out.txt", "w").write(str(6 * 7))\nprint("wrote")\n' }],
    });
    const exec = await invoke('sandbox_exec', { sandbox_id: 'tools-test', command: 'python3 src/main.py' });
    assert.match(exec, /exit code 0/);
    assert.match(exec, /wrote/);
    const read = await invoke('sandbox_fs_read', { sandbox_id: 'tools-test', path: 'out.txt' });
    assert.match(read, /\b42\b/);
    const listed = await invoke('sandbox_fs_list', { sandbox_id: 'tools-test', depth: 2 });
    assert.match(listed, /out\.txt/);
    assert.match(listed, /main\.py/);
    await invoke('sandbox_fs_delete', { sandbox_id: 'tools-test', path: 'out.txt' });
    assert.doesNotMatch(await invoke('sandbox_fs_list', { sandbox_id: 'tools-test' }), /out\.txt/);
    await invoke('sandbox_close', { sandbox_id: 'tools-test' });
    await assert.rejects(
      invoke('sandbox_exec', { sandbox_id: 'tools-test', command: 'true' }),
      /No sandbox "tools-test"/,
    );
  });

  test('without sandbox_id the default session is opened on first use and kept', async () => {
    await invoke('sandbox_exec', { command: 'echo kept > /tmp/state' });
    assert.match(await invoke('sandbox_exec', { cmd: ['cat', '/tmp/state'] }), /kept/);
  });

  // How soon it stops is measured by the benchmark (npm run bench, group "stops").
  test('a cancelled sleep 600 stops, and the session stays usable', async () => {
    await invoke('sandbox_open', { session: 'cancel-test', runtime: 'bash' });
    const source = new vscode.CancellationTokenSource();
    setTimeout(() => source.cancel(), 500);
    const outcome = await invoke(
      'sandbox_exec',
      { sandbox_id: 'cancel-test', command: 'sleep 600' },
      source.token,
    ).then(
      (text) => text,
      (error: Error) => error.message,
    );
    assert.match(outcome, /cancel/i);
    const after = await invoke('sandbox_exec', {
      sandbox_id: 'cancel-test',
      command: 'pgrep -f "sleep 60[0]" || echo none',
    });
    assert.match(after, /none/);
  });

  test('a malformed input is an error that names the bad field', async () => {
    await assert.rejects(
      invoke('sandbox_exec', { command: 42 }),
      (error: Error) => /command/.test(error.message) && /expected string/i.test(error.message),
    );
    await assert.rejects(invoke('sandbox_exec', { command: 'ls', cmd: ['ls'] }), /exactly one of command/);
    await assert.rejects(invoke('sandbox_fs_read', {}), /path/);
    await assert.rejects(invoke('sandbox_run', { code: 'print(1)', runtime: 'cobol' }), /runtime/);
  });

  test('a failing command returns its exit code, stderr and what to do next', async () => {
    const text = await invoke('sandbox_run', { runtime: 'bash', code: 'echo broken >&2; exit 3' });
    assert.match(text, /exit code 3/);
    assert.match(text, /broken/);
    assert.match(text, /Next:/);
  });

  test('a path outside /workspace is refused with the reason', async () => {
    await assert.rejects(invoke('sandbox_fs_read', { path: '../etc/passwd' }), /outside \/workspace/);
  });

  test('the workspace is not visible by default', async () => {
    const folder = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
    const visible = fs.readdirSync(folder)[0];
    const text = await invoke('sandbox_run', {
      runtime: 'bash',
      code: `ls /workspace; test -e /workspace/${visible ?? 'x'} && echo visible || echo hidden`,
    });
    assert.match(text, /hidden/, path.join(folder, visible ?? ''));
  });
});
