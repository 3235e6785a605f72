// The virtual engine in the real extension host: chosen with agentSandbox.engine, named in every
// tool result and in the status bar (read through the extension's API, and photographed).
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { invoke, lookUntil, screenshot } from './helpers';

const EXTENSION_ID = 'agent-sandbox.agent-sandbox';

interface Api {
  statusText(): string;
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  for (let waited = 0; waited < ms; waited += 100) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`never: ${what}`);
}

/** Asks the runner for a screenshot of the workbench (see screenshots.test.ts). */
suite('Virtual engine', () => {
  let api: Api;
  const config = () => vscode.workspace.getConfiguration('agentSandbox');

  suiteSetup(async () => {
    api = (await vscode.extensions.getExtension(EXTENSION_ID)!.activate()) as Api;
    await config().update('engine', 'virtual', vscode.ConfigurationTarget.Global);
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('agentSandbox.closeAllSessions', 'confirmed');
    await config().update('engine', undefined, vscode.ConfigurationTarget.Global);
  });

  test('sandbox_run returns 42 from Python, naming the virtual engine and what it lacks', async () => {
    const text = await invoke('sandbox_run', { runtime: 'python', code: 'print(6 * 7)' });
    const [first] = text.split('\n');
    assert.match(first!, /exit code 0/, text);
    assert.match(
      first!,
      /virtual \(in-process isolation, no real processes, no package installs, no network, no memory kill\)/,
    );
    assert.match(text, /^42$/m);
    assert.match(text, /Note: Virtual engine: in-process isolation, lighter than a container/);
  });

  test('the status bar says "virtual"', async () => {
    await until(`the status bar names the virtual engine (it shows "${api.statusText()}")`, () =>
      /virtual/.test(api.statusText()),
    );
    assert.match(api.statusText(), /Sandbox \(virtual\): (ready|\d+ sessions?)/);
    // On screen too, not only in the item's text.
    await lookUntil('statusbar', /Sandbox \(virtual\)/, 'the status bar showing the virtual engine');
    await screenshot('status-bar-virtual');
  });

  test('sandbox_open reports the capabilities; a session keeps files between calls', async () => {
    const opened = await invoke('sandbox_open', { session: 'virtual-suite', runtime: 'python' });
    assert.match(opened, /engine virtual/);
    assert.match(opened, /capabilities: engine virtual: isolation by an interpreter inside the editor's process/);
    assert.match(opened, /does not survive a restart/);
    await invoke('sandbox_fs_write', {
      sandbox_id: 'virtual-suite',
      files: [
        { path: 'answer.py', content: 'ANSWER = 6 * 7\n' },
        { path: 'main.py', content: 'from answer import ANSWER\nprint(ANSWER)\n' },
      ],
    });
    const ran = await invoke('sandbox_exec', { sandbox_id: 'virtual-suite', cmd: ['python3', 'main.py'] });
    assert.match(ran, /^42$/m);
    assert.match(ran.split('\n')[0]!, /virtual \(in-process isolation/);
    await invoke('sandbox_close', { sandbox_id: 'virtual-suite' });
  });

  // The installed extension's Python overflowed CPython's 64 KiB C stack into its static data, and
  // what it overwrote moved with the size of argv (its first entry is the worker's path, so the
  // install path's length decided): from this host's install path, every run aborted at its end.
  // Arguments from 1 to 497 bytes, 16 apart, cover each alignment of the stack (cpythonStack.ts).
  test('python3 ends cleanly whatever the size of its arguments', async () => {
    const text = await invoke('sandbox_run', {
      runtime: 'bash',
      code: [
        "printf 'import sys\\nprint(len(sys.argv[1]))\\n' > /tmp/arg_length.py",
        'pad=""',
        'for step in $(seq 1 32); do',
        '  python3 /tmp/arg_length.py "x$pad" || echo "python3 failed with an argument of $((${#pad} + 1)) bytes"',
        '  pad="${pad}xxxxxxxxxxxxxxxx"',
        'done',
      ].join('\n'),
    });
    assert.match(text.split('\n')[0]!, /exit code 0/, text);
    const lengths = Array.from({ length: 32 }, (_, step) => String(1 + 16 * step));
    // Each on a line of its own, nothing between them (the text may end after the last).
    assert.ok(text.includes(`\nstdout:\n${lengths.join('\n')}`), text);
    assert.doesNotMatch(text, /Fatal Python error|Aborted|failed with an argument/, text);
  });

  test('runtime node says what to do where the extension host has no JavaScript for it', async () => {
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    const supported = major > 22 || (major === 22 && minor >= 6);
    if (supported) {
      const text = await invoke('sandbox_run', { runtime: 'node', code: 'console.log(6 * 7)' });
      assert.match(text, /^42$/m);
    } else {
      assert.match(
        await invoke('sandbox_run', { runtime: 'node', code: 'console.log(1)' }),
        /^failed · unsupported\n[\s\S]*Node\.js 22\.6[\s\S]*Docker engine/,
      );
    }
  });
});
