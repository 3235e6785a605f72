import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../../src/core/engine';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/resolveSpec';
import { findSession, openSession } from '../../src/core/sessions';
import type { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { requireEngine, testEngine } from './harness';

describe('code mode against a real engine', function () {
  let engine: DockerEngine;
  let sandbox: Sandbox;
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-ws-'));

  before(async function () {
    await requireEngine(this);
    engine = testEngine();
    sandbox = (await openSession(engine, resolveSpec({ runtime: 'python', timeoutSeconds: 30 }), { name: 'engine-test', workspaceFolder: folder })).sandbox;
  });

  after(async () => {
    await sandbox?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('round-trips: write a program, run it, read its output file, list, delete', async () => {
    const written = await sandbox.writeFiles([
      { path: 'src/main.py', content: 'import json\nopen("out/result.json", "w").write(json.dumps({"answer": 6 * 7}))\nprint("done")\n' },
      { path: 'out/.keep', content: '' },
    ]);
    assert.deepEqual(written.files.map((file) => file.path), ['/workspace/src/main.py', '/workspace/out/.keep']);

    const run = await sandbox.exec({ command: 'python3 src/main.py' });
    assert.equal(run.outcome, 'ok', run.stderr);
    assert.equal(run.stdout, 'done\n');

    const read = await sandbox.readFile('out/result.json');
    assert.deepEqual(JSON.parse(read.content), { answer: 42 });
    assert.equal(read.encoding, 'utf8');
    assert.equal(read.truncated, false);

    const listed = await sandbox.listFiles('.', { depth: 2 });
    const paths = listed.entries.map((entry) => `${entry.type}:${entry.path}`);
    assert.deepEqual(paths, ['directory:/workspace/out', 'file:/workspace/out/.keep', 'file:/workspace/out/result.json', 'directory:/workspace/src', 'file:/workspace/src/main.py']);
    const main = listed.entries.find((entry) => entry.path === '/workspace/src/main.py')!;
    assert.ok(main.size > 50);
    assert.ok(Math.abs(Date.parse(main.mtime) - Date.now()) < 5 * 60_000, main.mtime);

    await sandbox.deletePath('out/result.json');
    await assert.rejects(sandbox.deletePath('src'), (error: unknown) => SandboxError.is(error, 'is-a-directory') && /recursive: true/.test(error.hint!));
    await sandbox.deletePath('src', { recursive: true });
    assert.deepEqual((await sandbox.listFiles('.', { depth: 3 })).entries.map((entry) => entry.path), ['/workspace/out', '/workspace/out/.keep']);
    await assert.rejects(sandbox.readFile('out/result.json'), (error: unknown) => SandboxError.is(error, 'file-not-found'));
  });

  it('keeps files, installed state and background processes between calls', async () => {
    await sandbox.exec({ command: 'echo remembered > /tmp/state && (sleep 300 &)' });
    // The [0] keeps pgrep from finding the shell whose command line holds the pattern.
    const later = await sandbox.exec({ command: 'cat /tmp/state; pgrep -fc "sleep 30[0]"' });
    assert.equal(later.stdout, 'remembered\n1\n');
  });

  it('runs commands with cwd, env, argv and stdin', async () => {
    await sandbox.writeFiles([{ path: 'dir/x.txt', content: 'x' }]);
    const result = await sandbox.exec({ cmd: ['sh', '-c', 'pwd; echo "$GREETING"; cat', 'ignored'], cwd: 'dir', env: { GREETING: 'hello there' }, stdin: 'from stdin' });
    assert.equal(result.stdout, '/workspace/dir\nhello there\nfrom stdin');
    const argv = await sandbox.exec({ cmd: ['python3', '-c', 'import sys; print(sys.argv[1:])', 'a b', '$HOME', ';ls'] });
    assert.equal(argv.stdout, "['a b', '$HOME', ';ls']\n");
  });

  it('reads binary files as base64 and caps large reads', async () => {
    await sandbox.writeFiles([{ path: 'bin.dat', content: Buffer.from([0, 255, 1, 254]).toString('base64'), encoding: 'base64' }]);
    const binary = await sandbox.readFile('bin.dat');
    assert.equal(binary.encoding, 'base64');
    assert.deepEqual([...Buffer.from(binary.content, 'base64')], [0, 255, 1, 254]);
    await sandbox.exec({ command: 'head -c 5000 /dev/zero | tr "\\0" a > big.txt' });
    const partial = await sandbox.readFile('big.txt', { maxBytes: 1000 });
    assert.equal(partial.content.length, 1000);
    assert.equal(partial.size, 5000);
    assert.equal(partial.truncated, true);
  });

  it('kills a timed-out command and everything it started, and stays usable', async () => {
    const result = await sandbox.exec({ command: 'sleep 600 & sleep 601; echo never', timeoutSeconds: 1 });
    assert.equal(result.outcome, 'timeout');
    assert.ok(result.durationMs < 2000, `took ${result.durationMs} ms`);
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

  it('reports an OOM kill in a session, and the session lives on', async () => {
    const small = (await openSession(engine, resolveSpec({ runtime: 'python', limits: { memoryBytes: '64m' } }), { name: 'engine-test-oom', workspaceFolder: folder })).sandbox;
    try {
      const result = await small.exec({ cmd: ['python3', '-c', 'b = []\nwhile True: b.append(bytearray(16 * 1024 * 1024))'] });
      assert.equal(result.outcome, 'oom', JSON.stringify(result));
      assert.equal((await small.exec({ command: 'echo alive' })).stdout, 'alive\n');
    } finally {
      await small.close();
    }
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
    await sandbox.exec({ command: 'ln -sfn /etc /workspace/etc-link && ln -sfn /etc/hostname /workspace/host-link' });
    const outside = (error: unknown) => SandboxError.is(error, 'path-outside-workspace');
    await assert.rejects(sandbox.readFile('host-link'), outside);
    await assert.rejects(sandbox.readFile('etc-link/passwd'), outside);
    await assert.rejects(sandbox.writeFiles([{ path: 'etc-link/evil', content: 'x' }]), outside);
    await assert.rejects(sandbox.listFiles('etc-link'), outside);
    // Deleting the link removes the link, not what it points to.
    await sandbox.deletePath('etc-link');
    assert.equal((await sandbox.exec({ command: 'test -d /etc && echo still-there' })).stdout, 'still-there\n');
  });

  it('is found again by name from another engine instance, as another CLI process would', async () => {
    await sandbox.exec({ command: 'echo remembered > /tmp/state' });
    const other = testEngine();
    const found = await findSession(other, 'engine-test', folder);
    assert.equal(found?.id, sandbox.info.id);
    assert.equal(found?.spec.timeoutSeconds, 30);
    const again = await openSession(other, resolveSpec({ runtime: 'python' }), { name: 'engine-test', workspaceFolder: folder });
    assert.equal(again.created, false);
    assert.equal((await again.sandbox.exec({ command: 'cat /tmp/state' })).stdout, 'remembered\n');
  });

  it('says precisely that a session died when its container was killed from outside', async () => {
    const doomed = (await openSession(engine, resolveSpec({ runtime: 'bash' }), { name: 'engine-test-doomed', workspaceFolder: folder })).sandbox;
    try {
      await engine.docker.getContainer(doomed.info.id).kill({ signal: 'SIGKILL' });
      await assert.rejects(doomed.exec({ command: 'echo hi' }), (error: unknown) => SandboxError.is(error, 'session-dead') && /killed \(SIGKILL\)/.test(error.message) && /open a new session/i.test(error.hint!));
      await assert.rejects(engine.attach(doomed.info.id), (error: unknown) => SandboxError.is(error, 'session-dead'));
    } finally {
      await doomed.close();
    }
    await assert.rejects(engine.attach(doomed.info.id), (error: unknown) => SandboxError.is(error, 'session-not-found'));
  });

  describe('with the workspace mounted', () => {
    const hostFolder = mkdtempSync(join(tmpdir(), 'agent-sandbox-mount-'));
    before(() => {
      writeFileSync(join(hostFolder, 'notes.txt'), 'from the host\n');
      chmodSync(hostFolder, 0o777);
    });
    after(() => rmSync(hostFolder, { recursive: true, force: true }));

    it('reads but never writes a read-only workspace, and says how to get write access', async () => {
      const ro = (await openSession(engine, resolveSpec({ runtime: 'bash', workspaceAccess: 'ro' }), { name: 'engine-test-ro', workspaceFolder: hostFolder })).sandbox;
      try {
        assert.equal((await ro.readFile('notes.txt')).content, 'from the host\n');
        await assert.rejects(ro.writeFiles([{ path: 'new.txt', content: 'x' }]), (error: unknown) => SandboxError.is(error, 'read-only') && /read-write workspace access/.test(error.hint!));
        const shell = await ro.exec({ command: 'echo x > /workspace/new.txt' });
        assert.equal(shell.outcome, 'error');
        assert.match(shell.stderr, /Read-only file system/);
        assert.equal((await ro.exec({ command: 'echo ok > /tmp/t && echo ok > ~/t && cat /tmp/t ~/t' })).stdout, 'ok\nok\n');
      } finally {
        await ro.close();
      }
    });

    it('writes through to the host folder with read-write access', async () => {
      const rw = (await openSession(engine, resolveSpec({ runtime: 'bash', workspaceAccess: 'rw' }), { name: 'engine-test-rw', workspaceFolder: hostFolder })).sandbox;
      try {
        await rw.writeFiles([{ path: 'from-sandbox.txt', content: 'hello host\n' }]);
        assert.equal(readFileSync(join(hostFolder, 'from-sandbox.txt'), 'utf8'), 'hello host\n');
      } finally {
        await rw.close();
      }
    });
  });
});
