import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extract } from 'tar-stream';
import { compareToBaseline } from '../../src/core/files/copyChanges';
import { parseChangedListing } from '../../src/core/files/copyListing';
import { readFolderCopy, sha256, type CopyBaseline, type PlannedEntry } from '../../src/core/files/folderCopy';
import { blake2b } from '../../src/core/files/hostFiles/fileHashes';
import { HostFolder, hostFilesSupported } from '../../src/core/files/hostFiles/hostFolder';
import { openDirSync, readRegularFileSync } from '../../src/core/files/hostFiles/syncReads';
import { SandboxError } from '../../src/core/errors';
import { TarLayout, tarBuffer, type TarEntry } from '../../src/engines/docker/tar';
import { copyLayout } from '../../src/engines/docker/placeFiles';
import { withSeed, type Seeded } from '../seed';

interface Unpacked {
  name: string;
  type: string;
  mode: number;
  size: number;
  linkname?: string;
  data: Buffer;
}

/** The entries of an archive, read back by tar-stream (a parser of its own). */
async function unpack(archive: Buffer): Promise<Unpacked[]> {
  const entries: Unpacked[] = [];
  await new Promise<void>((resolve, reject) => {
    const reader = extract();
    reader.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: unknown) => void chunks.push(chunk as Buffer));
      stream.on('end', () => {
        entries.push({
          name: header.name,
          type: header.type ?? '',
          mode: header.mode ?? 0,
          size: header.size ?? 0,
          linkname: header.linkname ?? undefined,
          data: Buffer.concat(chunks),
        });
        next();
      });
    });
    reader.on('finish', resolve);
    reader.on('error', reject);
    reader.end(archive);
  });
  return entries;
}

/** Names of every shape: short, long enough for ustar's prefix, too long for it, not ASCII, with spaces. */
function randomEntries(random: Seeded, count: number): TarEntry[] {
  const names = new Set<string>();
  const entries: TarEntry[] = [];
  const part = () => random.pick(['a', 'src', 'deep folder', 'ünï', 'x'.repeat(60), 'y'.repeat(99), 'файл']);
  while (entries.length < count) {
    const depth = 1 + random.below(5);
    const name = Array.from({ length: depth }, part).join('/') + `/${entries.length}.txt`;
    if (names.has(name)) continue;
    names.add(name);
    if (random.below(8) === 0) {
      const linkname = random.below(2) ? '../target' : `${'z/'.repeat(60)}target`;
      entries.push({ name, type: 'symlink', linkname, mode: 0o777, uid: 0, gid: 0 });
      continue;
    }
    const size = random.pick([0, 1, 511, 512, 513, 1024, random.below(70_000)]);
    const data = Buffer.alloc(size);
    for (let index = 0; index < size; index++) data[index] = random.below(256);
    entries.push({ name, type: 'file', data, mode: random.pick([0o644, 0o755, 0o600]), uid: 0, gid: 0 });
  }
  return entries;
}

