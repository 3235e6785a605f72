import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../../src/core/engine/engine';
import { SandboxError } from '../../src/core/errors';
import { FileStore } from '../../src/core/files/fileStore';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { openSession } from './namedSession';
import { publishFile, stageFile } from '../../src/core/files/staging';
import type { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { requireEngine, testEngine } from './harness';

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

describe('staging files between the file store and a real sandbox', function () {
  let engine: DockerEngine;
  let sandbox: Sandbox;
  let store: FileStore;
  const root = mkdtempSync(join(tmpdir(), 'agent-sandbox-staging-'));

  before(async function () {
    await requireEngine(this);
    engine = testEngine();
    store = new FileStore(join(root, 'files'));
    sandbox = (
      await openSession(engine, resolveSpec({ runtime: 'python', timeoutSeconds: 30 }), {
        name: 'staging-test',
        workspaceFolder: join(root, 'folder'),
      })
    ).sandbox;
  });

  after(async () => {
    await sandbox?.close();
    await engine?.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  it('stages a stored file, lets a command transform it, and publishes the result', async () => {
    const input = await store.put(Buffer.from('alpha\nbeta\ngamma\n'), { name: 'words.txt' });
    const staged = await stageFile(sandbox, (await store.get(input.key)).data, 'in/words.txt', input.key);
    assert.deepEqual(staged, { source: input.key, path: '/workspace/in/words.txt', size: 17, sha256: input.sha256 });

    const run = await sandbox.exec({ command: 'mkdir -p out && tr a-z A-Z < in/words.txt | sort -r > out/WORDS.txt' });
    assert.equal(run.outcome, 'ok', run.stderr);

    const published = await publishFile(sandbox, store, 'out/WORDS.txt');
    const expected = Buffer.from('GAMMA\nBETA\nALPHA\n');
    assert.equal(published.path, '/workspace/out/WORDS.txt');
    assert.equal(published.file.sha256, sha256(expected));
    assert.equal(published.file.size, expected.length);
    assert.equal(published.file.name, 'WORDS.txt');
    assert.ok(Buffer.from((await store.get(published.file.key)).data).equals(expected));
    assert.deepEqual((await store.list()).map((file) => file.key).sort(), [input.key, published.file.key].sort());
  });

  it('round-trips binary content byte for byte, checked inside the sandbox too', async () => {
    const data = Buffer.concat([
      Buffer.from(Array.from({ length: 256 }, (_, byte) => byte)),
      randomBytes(300_000),
      Buffer.from('\r\n\0'),
    ]);
    const stored = await store.put(data, { name: 'blob.bin' });
    await stageFile(sandbox, data, 'bin/blob.bin', stored.key);
    const inside = await sandbox.exec({ cmd: ['sha256sum', 'bin/blob.bin'] });
    assert.equal(inside.stdout.split(' ')[0], sha256(data));
    const back = await publishFile(sandbox, store, '/workspace/bin/blob.bin', { name: 'again.bin' });
    assert.equal(back.file.key, stored.key, 'the same content gets the same key');
    assert.ok(Buffer.from((await store.get(back.file.key)).data).equals(data));
  });

  it('refuses to publish a file larger than the store takes, rather than cutting it', async () => {
    const small = new FileStore(join(root, 'small'), { maxFileBytes: 1024 });
    await sandbox.exec({ command: 'head -c 4096 /dev/zero > big.bin' });
    await assert.rejects(
      publishFile(sandbox, small, 'big.bin'),
      (error: unknown) =>
        SandboxError.is(error, 'file-too-large') &&
        /big\.bin is 4 KiB; the file store takes files up to 1 KiB/.test(error.message) &&
        /split/.test(error.hint!),
    );
    assert.deepEqual(await small.list(), []);
    // The sandbox's own file size cap (10 MiB by default) is the tighter one here.
    await sandbox.exec({ command: 'head -c 11M /dev/zero > huge.bin' });
    await assert.rejects(
      publishFile(sandbox, store, 'huge.bin'),
      (error: unknown) =>
        SandboxError.is(error, 'file-too-large') &&
        /huge\.bin is 11 MiB; the sandbox's file size limit \(limits\.maxFileSizeBytes\) is 10 MiB/.test(error.message),
    );
  });

  it('says so when the sandbox file is missing or the destination leaves /workspace', async () => {
    await assert.rejects(publishFile(sandbox, store, 'nope.txt'), (error: unknown) =>
      SandboxError.is(error, 'file-not-found'),
    );
    await assert.rejects(stageFile(sandbox, Buffer.from('x'), '../etc/x', 'test'), (error: unknown) =>
      SandboxError.is(error, 'path-outside-workspace'),
    );
  });
});
