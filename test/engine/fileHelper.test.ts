import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Sandbox } from '../../src/core/engine/engine';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import type { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { withSeed, type Seeded } from '../seed';
import { openSession } from './namedSession';
import { pollUntil, requireEngine, testEngine } from './harness';

const run = promisify(execFile);

/** Live helpers in the sandbox (zombies left out), counted from /proc by the first line of the helper script. */
const HELPERS = `n=0; for p in /proc/[0-9]*; do [ "$(cut -d' ' -f3 $p/stat 2>/dev/null)" = Z ] && continue; [ "$(tr "\\0" " " < $p/cmdline 2>/dev/null | head -c 33)" = "sh -c # agent-sandbox file helper" ] && n=$((n+1)); done; echo $n`;

function bytes(seeded: Seeded, length: number): Buffer {
  return Buffer.from(Array.from({ length }, () => seeded.below(256)));
}

/** The session's file helper (fileHelper.ts): what a caller sees is what one exec per call gave. */
describe('the file helper of a session', function () {
  let engine: DockerEngine;
  let sandbox: Sandbox;
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-ws-'));

  before(async function () {
    await requireEngine(this);
    engine = testEngine();
    sandbox = (
      await openSession(engine, resolveSpec({ runtime: 'bash', timeoutSeconds: 30 }), {
        name: 'engine-test-files',
        workspaceFolder: folder,
      })
    ).sandbox;
  });

  after(async () => {
    await sandbox?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const helpers = async () => Number((await sandbox.exec({ command: HELPERS })).stdout.trim());

  it('is one process while idle, started by the first file call', async () => {
    await sandbox.writeFiles([{ path: 'first.txt', content: 'one' }]);
    assert.equal((await sandbox.readFile('first.txt')).content, 'one');
    assert.equal(await helpers(), 1);
  });

  it('answers calls made at once: one in the helper, the others as one exec each, every one with its own bytes', () =>
    withSeed(async (seeded) => {
      const files = Array.from({ length: 8 }, (_, index) => ({
        path: `parallel/f${index}.bin`,
        data: bytes(seeded, 1000 + seeded.below(200_000)),
      }));
      await Promise.all(
        files.map((file) =>
          sandbox.writeFiles([{ path: file.path, content: file.data.toString('base64'), encoding: 'base64' }]),
        ),
      );
      const read = await Promise.all(
        files.map((file) => sandbox.readFile(file.path, { encoding: 'base64', maxBytes: 1 << 20 })),
      );
      read.forEach((content, index) => assert.ok(Buffer.from(content.content, 'base64').equals(files[index]!.data)));
      const listed = await sandbox.listFiles('parallel');
      assert.deepEqual(
        listed.entries.map((entry) => entry.size),
        files.map((file) => file.data.length),
      );
      assert.equal(await helpers(), 1);
    }));

  it('keeps the error of each failure: missing file, directory, outside link, recursive delete', async () => {
    await sandbox.exec({ command: 'mkdir -p d && ln -sfn /etc out' });
    const reasons = async (call: () => Promise<unknown>) =>
      call().then(
        () => 'ok',
        (error: unknown) => (SandboxError.is(error) ? error.reason : String(error)),
      );
    assert.equal(await reasons(() => sandbox.readFile('missing.txt')), 'file-not-found');
    assert.equal(await reasons(() => sandbox.readFile('d')), 'is-a-directory');
    assert.equal(await reasons(() => sandbox.readFile('out/passwd')), 'path-outside-workspace');
    assert.equal(await reasons(() => sandbox.writeFiles([{ path: 'out/x', content: 'x' }])), 'path-outside-workspace');
    assert.equal(await reasons(() => sandbox.deletePath('d')), 'is-a-directory');
    assert.equal(await reasons(() => sandbox.deletePath('d', { recursive: true })), 'ok');
    assert.equal(await helpers(), 1);
  });

  it('a cancelled write says so, and the next calls work', async () => {
    const big = Buffer.alloc(8 << 20, 7).toString('base64');
    const controller = new AbortController();
    const writing = sandbox.writeFiles([{ path: 'big.bin', content: big, encoding: 'base64' }], controller.signal);
    controller.abort();
    await assert.rejects(writing, (error: unknown) => SandboxError.is(error) && error.reason === 'aborted');
    await sandbox.writeFiles([{ path: 'after.txt', content: 'after' }]);
    assert.equal((await sandbox.readFile('after.txt')).content, 'after');
    assert.ok((await helpers()) <= 1);
  });

  it('leaves nothing behind when the host process goes away without closing: that process ends by itself', async () => {
    const child = `
      const { testEngine } = require(${JSON.stringify(resolve(__dirname, 'harness.ts'))});
      (async () => {
        const sandbox = await testEngine().attach(${JSON.stringify(sandbox.info.id)});
        await sandbox.writeFiles([{ path: 'from-child.txt', content: 'child' }]);
        console.log((await sandbox.readFile('from-child.txt')).content);
      })();
    `;
    // The child starts a helper of its own, then ends without closing anything (no exit call either).
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', child], {
      env: process.env,
      timeout: 120_000,
    });
    assert.match(stdout, /child/);
    // Its helper read the end of its stdin and ended: only this process's helper is left.
    assert.ok(await pollUntil(async () => (await helpers()) === 1, 100), 'the helper of a process that ended is left');
  });
});
