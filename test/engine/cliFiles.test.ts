import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, type CliRun } from './cliRunner';

/** Runs the built CLI with its file store in `store` and no engine within reach, to show none is needed. */
function cli(args: string[], store: string, env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(args, {
    env: { AGENT_SANDBOX_FILE_STORE: store, DOCKER_HOST: 'unix:///tmp/agent-sandbox-no-such.sock', ...env },
  });
}

describe('agent-sandbox files: the local file store from the command line', function () {
  const root = mkdtempSync(join(tmpdir(), 'agent-sandbox-cli-files-'));
  const store = join(root, 'store');
  after(() => rmSync(root, { recursive: true, force: true }));

  it('uploads, lists, downloads and deletes, without an engine', async () => {
    const data = Buffer.concat([
      Buffer.from(Array.from({ length: 256 }, (_, byte) => byte)),
      randomBytes(64 * 1024 - 256),
    ]);
    const source = join(root, 'data.bin');
    writeFileSync(source, data);
    const digest = createHash('sha256').update(data).digest('hex');

    const uploaded = await cli(['files', 'upload', source, '--json'], store);
    assert.equal(uploaded.code, 0, uploaded.stderr);
    const file = JSON.parse(uploaded.stdout.toString());
    assert.deepEqual(
      { key: file.key, name: file.name, size: file.size, sha256: file.sha256 },
      { key: `files/f_${digest.slice(0, 16)}`, name: 'data.bin', size: data.length, sha256: digest },
    );

    const text = await cli(['files', 'upload', source, '--name', 'ignored.bin'], store);
    assert.equal(text.stdout.toString(), `Stored "data.bin" as ${file.key} (64 KiB, sha256 ${digest})\n`);

    const listed = await cli(['files', 'list', '--json'], store);
    assert.deepEqual(JSON.parse(listed.stdout.toString()).files, [file]);
    const table = (await cli(['files', 'list'], store)).stdout.toString().split('\n');
    assert.match(table[0]!, /^KEY\s+SIZE\s+CREATED\s+NAME$/);
    assert.match(table[1]!, new RegExp(`^${file.key}\\s+64 KiB\\s+\\S+\\s+data\\.bin$`));

    const toStdout = await cli(['files', 'download', file.key], store);
    assert.equal(toStdout.code, 0, toStdout.stderr);
    assert.ok(toStdout.stdout.equals(data), 'the bytes on stdout are the file');

    const target = join(root, 'copy.bin');
    const toFile = await cli(['files', 'download', file.key, '--output', target], store);
    assert.equal(toFile.stdout.toString(), `Saved ${file.key} ("data.bin", 64 KiB) to ${target}\n`);
    assert.ok(readFileSync(target).equals(data));
    const asJson = JSON.parse((await cli(['files', 'download', file.key, '--json'], store)).stdout.toString());
    assert.ok(Buffer.from(asJson.contentBase64, 'base64').equals(data));

    const deleted = await cli(['files', 'delete', file.key, '--json'], store);
    assert.deepEqual(JSON.parse(deleted.stdout.toString()), { deleted: file });
    assert.equal((await cli(['files', 'list'], store)).stdout.toString(), 'No stored files.\n');
  });

  it('explains unknown and malformed keys, corruption, the size limit and bad usage', async () => {
    const missing = await cli(['files', 'download', 'files/f_0123456789abcdef'], store);
    assert.equal(missing.code, 125);
    assert.match(missing.stderr, /No file files\/f_0123456789abcdef is in the file store\./);
    const malformed = await cli(['files', 'delete', 'f_0123', '--json'], store);
    assert.equal(JSON.parse(malformed.stdout.toString()).error.reason, 'invalid-input');

    const source = join(root, 'note.txt');
    writeFileSync(source, 'keep me');
    const { key } = JSON.parse((await cli(['files', 'upload', source, '--json'], store)).stdout.toString());
    writeFileSync(join(store, key.slice('files/'.length)), 'changed');
    const corrupted = await cli(['files', 'download', key], store);
    assert.equal(corrupted.code, 125);
    assert.match(corrupted.stderr, /is corrupted/);

    writeFileSync(join(root, 'big.bin'), Buffer.alloc(2048));
    const big = await cli(['files', 'upload', join(root, 'big.bin')], store, {
      AGENT_SANDBOX_FILE_STORE_MAX_SIZE: '1k',
    });
    assert.match(big.stderr, /is 2 KiB; the file store takes files up to 1 KiB/);

    const usage = await cli(['files', 'frobnicate'], store);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /Unknown files action "frobnicate"/);
    assert.equal((await cli(['files', 'upload'], store)).code, 2);
  });
});
