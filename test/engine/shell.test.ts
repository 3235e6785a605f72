import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox, ShellSession } from '../../src/core/engine/engine';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { openSession } from './namedSession';
import type { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { requireEngine, testEngine } from './harness';

/** What a terminal shows so far, and a way to wait until it shows something. */
class Screen {
  text = '';
  private waiters: (() => void)[] = [];

  constructor(shell: ShellSession) {
    shell.onData((data) => {
      this.text += data;
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** Resolves with the first match after `from`; fails with the screen's content when it never comes. */
  async waitFor(pattern: RegExp, from = 0, ms = 15_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + ms;
    for (;;) {
      // bash turns bracketed paste off when a line is entered; that sequence is no output of the command.
      const match = pattern.exec(this.text.slice(from).replace(/^\x1b\[\?2004l\r/, ''));
      if (match) return match;
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`the terminal never showed ${pattern}; it shows:\n${JSON.stringify(this.text)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
  }

  /** Types a line and waits for what it prints after the echoed line. */
  async run(shell: ShellSession, line: string, expected: RegExp): Promise<RegExpExecArray> {
    await this.waitFor(/[$#] $/, this.text.length - 2);
    const from = this.text.length;
    shell.write(`${line}\r`);
    const echoed = await this.waitFor(/\r\n/, from);
    return this.waitFor(expected, from + echoed.index + 2);
  }
}

function exitOf(shell: ShellSession): Promise<number | null> {
  return new Promise((resolve) => shell.onExit(resolve));
}

describe('an interactive shell in a session', function () {
  let engine: DockerEngine;
  let sandbox: Sandbox;
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-ws-'));

  before(async function () {
    await requireEngine(this);
    engine = testEngine();
    sandbox = (
      await openSession(engine, resolveSpec({ runtime: 'bash' }), { name: 'shell-test', workspaceFolder: folder })
    ).sandbox;
  });

  after(async () => {
    await sandbox?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('runs what is typed, as a non-root user with a "$" prompt, in /workspace with a colour terminal', async () => {
    const shell = await sandbox.openShell({ env: { GREETING: 'hello there' } });
    try {
      const screen = new Screen(shell);
      await screen.run(shell, 'echo $((6*7))', /^42\r\n/);
      const uid = await screen.run(shell, 'id -u', /^(\d+)\r\n/);
      assert.notEqual(uid[1], '0');
      await screen.waitFor(/\$ $/, screen.text.length - 2);
      await screen.run(shell, 'echo "$PWD|$TERM|$GREETING"', /^\/workspace\|xterm-256color\|hello there\r\n/);
    } finally {
      await shell.close();
    }
  });

  it('starts at the size it was asked for and follows resizes', async () => {
    const shell = await sandbox.openShell({ cols: 120, rows: 30 });
    try {
      const screen = new Screen(shell);
      await screen.run(shell, 'stty size', /^30 120\r\n/);
      await shell.resize(100, 40);
      await screen.run(shell, 'stty size', /^40 100\r\n/);
    } finally {
      await shell.close();
    }
  });

  it('keeps multi-byte characters intact however the output is split', async () => {
    const shell = await sandbox.openShell();
    try {
      const screen = new Screen(shell);
      await screen.run(shell, "printf '\\u00e9\\u20ac\\n'", /^é€\r\n/);
      // 50 kB of two- and three-byte characters, written at once, arrives in chunks split inside characters.
      const many = await screen.run(
        shell,
        's=$(printf \'\\u00e9\\u20ac%.0s\' $(seq 10000)); echo "$s"; echo end',
        /^([^\r]*)\r\nend\r\n/,
      );
      assert.equal(many[1], 'é€'.repeat(10_000));
      assert.ok(!screen.text.includes('\uFFFD'), 'a character was broken');
    } finally {
      await shell.close();
    }
  });

  it('reports the exit code when the shell exits', async () => {
    const shell = await sandbox.openShell();
    const exited = exitOf(shell);
    const screen = new Screen(shell);
    await screen.waitFor(/\$ $/);
    shell.write('exit 3\r');
    assert.equal(await exited, 3);
    // A listener added after the exit still hears it, and a late resize or close is harmless.
    assert.equal(await exitOf(shell), 3);
    await shell.resize(90, 20);
    await shell.close();
  });

  it('kills the shell and everything it started when closed, even in the background', async () => {
    const shell = await sandbox.openShell();
    const exited = exitOf(shell);
    const screen = new Screen(shell);
    await screen.waitFor(/\$ $/);
    shell.write('nohup sleep 600 >/dev/null 2>&1 & sleep 601\r');
    // The [0] keeps pgrep from finding the shell whose command line holds the pattern.
    let running = '';
    for (let attempt = 0; attempt < 100 && running !== '2\n'; attempt++)
      running = (await sandbox.exec({ command: 'pgrep -fc "sleep 60[01]"' })).stdout;
    assert.equal(running, '2\n');
    await shell.close();
    assert.notEqual(await exited, 0);
    assert.equal((await sandbox.exec({ command: 'pgrep -f "sleep 60[01]" || echo none' })).stdout, 'none\n');
  });

  it('runs a given command instead of the shell', async () => {
    const shell = await sandbox.openShell({ command: ['sh', '-c', 'test -t 0 && echo on-a-tty; exit 5'] });
    const exited = exitOf(shell);
    const screen = new Screen(shell);
    await screen.waitFor(/on-a-tty\r\n/);
    assert.equal(await exited, 5);
  });

  it('says the session died when its container is gone', async () => {
    const doomed = (
      await openSession(engine, resolveSpec({ runtime: 'bash' }), {
        name: 'shell-test-doomed',
        workspaceFolder: folder,
      })
    ).sandbox;
    try {
      await engine.docker.getContainer(doomed.info.id).kill({ signal: 'SIGKILL' });
      await assert.rejects(
        doomed.openShell(),
        (error: unknown) =>
          SandboxError.is(error, 'session-dead') &&
          /killed \(SIGKILL\)/.test(error.message) &&
          /open a new session/i.test(error.hint!),
      );
    } finally {
      await doomed.close();
    }
  });
});