describe('copy archive and listing', () => {
  it('writes archives that tar-stream and GNU tar read back exactly: names of every length, links, modes, bytes', () =>
    withSeed(async (random) => {
      const entries = randomEntries(random, 200);
      const archive = tarBuffer(entries);
      const read = await unpack(archive);
      assert.deepEqual(
        read.map((entry) => [entry.name, entry.type, entry.mode, entry.linkname ?? '', sha256(entry.data)]),
        entries.map((entry) => [
          entry.name,
          entry.type,
          entry.mode,
          entry.linkname ?? '',
          sha256(entry.type === 'file' ? entry.data! : new Uint8Array()),
        ]),
      );
      // GNU tar, when the host has it, lists the same names.
      const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-tar-'));
      try {
        writeFileSync(join(folder, 'a.tar'), archive);
        const listed = execFileSync('tar', ['--quoting-style=literal', '-tf', join(folder, 'a.tar')], {
          encoding: 'utf8',
        });
        assert.deepEqual(
          listed.trimEnd().split('\n'),
          entries.map((entry) => entry.name),
        );
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    }));

  it('lays an archive out before the bytes are read, and declines to finish one whose file changed size', async () => {
    const planned: PlannedEntry[] = [
      { path: 'a.txt', kind: 'file', size: 3 },
      { path: 'link', kind: 'symlink', size: 5, linkTarget: 'a.txt' },
      { path: `${'long/'.repeat(30)}b.bin`, kind: 'file', size: 600 },
    ];
    const layout = copyLayout(planned);
    assert.equal(layout.place(1), undefined, 'a link has no place for bytes');
    layout.place(0)!.set(Buffer.from('abc'));
    layout.place(2)!.fill(7);
    const entries = (data0: Uint8Array): TarEntry[] => [
      { name: 'a.txt', type: 'file', data: data0, mode: 0o640, uid: 0, gid: 0 },
      { name: 'link', type: 'symlink', linkname: 'a.txt', mode: 0o777, uid: 0, gid: 0 },
      { name: planned[2]!.path, type: 'file', data: layout.place(2), mode: 0o755, uid: 0, gid: 0 },
    ];
    assert.equal(layout.finish(entries(Buffer.from('abc'))), undefined, 'bytes outside their place');
    assert.equal(layout.finish(entries(layout.place(0)!.subarray(0, 2))), undefined, 'a file that shrank');
    const archive = layout.finish(entries(layout.place(0)!))!;
    assert.ok(archive);
    const read = await unpack(archive);
    assert.deepEqual(
      read.map((entry) => [entry.name, entry.mode, entry.data.length]),
      [
        ['a.txt', 0o640, 3],
        ['link', 0o777, 0],
        [planned[2]!.path, 0o755, 600],
      ],
    );
    assert.equal(read[0]!.data.toString(), 'abc');
    assert.ok(read[2]!.data.every((byte) => byte === 7));
    assert.ok(new TarLayout([]).finish([]), 'an empty archive is two zero blocks');
  });

  describe('reading a folder into its archive', function () {
    let folder: string;
    before(function () {
      if (!hostFilesSupported()) this.skip();
    });
    beforeEach(() => {
      folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-copyread-'));
    });
    afterEach(() => rmSync(folder, { recursive: true, force: true }));

    it('reads each file straight into its place, and into its own buffer when the place does not fit', async () => {
      mkdirSync(join(folder, 'sub'));
      writeFileSync(join(folder, 'sub', 'one.txt'), 'one\n');
      writeFileSync(join(folder, 'two.bin'), Buffer.alloc(5000, 2), { mode: 0o755 });
      symlinkSync('two.bin', join(folder, 'inside'));
      symlinkSync('/etc/passwd', join(folder, 'outside'));
      execFileSync('mkfifo', [join(folder, 'pipe')]);
      let layout: TarLayout | undefined;
      const copy = await readFolderCopy(folder, { maxBytes: 1 << 20 }, (entries) => (layout = copyLayout(entries)));
      assert.deepEqual(
        copy.files.map((file) => `${file.kind} ${file.path}`),
        ['symlink inside', 'file sub/one.txt', 'file two.bin'],
      );
      assert.deepEqual(copy.skipped, ['outside (a link out of the folder)', 'pipe (not a regular file)']);
      const two = copy.files[2]!;
      assert.equal(two.mode, 0o755);
      assert.equal(two.data!.buffer, layout!.archive.buffer, 'read into the archive');
      // Hashed on the worker thread (the archive is shared memory), the same as here.
      assert.equal(copy.baseline.files['two.bin']!.sha256, sha256(Buffer.alloc(5000, 2)));
      assert.equal(copy.baseline.placed!['two.bin']!.blake2b, blake2b(Buffer.alloc(5000, 2)));
      assert.equal(copy.baseline.placed!['sub/one.txt']!.sha256, sha256('one\n'));

      const host = await HostFolder.open(folder);
      const dir = openDirSync(host, [], 'two.bin');
      try {
        const small = new Uint8Array(10);
        const read = readRegularFileSync(host, dir, 'two.bin', 'two.bin', 1 << 20, small);
        assert.equal(read.data.length, 5000);
        assert.notEqual(read.data.buffer, small.buffer, 'a place of another size is not used');
        assert.throws(
          () => readRegularFileSync(host, dir, 'two.bin', 'two.bin', 4999),
          (error: unknown) => SandboxError.is(error, 'file-too-large'),
        );
        assert.throws(
          () => readRegularFileSync(host, dir, 'inside', 'inside', 1 << 20),
          (error: unknown) => SandboxError.is(error, 'path-outside-workspace'),
        );
        assert.throws(
          () => readRegularFileSync(host, dir, 'pipe', 'pipe', 1 << 20),
          (error: unknown) => SandboxError.is(error, 'not-a-file'),
        );
      } finally {
        dir.close();
      }
    });

    it('never goes through a linked folder', async () => {
      mkdirSync(join(folder, 'real'));
      writeFileSync(join(folder, 'real', 'f.txt'), 'x');
      symlinkSync('real', join(folder, 'linked'));
      const host = await HostFolder.open(folder);
      assert.throws(
        () => openDirSync(host, ['linked'], 'linked/f.txt'),
        (error: unknown) => SandboxError.is(error, 'path-outside-workspace'),
      );
    });
  });

  it('lists changes against what was placed: files placed and not listed as gone keep their hash', () => {
    const file = (text: string, mode = 0o644) => ({
      kind: 'file' as const,
      size: text.length,
      sha256: sha256(text),
      mtimeMs: 0,
      mode,
    });
    const placedFile = (text: string, mode = 0o644) => ({
      blake2b: blake2b(Buffer.from(text)),
      sha256: sha256(text),
      size: text.length,
      mode,
    });
    const baseline: CopyBaseline = {
      folder: '/p',
      copiedAt: '',
      files: {
        'same.txt': file('same'),
        'edited.txt': file('old!'),
        'gone.txt': file('gone'),
        'a b.sh': file('#!', 0o755),
      },
      placed: {
        'same.txt': placedFile('same'),
        'edited.txt': placedFile('old!'),
        'gone.txt': placedFile('gone'),
        'a b.sh': placedFile('#!', 0o755),
      },
    };
    const listing = [
      'G',
      'edited.txt',
      'gone.txt',
      'S',
      '4 644 edited.txt',
      '3 600 added.txt',
      'H',
      `${sha256('new!')}  edited.txt`,
      `${sha256('add')}  added.txt`,
      'L',
      'link',
      'same.txt',
      '',
    ].join('\0');
    const current = parseChangedListing(listing, baseline.placed!);
    assert.equal(current.get('same.txt')!.sha256, sha256('same'));
    assert.equal(current.get('a b.sh')!.mode, 0o755);
    assert.equal(current.get('added.txt')!.mode, 0o600);
    assert.equal(current.has('gone.txt'), false);
    assert.deepEqual(
      compareToBaseline(baseline, current).map((change) => `${change.change} ${change.path}`),
      ['added added.txt', 'modified edited.txt', 'deleted gone.txt', 'added link'],
    );
  });
});
