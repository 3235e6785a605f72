/**
 * The virtual engine where it differs from a container or has its own risks: runaway loops, Python
 * offline, the workspace folder as the only host files it reaches, what it refuses, its terminal.
 * (The behaviour it shares with Docker is in contract.test.ts.)
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCompute } from '../../src/core/sessions/compute';
import type { ShellSession } from '../../src/core/engine/engine';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { openSession } from './namedSession';
import { VirtualEngine } from '../../src/engines/virtual/virtualEngine';

describe('the virtual engine', function () {
  const engine = new VirtualEngine();
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-virtual-'));
  after(async () => {
    await engine.dispose();
    rmSync(folder, { recursive: true, force: true });
  });

  it('declares what it is: in-process, no processes, packages, full network or memory kill (an allowlist for curl and wget), sessions of this process', async () => {
    const info = await engine.info();
    assert.equal(info.kind, 'virtual');
    assert.match(info.endpoint, /in-process/);
    assert.deepEqual(
      { ...engine.capabilities, languages: undefined },
      {
        isolation: 'in-process',
        processes: false,
        packages: false,
        network: false,
        networkAllowlist: true,
        languages: undefined,
        memoryLimit: false,
        persistentSessions: false,
      },
    );
    assert.ok(engine.capabilities.languages.includes('python') && engine.capabilities.languages.includes('bash'));
    assert.equal(new VirtualEngine({ nodeVersion: '20.19.0' }).capabilities.languages.includes('node'), false);
    assert.equal(new VirtualEngine({ nodeVersion: '22.6.0' }).capabilities.languages.includes('node'), true);
  });

  it('refuses what it cannot run, up front, naming the Docker engine', async () => {
    const old = new VirtualEngine({ nodeVersion: '20.19.0' });
    await assert.rejects(
      runCompute(old, resolveSpec({ runtime: 'node' }), { code: 'console.log(1)' }),
      (error: unknown) =>
        SandboxError.is(error, 'unsupported') &&
        /Node\.js 22\.6/.test(error.message) &&
        /Docker engine/.test(error.hint!),
    );
    await assert.rejects(
      engine.open(resolveSpec({ mode: 'code', runtime: 'linux' })),
      (error: unknown) => SandboxError.is(error, 'unsupported') && /Docker engine/.test(error.hint!),
    );
    await assert.rejects(
      engine.open(resolveSpec({ mode: 'code', npmPackages: ['left-pad'] })),
      (error: unknown) => SandboxError.is(error, 'unsupported') && /left-pad/.test(error.message),
    );
  });

  describe('stops a runaway loop at the time limit', () => {
    it('a bash loop, and the session lives on', async () => {
      const compute = await runCompute(engine, resolveSpec({ runtime: 'bash', timeoutSeconds: 1 }), {
        code: 'while true; do :; done',
      });
      assert.equal(compute.outcome, 'timeout');
      assert.match(compute.hint!, /killed after 1 s/);
      const { sandbox } = await openSession(engine, resolveSpec({ runtime: 'bash' }), {
        name: 'virtual-loop',
        workspaceFolder: folder,
      });
      try {
        const looped = await sandbox.exec({ command: 'echo before; while true; do :; done', timeoutSeconds: 1 });
        assert.equal(looped.outcome, 'timeout');
        assert.equal(looped.stdout, 'before\n');
        assert.equal((await sandbox.exec({ command: 'echo alive' })).stdout, 'alive\n');
      } finally {
        await sandbox.close();
      }
    });

    it('a Python loop', async () => {
      const result = await runCompute(engine, resolveSpec({ runtime: 'python', timeoutSeconds: 2 }), {
        code: 'while True: pass',
      });
      assert.equal(result.outcome, 'timeout');
      assert.match(result.hint!, /killed after 2 s/);
    });

    it('a command that ignores its deadline costs its session, which says so', async () => {
      // A worker stuck inside one command, as a loop inside a single just-bash command would be.
      const stuckEngine = new VirtualEngine({
        location: {
          entry: join(__dirname, 'fixtures', 'stuckWorker.cjs'),
          typescript: false,
          packageJson: join(__dirname, '..', '..', 'package.json'),
        },
      });
      try {
        const { sandbox } = await openSession(stuckEngine, resolveSpec({ runtime: 'bash' }), {
          name: 'virtual-stuck',
          workspaceFolder: folder,
        });
        const stuck = await sandbox.exec({ command: 'anything', timeoutSeconds: 1 });
        assert.equal(stuck.outcome, 'timeout');
        assert.match(
          stuck.notices.join('\n'),
          /virtual sandbox was stopped because a command ran past its time limit and could not be stopped/,
        );
        await assert.rejects(
          sandbox.exec({ command: 'echo hi' }),
          (error: unknown) => SandboxError.is(error, 'session-dead') && /could not be stopped/.test(error.message),
        );
        assert.equal((await stuckEngine.list({ name: 'virtual-stuck' }))[0]?.state, 'stopped');
        const cancelled = (
          await openSession(stuckEngine, resolveSpec({ runtime: 'bash' }), {
            name: 'virtual-stuck-2',
            workspaceFolder: folder,
          })
        ).sandbox;
        const controller = new AbortController();
        setTimeout(() => controller.abort(new Error('stop')), 200);
        assert.equal(
          (await cancelled.exec({ command: 'anything', timeoutSeconds: 60 }, controller.signal)).outcome,
          'cancelled',
        );
      } finally {
        await stuckEngine.dispose();
      }
    });
  });

  describe('Python, offline', () => {
    it('runs one-liners from the standard library', async () => {
      const result = await runCompute(engine, resolveSpec({ runtime: 'python' }), {
        code: 'import json, math, statistics\nprint(json.dumps({"sqrt": math.isqrt(1764), "mean": statistics.mean([40, 44])}))',
      });
      assert.equal(result.stdout, '{"sqrt": 42, "mean": 42}\n', result.stderr);
    });

    it('runs a program of two modules written with the file tools, one importing the other', async () => {
      const { sandbox } = await openSession(engine, resolveSpec({ runtime: 'python' }), {
        name: 'virtual-modules',
        workspaceFolder: folder,
      });
      try {
        await sandbox.writeFiles([
          { path: 'app/answer.py', content: 'def answer():\n    return 6 * 7\n' },
          { path: 'app/main.py', content: 'from answer import answer\nprint(answer())\n' },
        ]);
        const result = await sandbox.exec({ cmd: ['python3', 'main.py'], cwd: 'app' });
        assert.equal(result.stdout, '42\n', result.stderr);
        const asPackage = await sandbox.exec({
          command: 'touch app/__init__.py && python3 -c "from app.answer import answer; print(answer())"',
        });
        assert.equal(asPackage.stdout, '42\n', asPackage.stderr);
      } finally {
        await sandbox.close();
      }
    });

    it('has no network, and says so when network is asked for', async () => {
      const { sandbox } = await openSession(engine, resolveSpec({ runtime: 'python', network: true }), {
        name: 'virtual-net',
        workspaceFolder: folder,
      });
      try {
        assert.equal(sandbox.info.network, false);
        assert.match(sandbox.info.notices.join('\n'), /no network/);
        const python = await sandbox.exec({
          cmd: ['python3', '-c', 'import urllib.request\nurllib.request.urlopen("http://127.0.0.1:9", timeout=2)'],
        });
        assert.equal(python.outcome, 'error');
        const curl = await sandbox.exec({ command: 'curl -s http://127.0.0.1:9' });
        assert.equal(curl.exitCode, 127);
      } finally {
        await sandbox.close();
      }
    });
  });

  describe('reaches only the workspace folder it is given', () => {
    const root = mkdtempSync(join(tmpdir(), 'agent-sandbox-virtual-host-'));
    const workspace = join(root, 'workspace');
    const secret = join(root, 'secret.txt');
    before(() => {
      mkdirSync(join(workspace, 'sub'), { recursive: true });
      writeFileSync(join(workspace, 'notes.txt'), 'from the host\n');
      writeFileSync(secret, 'do not read\n');
      mkdirSync(join(root, 'outside-dir'));
      writeFileSync(join(root, 'outside-dir', 'inner.txt'), 'do not read either\n');
      symlinkSync(secret, join(workspace, 'link-to-secret'));
      symlinkSync(join(root, 'outside-dir'), join(workspace, 'link-to-dir'));
    });
    after(() => rmSync(root, { recursive: true, force: true }));

    const untouched = () => {
      assert.equal(readFileSync(secret, 'utf8'), 'do not read\n');
      assert.deepEqual(readdirSync(root).sort(), ['outside-dir', 'secret.txt', 'workspace']);
      assert.deepEqual(readdirSync(join(root, 'outside-dir')), ['inner.txt']);
    };

    it('with read-write access: the folder changes, nothing outside it can be read or written', async () => {
      const { sandbox } = await openSession(engine, resolveSpec({ runtime: 'python', workspaceAccess: 'rw' }), {
        name: 'virtual-rw',
        workspaceFolder: workspace,
      });
      try {
        const attempts = [
          'cat ../secret.txt',
          `cat ${secret}`,
          'cat link-to-secret',
          'cat link-to-dir/inner.txt',
          'ls ../outside-dir',
          'echo pwned > ../secret.txt',
          `echo pwned > ${secret}`,
          'echo pwned > ../pwned.txt',
          'echo pwned > link-to-secret',
          'echo pwned > link-to-dir/inner.txt',
          'ln -s ../secret.txt new-link && cat new-link',
          'cd .. && cat secret.txt',
          'cp ../secret.txt copied.txt; cat copied.txt',
        ];
        for (const command of attempts) {
          const result = await sandbox.exec({ command });
          assert.doesNotMatch(result.stdout, /do not read/, `${command} read a host file outside the workspace`);
        }
        const python = await sandbox.exec({
          cmd: [
            'python3',
            '-c',
            `for p in ["../secret.txt", "${secret}", "link-to-secret"]:\n    try:\n        print(open(p).read())\n    except Exception as e:\n        print(type(e).__name__)\ntry:\n    open("../pwned-by-python.txt", "w").write("x")\nexcept Exception as e:\n    print(type(e).__name__)`,
          ],
        });
        assert.doesNotMatch(python.stdout, /do not read/, python.stdout);
        for (const path of ['../secret.txt', secret, 'sub/../../secret.txt']) {
          await assert.rejects(sandbox.readFile(path), (error: unknown) =>
            SandboxError.is(error, 'path-outside-workspace'),
          );
          await assert.rejects(sandbox.writeFiles([{ path, content: 'x' }]), (error: unknown) =>
            SandboxError.is(error, 'path-outside-workspace'),
          );
        }
        await assert.rejects(
          sandbox.readFile('link-to-secret'),
          (error: unknown) =>
            SandboxError.is(error) && ['path-outside-workspace', 'file-not-found', 'not-a-file'].includes(error.reason),
        );
        untouched();
        // While inside the folder, the sandbox writes through.
        await sandbox.writeFiles([{ path: 'sub/written.txt', content: 'written\n' }]);
        await sandbox.exec({ command: 'echo by-shell > sub/shell.txt' });
        assert.equal(readFileSync(join(workspace, 'sub', 'written.txt'), 'utf8'), 'written\n');
        assert.equal(readFileSync(join(workspace, 'sub', 'shell.txt'), 'utf8'), 'by-shell\n');
      } finally {
        await sandbox.close();
      }
      untouched();
    });

    it("with read-only access: reads the folder, and every write stays in the session's memory", async () => {
      const before = readdirSync(workspace).sort();
      const { sandbox } = await openSession(engine, resolveSpec({ runtime: 'python', workspaceAccess: 'ro' }), {
        name: 'virtual-ro',
        workspaceFolder: workspace,
      });
      try {
        assert.match(sandbox.info.notices.join('\n'), /stay in this session's memory/);
        assert.equal((await sandbox.exec({ command: 'cat notes.txt' })).stdout, 'from the host\n');
        await sandbox.exec({ command: 'echo changed > notes.txt; echo new > new.txt; rm -f sub/shell.txt' });
        await sandbox.exec({ cmd: ['python3', '-c', 'open("py.txt", "w").write("x")'] });
        assert.equal((await sandbox.exec({ command: 'cat notes.txt new.txt' })).stdout, 'changed\nnew\n');
        assert.equal(readFileSync(join(workspace, 'notes.txt'), 'utf8'), 'from the host\n');
        assert.deepEqual(readdirSync(workspace).sort(), before);
        assert.equal(readFileSync(join(workspace, 'sub', 'shell.txt'), 'utf8'), 'by-shell\n');
      } finally {
        await sandbox.close();
      }
      untouched();
    });
  });

  describe('sessions', () => {
    it('live in this process: listed and attached here, and say they do not survive a restart', async () => {
      const { sandbox } = await openSession(engine, resolveSpec({ runtime: 'bash' }), {
        name: 'virtual-listed',
        workspaceFolder: folder,
      });
      try {
        assert.match(sandbox.info.notices.join('\n'), /does not survive a restart/);
        assert.equal(sandbox.info.engine, 'virtual');
        const [listed] = await engine.list({ name: 'virtual-listed', workspaceFolder: folder });
        assert.equal(listed?.id, sandbox.info.id);
        assert.equal((await engine.attach(sandbox.info.id)).info.id, sandbox.info.id);
      } finally {
        await sandbox.close();
      }
      await assert.rejects(sandbox.exec({ command: 'echo hi' }), (error: unknown) =>
        SandboxError.is(error, 'session-dead'),
      );
    });

    it('have a terminal: lines run in the session, and the directory carries over', async () => {
      const { sandbox } = await openSession(engine, resolveSpec({ runtime: 'bash' }), {
        name: 'virtual-shell',
        workspaceFolder: folder,
      });
      let shell: ShellSession | undefined;
      try {
        await sandbox.writeFiles([{ path: 'dir/file.txt', content: 'in dir\n' }]);
        shell = await sandbox.openShell();
        let screen = '';
        shell.onData((data) => (screen += data));
        const waitFor = async (pattern: RegExp) => {
          const deadline = Date.now() + 10_000;
          while (!pattern.test(screen)) {
            if (Date.now() > deadline) assert.fail(`the terminal never showed ${pattern}: ${JSON.stringify(screen)}`);
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        };
        await waitFor(/\$ $/);
        shell.write('cd dir\r');
        await waitFor(/sandbox:\/workspace\/dir\$ $/);
        shell.write('cat file.txt\r');
        await waitFor(/in dir\r\n/);
        const exited = new Promise<number | null>((resolve) => shell!.onExit(resolve));
        shell.write('exit 3\r');
        assert.equal(await exited, 3);
      } finally {
        await shell?.close();
        await sandbox.close();
      }
    });
  });
});
