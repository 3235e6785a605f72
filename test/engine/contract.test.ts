/**
 * The contract every engine keeps: exec, files, limits and errors, with the same assertions for the
 * Docker engine and the virtual engine. Where the engines differ, the difference is a declared
 * capability (engine.capabilities) and each side of it is asserted; nothing is skipped.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCompute } from '../../src/core/sessions/compute';
import type { Sandbox, SandboxEngine } from '../../src/core/engine/engine';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { findSession } from '../../src/core/sessions/findSession';
import { openSession } from './namedSession';
import { CONTRACT_ENGINES } from './harness';

for (const contract of CONTRACT_ENGINES) {
  describe(`the engine contract: ${contract.kind}`, function () {
    let engine: SandboxEngine;
    before(async function () {
      await contract.require(this);
      engine = contract.create();
    });
    after(async () => engine?.dispose());

    describe('compute mode', () => {
      it('reports the engine it talks to', async () => {
        const info = await engine.info();
        assert.equal(info.kind, contract.kind);
        assert.equal(engine.kind, contract.kind);
        assert.match(info.version, /^\d+\.\d+/);
        assert.ok(info.endpoint);
      });

      it('runs a Python one-shot', async () => {
        const result = await runCompute(engine, resolveSpec({ runtime: 'python' }), { code: 'print(6 * 7)' });
        assert.equal(result.outcome, 'ok');
        assert.equal(result.exitCode, 0);
        assert.equal(result.stdout, '42\n');
        assert.equal(result.stderr, '');
        assert.ok(result.durationMs > 0);
      });

      it('runs a Node one-shot where the engine has JavaScript, and says to use Docker where it has not', async () => {
        const run = runCompute(engine, resolveSpec({ runtime: 'node' }), { code: 'console.log(6 * 7)' });
        if (engine.capabilities.languages.includes('node')) {
          assert.equal((await run).stdout, '42\n');
        } else {
          await assert.rejects(
            run,
            (error: unknown) =>
              SandboxError.is(error, 'unsupported') &&
              /Node\.js 22\.6/.test(error.message) &&
              /Docker engine/.test(error.hint!),
          );
        }
      });

      it('runs a bash one-shot', async () => {
        const result = await runCompute(engine, resolveSpec({ runtime: 'bash' }), { code: 'echo $((6 * 7))' });
        assert.equal(result.stdout, '42\n');
      });

      it('stages input files and passes stdin', async () => {
        const result = await runCompute(engine, resolveSpec({ runtime: 'python' }), {
          code: 'import sys, csv\nrows = list(csv.reader(open("data/in.csv")))\nprint(len(rows), sys.stdin.read().strip())',
          files: [{ path: 'data/in.csv', content: 'a,b\n1,2\n3,4\n' }],
          stdin: 'from stdin',
        });
        assert.equal(result.stdout, '3 from stdin\n');
      });

      it('reports a failing program with its exit code, stderr and a hint', async () => {
        const result = await runCompute(engine, resolveSpec({ runtime: 'python' }), {
          code: 'import sys\nprint("oops", file=sys.stderr)\nsys.exit(3)',
        });
        assert.equal(result.outcome, 'error');
        assert.equal(result.exitCode, 3);
        assert.equal(result.stderr, 'oops\n');
        assert.match(result.hint!, /exited with code 3/);
      });

      // How soon after the limit the call ends is measured by the benchmark (npm run bench, group "stops").
      it('kills a program at the timeout, keeping what it printed before', async () => {
        const result = await runCompute(engine, resolveSpec({ runtime: 'bash', timeoutSeconds: 2 }), {
          code: 'echo started; sleep 600; echo never',
        });
        assert.equal(result.outcome, 'timeout');
        assert.equal(result.stdout, 'started\n');
        assert.match(result.hint!, /killed after 2 s/);
      });

      it('caps output with a visible marker and still counts it all', async () => {
        const result = await runCompute(
          engine,
          resolveSpec({ runtime: 'python', limits: { maxStdoutBytes: 64 * 1024 } }),
          {
            code: 'import sys\nfor _ in range(3 * 1024):\n    sys.stdout.write("x" * 1023 + "\\n")',
          },
        );
        assert.equal(
          result.outcome,
          'ok',
          `exit ${result.exitCode}; ${result.hint}; stderr: ${result.stderr.slice(-2000)}`,
        );
        assert.equal(result.stdoutTruncated, true);
        assert.equal(result.stdoutBytes, 3 * 1024 * 1024);
        assert.ok(result.stdout.startsWith('x'.repeat(1023)));
        assert.match(result.stdout, /\[stdout truncated: showing the first 64 KiB of 3 MiB\./);
        assert.match(result.hint!, /write large output to a file/);
      });

      it('refuses package installs up front where the engine has none, naming the Docker engine', async () => {
        // Where it has them, packages.test.ts installs from a local mirror.
        if (engine.capabilities.packages) return;
        await assert.rejects(
          runCompute(engine, resolveSpec({ runtime: 'python', pipPackages: ['requests'] }), { code: 'print(1)' }),
          (error: unknown) => SandboxError.is(error, 'unsupported') && /Docker engine/.test(error.hint!),
        );
      });
    });

    describe('code mode', () => {
      let sandbox: Sandbox;
      const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-ws-'));

      before(async () => {
        sandbox = (
          await openSession(engine, resolveSpec({ runtime: 'python', timeoutSeconds: 30 }), {
            name: `contract-${contract.kind}`,
            workspaceFolder: folder,
          })
        ).sandbox;
      });

      after(async () => {
        await sandbox?.close();
        rmSync(folder, { recursive: true, force: true });
      });

      it('round-trips: write a program, run it, read its output file, list, delete', async () => {
        const written = await sandbox.writeFiles([
          {
            path: 'src/main.py',
            content: 'import json\nopen("out/result.json", "w").write(json.dumps({"answer": 6 * 7}))\nprint("done")\n',
          },
          { path: 'out/.keep', content: '' },
        ]);
        assert.deepEqual(
          written.files.map((file) => file.path),
          ['/workspace/src/main.py', '/workspace/out/.keep'],
        );

        const run = await sandbox.exec({ command: 'python3 src/main.py' });
        assert.equal(run.outcome, 'ok', run.stderr);
        assert.equal(run.stdout, 'done\n');

        const read = await sandbox.readFile('out/result.json');
        assert.deepEqual(JSON.parse(read.content), { answer: 42 });
        assert.equal(read.encoding, 'utf8');
        assert.equal(read.truncated, false);

        const listed = await sandbox.listFiles('.', { depth: 2 });
        const paths = listed.entries.map((entry) => `${entry.type}:${entry.path}`);
        assert.deepEqual(paths, [
          'directory:/workspace/out',
          'file:/workspace/out/.keep',
          'file:/workspace/out/result.json',
          'directory:/workspace/src',
          'file:/workspace/src/main.py',
        ]);
        const main = listed.entries.find((entry) => entry.path === '/workspace/src/main.py')!;
        assert.ok(main.size > 50);
        assert.ok(Math.abs(Date.parse(main.mtime) - Date.now()) < 5 * 60_000, main.mtime);

        await sandbox.deletePath('out/result.json');
        await assert.rejects(
          sandbox.deletePath('src'),
          (error: unknown) => SandboxError.is(error, 'is-a-directory') && /recursive: true/.test(error.hint!),
        );
        await sandbox.deletePath('src', { recursive: true });
        assert.deepEqual(
          (await sandbox.listFiles('.', { depth: 3 })).entries.map((entry) => entry.path),
          ['/workspace/out', '/workspace/out/.keep'],
        );
        await assert.rejects(sandbox.readFile('out/result.json'), (error: unknown) =>
          SandboxError.is(error, 'file-not-found'),
        );
      });

      it('keeps files between calls, outside /workspace too', async () => {
        await sandbox.exec({ command: 'echo remembered > /tmp/state' });
        assert.equal((await sandbox.exec({ command: 'cat /tmp/state' })).stdout, 'remembered\n');
      });

      it('runs commands with cwd, env, argv and stdin', async () => {
        await sandbox.writeFiles([{ path: 'dir/x.txt', content: 'x' }]);
        const result = await sandbox.exec({
          cmd: ['sh', '-c', 'pwd; echo "$GREETING"; cat', 'ignored'],
          cwd: 'dir',
          env: { GREETING: 'hello there' },
          stdin: 'from stdin',
        });
        assert.equal(result.stdout, '/workspace/dir\nhello there\nfrom stdin');
        const argv = await sandbox.exec({
          cmd: ['python3', '-c', 'import sys; print(sys.argv[1:])', 'a b', '$HOME', ';ls'],
        });
        assert.equal(argv.stdout, "['a b', '$HOME', ';ls']\n");
      });

      it('reads binary files as base64 and caps large reads', async () => {
        await sandbox.writeFiles([
          { path: 'bin.dat', content: Buffer.from([0, 255, 1, 254]).toString('base64'), encoding: 'base64' },
        ]);
        const binary = await sandbox.readFile('bin.dat');
        assert.equal(binary.encoding, 'base64');
        assert.deepEqual([...Buffer.from(binary.content, 'base64')], [0, 255, 1, 254]);
        await sandbox.exec({ cmd: ['python3', '-c', 'open("big.txt", "w").write("a" * 5000)'] });
        const partial = await sandbox.readFile('big.txt', { maxBytes: 1000 });
        assert.equal(partial.content.length, 1000);
        assert.equal(partial.size, 5000);
        assert.equal(partial.truncated, true);
      });

      it('reads a file part by part from an offset, also when a part starts inside a character', async () => {
        const text = `${'é'.repeat(1500)}end`; // 3,003 bytes, two per é
        await sandbox.writeFiles([{ path: 'parts.txt', content: text }]);
        const parts: Buffer[] = [];
        for (let offset = 0; offset < 3003; offset += 1001) {
          const part = await sandbox.readFile('parts.txt', { offset, maxBytes: 1001, encoding: 'base64' });
          assert.equal(part.offset, offset);
          assert.equal(part.size, 3003);
          assert.equal(part.truncated, offset + 1001 < 3003, `truncated at ${offset}`);
          parts.push(Buffer.from(part.content, 'base64'));
        }
        assert.equal(Buffer.concat(parts).toString('utf8'), text);
        // 1001 is odd: the second part starts in the middle of an é, and is still read as text.
        const middle = await sandbox.readFile('parts.txt', { offset: 1001, maxBytes: 1001 });
        assert.equal(middle.encoding, 'utf8');
        const past = await sandbox.readFile('parts.txt', { offset: 5000 });
        assert.equal(past.content, '');
        assert.equal(past.truncated, false);
      });

      it('kills a timed-out command and everything it started, and stays usable', async () => {
        const result = await sandbox.exec({ command: 'sleep 600 & sleep 601; echo never', timeoutSeconds: 1 });
        assert.equal(result.outcome, 'timeout');
        const after = await sandbox.exec({ command: 'pgrep -f "sleep 60[01]" || echo none' });
        assert.equal(after.stdout, 'none\n');
      });

      it('stops a command when the caller cancels', async () => {
        const controller = new AbortController();
        setTimeout(() => controller.abort(new Error('the user pressed stop')), 500);
        const result = await sandbox.exec({ command: 'sleep 602' }, controller.signal);
        assert.equal(result.outcome, 'cancelled');
        assert.equal((await sandbox.exec({ command: 'pgrep -f "sleep 60[2]" || echo none' })).stdout, 'none\n');
      });

      it('refuses paths outside /workspace in every file operation', async () => {
        for (const path of ['../etc/passwd', '/etc/passwd', 'a/../../etc/shadow']) {
          const outside = (error: unknown) => SandboxError.is(error, 'path-outside-workspace');
          await assert.rejects(sandbox.readFile(path), outside);
          await assert.rejects(sandbox.writeFiles([{ path, content: 'x' }]), outside);
          await assert.rejects(sandbox.listFiles(path), outside);
          await assert.rejects(sandbox.deletePath(path), outside);
        }
      });

      it('does not follow a symbolic link out of /workspace', async () => {
        await sandbox.exec({
          command: 'ln -sfn /etc /workspace/etc-link && ln -sfn /etc/hostname /workspace/host-link',
        });
        const outside = (error: unknown) => SandboxError.is(error, 'path-outside-workspace');
        await assert.rejects(sandbox.readFile('host-link'), outside);
        await assert.rejects(sandbox.readFile('etc-link/passwd'), outside);
        await assert.rejects(sandbox.writeFiles([{ path: 'etc-link/evil', content: 'x' }]), outside);
        await assert.rejects(sandbox.listFiles('etc-link'), outside);
        // Deleting the link removes the link, not what it points to.
        await sandbox.deletePath('etc-link');
        assert.equal((await sandbox.exec({ command: 'test -d /etc && echo still-there' })).stdout, 'still-there\n');
      });

      it('is found again by name: from another engine instance where sessions persist, within this one where they do not', async () => {
        await sandbox.exec({ command: 'echo remembered > /tmp/state' });
        const other = contract.create();
        try {
          if (!engine.capabilities.persistentSessions) {
            assert.equal(
              await findSession(other, folder, `contract-${contract.kind}`),
              undefined,
              "another instance (another process) does not see this process's sessions",
            );
          }
          const finder = engine.capabilities.persistentSessions ? other : engine;
          const found = await findSession(finder, folder, `contract-${contract.kind}`);
          assert.equal(found?.id, sandbox.info.id);
          assert.equal(found?.spec.timeoutSeconds, 30);
          const again = await openSession(finder, resolveSpec({ runtime: 'python' }), {
            name: `contract-${contract.kind}`,
            workspaceFolder: folder,
          });
          assert.equal(again.created, false);
          assert.equal((await again.sandbox.exec({ command: 'cat /tmp/state' })).stdout, 'remembered\n');
        } finally {
          await other.dispose();
        }
      });

      it('says the session is gone once it was closed', async () => {
        const doomed = (
          await openSession(engine, resolveSpec({ runtime: 'bash' }), {
            name: `contract-doomed-${contract.kind}`,
            workspaceFolder: folder,
          })
        ).sandbox;
        await engine.remove(doomed.info.id);
        await assert.rejects(engine.attach(doomed.info.id), (error: unknown) =>
          SandboxError.is(error, 'session-not-found'),
        );
        assert.deepEqual(
          (await engine.list({ name: `contract-doomed-${contract.kind}`, workspaceFolder: folder })).map(
            (session) => session.id,
          ),
          [],
        );
      });
    });

    describe('with the workspace mounted', () => {
      const hostFolder = mkdtempSync(join(tmpdir(), 'agent-sandbox-mount-'));
      before(() => {
        writeFileSync(join(hostFolder, 'notes.txt'), 'from the host\n');
        chmodSync(hostFolder, 0o777);
      });
      after(() => rmSync(hostFolder, { recursive: true, force: true }));

      it('reads but never writes a read-only workspace, and says how to get write access', async () => {
        const ro = (
          await openSession(engine, resolveSpec({ runtime: 'bash', workspaceAccess: 'ro' }), {
            name: `contract-ro-${contract.kind}`,
            workspaceFolder: hostFolder,
          })
        ).sandbox;
        try {
          assert.equal((await ro.readFile('notes.txt')).content, 'from the host\n');
          await assert.rejects(
            ro.writeFiles([{ path: 'new.txt', content: 'x' }]),
            (error: unknown) => SandboxError.is(error, 'read-only') && /read-write workspace access/.test(error.hint!),
          );
          const shell = await ro.exec({ command: 'echo x > /workspace/new.txt' });
          if (engine.capabilities.isolation === 'container') {
            // A read-only mount: the write fails.
            assert.equal(shell.outcome, 'error');
            assert.match(shell.stderr, /Read-only file system/);
          } else {
            // An overlay: the write lands in the session's memory and never in the folder.
            assert.equal(shell.outcome, 'ok', shell.stderr);
            assert.equal((await ro.exec({ command: 'cat /workspace/new.txt' })).stdout, 'x\n');
          }
          assert.equal(existsSync(join(hostFolder, 'new.txt')), false, 'the host folder never changes');
          assert.equal(
            (await ro.exec({ command: 'echo ok > /tmp/t && echo ok > ~/t && cat /tmp/t ~/t' })).stdout,
            'ok\nok\n',
          );
        } finally {
          await ro.close();
        }
      });

      it('writes through to the host folder with read-write access', async () => {
        const rw = (
          await openSession(engine, resolveSpec({ runtime: 'bash', workspaceAccess: 'rw' }), {
            name: `contract-rw-${contract.kind}`,
            workspaceFolder: hostFolder,
          })
        ).sandbox;
        try {
          await rw.writeFiles([{ path: 'from-sandbox.txt', content: 'hello host\n' }]);
          assert.equal(readFileSync(join(hostFolder, 'from-sandbox.txt'), 'utf8'), 'hello host\n');
        } finally {
          await rw.close();
        }
      });
    });
  });
}
