import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxError } from '../../src/core/errors';
import { FileStore, defaultFileStoreFolder, parseKey } from '../../src/core/files/fileStore';
import { formatPublished } from '../../src/core/tools/specs/publishFile';
import { formatStaged } from '../../src/core/tools/specs/stageFile';

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

describe('the file store', () => {
  let folder: string;
  let store: FileStore;

  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-store-'));
    store = new FileStore(join(folder, 'files'));
  });

  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it('stores, returns, lists and deletes a file', async () => {
    const data = Buffer.from('hello, store\n');
    const stored = await store.put(data, { name: 'hello.txt' });
    assert.match(stored.key, /^files\/f_[0-9a-f]{16}$/);
    assert.equal(stored.key, `files/f_${sha256(data).slice(0, 16)}`);
    assert.deepEqual(
      { name: stored.name, size: stored.size, sha256: stored.sha256 },
      { name: 'hello.txt', size: 13, sha256: sha256(data) },
    );
    assert.ok(Math.abs(Date.parse(stored.created) - Date.now()) < 60_000);

    const got = await store.get(stored.key);
    assert.deepEqual(Buffer.from(got.data), data);
    assert.deepEqual(got.file, stored);
    assert.deepEqual(await store.list(), [stored]);
    assert.deepEqual(await store.stat(stored.key), stored);

    assert.deepEqual(await store.delete(stored.key), stored);
    assert.deepEqual(await store.list(), []);
    await assert.rejects(store.get(stored.key), (error: unknown) => SandboxError.is(error, 'file-not-found'));
    await assert.rejects(store.delete(stored.key), (error: unknown) => SandboxError.is(error, 'file-not-found'));
    assert.deepEqual(readdirSync(store.folder), [], 'no blob, metadata or temporary file is left');
  });

  it('gives the same content the same key, and keeps its first name', async () => {
    const first = await store.put(Buffer.from('same'), { name: 'a.txt' });
    const second = await store.put(Buffer.from('same'), { name: 'b.txt' });
    assert.deepEqual(second, first);
    const other = await store.put(Buffer.from('other'));
    assert.notEqual(other.key, first.key);
    assert.equal(other.name, other.key.slice('files/'.length), 'a file without a name is named after its key');
    assert.equal((await store.list()).length, 2);
  });

  it('round-trips binary content byte for byte', async () => {
    const data = Buffer.concat([
      Buffer.from(Array.from({ length: 256 }, (_, byte) => byte)),
      Buffer.from([0xff, 0xfe, 0x00, 0x0a, 0x0d]),
    ]);
    const stored = await store.put(data);
    assert.ok(Buffer.from((await store.get(stored.key)).data).equals(data));
  });

  it('detects a blob that no longer matches its sha256', async () => {
    const stored = await store.put(Buffer.from('original content'), { name: 'x.bin' });
    const blob = join(store.folder, stored.key.slice('files/'.length));
    writeFileSync(blob, 'tampered content');
    await assert.rejects(
      store.get(stored.key),
      (error: unknown) =>
        SandboxError.is(error, 'file-corrupted') &&
        /corrupted/.test(error.message) &&
        /sha256/.test(error.message) &&
        error.hint!.includes(`Delete ${stored.key}`),
    );
    // Storing the content again repairs the blob.
    await store.put(Buffer.from('original content'));
    assert.equal(Buffer.from((await store.get(stored.key)).data).toString(), 'original content');
    rmSync(blob);
    await assert.rejects(
      store.get(stored.key),
      (error: unknown) => SandboxError.is(error, 'file-corrupted') && /content is missing/.test(error.message),
    );
    await store.put(Buffer.from('original content'));
    assert.equal(Buffer.from((await store.get(stored.key)).data).toString(), 'original content');
  });

  it('reports damaged metadata', async () => {
    const stored = await store.put(Buffer.from('x'));
    writeFileSync(join(store.folder, `${stored.key.slice('files/'.length)}.json`), '{ not json');
    await assert.rejects(
      store.get(stored.key),
      (error: unknown) => SandboxError.is(error, 'file-corrupted') && /damaged/.test(error.message),
    );
    assert.deepEqual(await store.list(), [], 'list skips what it cannot read');
  });

  it('refuses malformed keys and names unknown ones', async () => {
    for (const key of [
      '',
      'f_0123456789abcdef',
      'files/f_0123',
      'files/f_0123456789ABCDEF',
      'files/../etc/passwd',
      'files/f_0123456789abcdef/../x',
      'files/f_0123456789abcdef.json',
    ]) {
      await assert.rejects(
        store.get(key),
        (error: unknown) =>
          SandboxError.is(error, 'invalid-input') &&
          /not a file store key/.test(error.message) &&
          /files\/f_/.test(error.hint!),
        key,
      );
    }
    assert.throws(
      () => parseKey(42 as unknown as string),
      (error: unknown) => SandboxError.is(error, 'invalid-input'),
    );
    await assert.rejects(
      store.get('files/f_0123456789abcdef'),
      (error: unknown) =>
        SandboxError.is(error, 'file-not-found') && /No file files\/f_0123456789abcdef/.test(error.message),
    );
    assert.equal(parseKey(`files/f_${'a'.repeat(64)}`), `f_${'a'.repeat(64)}`);
  });

  it('takes a longer key when another content shares the first 16 digits', async () => {
    const data = Buffer.from('collide');
    const digest = sha256(data);
    mkdirSync(store.folder, { recursive: true });
    const squatter = {
      key: `files/f_${digest.slice(0, 16)}`,
      name: 'other',
      size: 1,
      sha256: 'f'.repeat(64),
      created: '2020-01-01T00:00:00.000Z',
    };
    writeFileSync(join(store.folder, `f_${digest.slice(0, 16)}.json`), JSON.stringify(squatter));
    writeFileSync(join(store.folder, `f_${digest.slice(0, 16)}`), 'o');
    const stored = await store.put(data);
    assert.equal(stored.key, `files/f_${digest.slice(0, 20)}`);
    assert.equal((await store.put(data)).key, stored.key, 'and finds it there again');
    assert.equal(Buffer.from((await store.get(stored.key)).data).toString(), 'collide');
  });

  it('enforces its size limit', async () => {
    const small = new FileStore(join(folder, 'small'), { maxFileBytes: 10 });
    await small.put(Buffer.alloc(10));
    await assert.rejects(
      small.put(Buffer.alloc(11), { name: 'big.bin' }),
      (error: unknown) =>
        SandboxError.is(error, 'file-too-large') &&
        /big\.bin is 11 bytes; the file store takes files up to 10 bytes/.test(error.message),
    );
    const path = join(folder, 'big.bin');
    writeFileSync(path, Buffer.alloc(11));
    await assert.rejects(small.putFile(path), (error: unknown) => SandboxError.is(error, 'file-too-large'));
    assert.equal(new FileStore(folder).maxFileBytes, 100 * 1024 * 1024);
  });

  it('stores a host file under its own name, and explains a missing one', async () => {
    const path = join(folder, 'report.csv');
    writeFileSync(path, 'a,b\n1,2\n');
    const stored = await store.putFile(path);
    assert.equal(stored.name, 'report.csv');
    assert.equal(
      (await store.putFile(path, { name: 'renamed.csv' })).name,
      'report.csv',
      'the same content keeps its record',
    );
    await assert.rejects(store.putFile(join(folder, 'missing.csv')), (error: unknown) =>
      SandboxError.is(error, 'file-not-found'),
    );
    await assert.rejects(store.putFile(folder), (error: unknown) => SandboxError.is(error, 'not-a-file'));
  });

  it('keeps only the last path component of a name, without control characters', async () => {
    assert.equal((await store.put(Buffer.from('1'), { name: '../../etc/passwd' })).name, 'passwd');
    assert.equal((await store.put(Buffer.from('2'), { name: 'a\\b\nc.txt' })).name, 'bc.txt');
    assert.equal((await store.put(Buffer.from('3'), { name: '..' })).name.startsWith('f_'), true);
  });

  it('lists an empty or missing folder as empty', async () => {
    assert.deepEqual(await new FileStore(join(folder, 'nowhere')).list(), []);
  });

  it('lives where the CLI looks for it', () => {
    assert.equal(defaultFileStoreFolder({ AGENT_SANDBOX_FILE_STORE: '/srv/store' }, '/home/u'), '/srv/store');
    assert.equal(defaultFileStoreFolder({ XDG_DATA_HOME: '/data' }, '/home/u'), '/data/agent-sandbox/files');
    assert.equal(defaultFileStoreFolder({}, '/home/u'), '/home/u/.local/share/agent-sandbox/files');
    assert.equal(
      defaultFileStoreFolder({ XDG_DATA_HOME: 'relative' }, '/home/u'),
      '/home/u/.local/share/agent-sandbox/files',
    );
  });

  it('tells the model the key, size and sha256 of staged and published files', () => {
    const file = {
      key: 'files/f_0123456789abcdef',
      name: 'out.csv',
      size: 2048,
      sha256: 'ab'.repeat(32),
      created: '2025-01-01T00:00:00.000Z',
    };
    const published = formatPublished({ file, path: '/workspace/out.csv', savedTo: 'results/out.csv' });
    assert.match(
      published,
      /^Published \/workspace\/out\.csv to the file store as files\/f_0123456789abcdef · "out\.csv" · 2 KiB · sha256 (ab){32}\n/,
    );
    assert.match(published, /sandbox_stage_file/);
    assert.match(published, /Saved it to the workspace at results\/out\.csv\.$/);
    assert.doesNotMatch(formatPublished({ file, path: '/workspace/out.csv' }), /Saved/);
    const staged = formatStaged(
      {
        source: 'files/f_0123456789abcdef ("out.csv")',
        path: '/workspace/in/out.csv',
        size: 2048,
        sha256: 'ab'.repeat(32),
      },
      'default',
    );
    assert.match(
      staged,
      /^Staged files\/f_0123456789abcdef \("out\.csv"\) into sandbox "default" at \/workspace\/in\/out\.csv · 2 KiB · sha256 (ab){32}\n/,
    );
  });
});
