import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxError } from '../../src/core/errors';
import { HostFolder, hostFilesSupported } from '../../src/core/files/hostFiles/hostFolder';
import { pathNames } from '../../src/core/files/hostFiles/hostPath';
import { quotedName as quoteName } from '../../src/core/results/displayName';
import { readHostFile } from '../../src/core/files/hostFiles/readHostFile';
import { openRegularFile, readWithin } from '../../src/core/files/hostFiles/regularFile';
import { writeHostFile } from '../../src/core/files/hostFiles/writeHostFile';

const is = (reason: Parameters<typeof SandboxError.is>[1], pattern?: RegExp) => (error: unknown) => {
  assert.ok(
    SandboxError.is(error, reason),
    `expected ${reason}, got ${String((error as SandboxError).reason)}: ${(error as Error).message}`,
  );
  if (pattern) assert.match(error.message + '\n' + error.hint, pattern);
  return true;
};

/** Temporary files the writer leaves behind would show up here. */
const leftovers = (dir: string): string[] => {
  const found: string[] = [];
  const visit = (path: string) => {
    for (const name of readdirSync(path)) {
      if (name.startsWith('.agent-sandbox-')) found.push(join(path, name));
      if (lstatSync(join(path, name)).isDirectory()) visit(join(path, name));
    }
  };
  visit(dir);
  return found;
};

describe('host files: reads and writes of a folder a sandbox can change', function () {
  let root: string;
  let folder: string;
  let outside: string;

  before(function () {
    if (!hostFilesSupported()) this.skip();
  });

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostfiles-'));
    folder = join(root, 'workspace');
    outside = join(root, 'outside');
    mkdirSync(join(folder, 'data'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(folder, 'data', 'in.csv'), 'a,b\n');
    writeFileSync(join(outside, 'secret.txt'), 'secret');
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  describe('paths, taken apart before anything is opened', () => {
    it('keeps plain names and drops "./", refuses "..", empty names, NUL and absolute paths', () => {
      assert.deepEqual(pathNames('data/in.csv'), ['data', 'in.csv']);
      assert.deepEqual(pathNames('./data/./in.csv'), ['data', 'in.csv']);
      assert.throws(() => pathNames('../outside/secret.txt'), is('path-outside-workspace', /"\.\."/));
      assert.throws(() => pathNames('data/../data/in.csv'), is('path-outside-workspace'));
      assert.throws(() => pathNames('data//in.csv'), is('invalid-input', /empty name/));
      assert.throws(() => pathNames('data/'), is('invalid-input', /empty name/));
      assert.throws(() => pathNames('a\0b'), is('invalid-input', /NUL/));
      assert.throws(() => pathNames('/etc/passwd'), is('invalid-input', /absolute/));
      assert.throws(() => pathNames('.'), is('is-a-directory'));
    });

    it('echoes names with control and invisible characters escaped', async () => {
      assert.equal(quoteName('a\nb\u001b[31m\u202e'), '"a\\nb\\u001b[31m\\u202e"');
      await assert.rejects(readHostFile(folder, 'evil\nError: forged line', 1024), (error: unknown) => {
        assert.ok(SandboxError.is(error, 'file-not-found'));
        assert.doesNotMatch(error.message, /\n/);
        assert.match(error.message, /"evil\\nError: forged line"/);
        return true;
      });
    });
  });

  describe('reading', () => {
    it('reads a regular file, and refuses a missing one or a directory', async () => {
      assert.equal(Buffer.from(await readHostFile(folder, 'data/in.csv', 1024)).toString(), 'a,b\n');
      await assert.rejects(readHostFile(folder, 'missing.txt', 1024), is('file-not-found', /no file "missing\.txt"/));
      await assert.rejects(readHostFile(folder, 'data', 1024), is('is-a-directory'));
      await assert.rejects(readHostFile(folder, 'data/in.csv/more', 1024), is('not-a-file', /is a file, not a folder/));
    });

    it('follows no symbolic link, inside the folder or out of it, as the last name or on the way', async () => {
      symlinkSync(join(outside, 'secret.txt'), join(folder, 'link.txt'));
      symlinkSync(outside, join(folder, 'linked-dir'));
      symlinkSync(join(folder, 'data', 'in.csv'), join(folder, 'inner-link.csv'));
      symlinkSync('data', join(folder, 'inner-dir'));
      for (const path of ['link.txt', 'linked-dir/secret.txt', 'inner-link.csv', 'inner-dir/in.csv']) {
        await assert.rejects(readHostFile(folder, path, 1024), is('path-outside-workspace', /symbolic link/), path);
      }
    });

    it('refuses a FIFO without waiting for a writer', async () => {
      execFileSync('mkfifo', [join(folder, 'pipe')]);
      await assert.rejects(readHostFile(folder, 'pipe', 1024), is('not-a-file', /not a regular file/));
      execFileSync('mkfifo', [join(folder, 'data', 'pipe-dir')]);
      await assert.rejects(readHostFile(folder, 'data/pipe-dir/x', 1024), is('not-a-file'));
    });

    it('checks the size of the opened file, and reads what was opened even if the path is replaced', async () => {
      writeFileSync(join(folder, 'exact.bin'), Buffer.alloc(16));
      assert.equal((await readHostFile(folder, 'exact.bin', 16)).length, 16);
      await assert.rejects(
        readHostFile(folder, 'exact.bin', 15),
        is('file-too-large', /is 16 bytes; the limit is 15 bytes/),
      );
      const host = await HostFolder.open(folder);
      const dir = await host.openDir(['data'], 'data/in.csv');
      try {
        const opened = await openRegularFile(host, dir, 'in.csv', 'data/in.csv');
        // The path now names a huge file: the descriptor still reads the small one that was checked.
        writeFileSync(join(folder, 'data', 'huge.bin'), '');
        truncateSync(join(folder, 'data', 'huge.bin'), 64 * 1024 * 1024);
        renameSync(join(folder, 'data', 'huge.bin'), join(folder, 'data', 'in.csv'));
        assert.equal(Buffer.from(await readWithin(opened, 1024, 'data/in.csv')).toString(), 'a,b\n');
        await opened.handle.close();
        // A file that grows after its fstat is still cut at the limit, and refused.
        writeFileSync(join(folder, 'data', 'grows.txt'), 'x');
        const growing = await openRegularFile(host, dir, 'grows.txt', 'data/grows.txt');
        appendFileSync(join(folder, 'data', 'grows.txt'), 'y'.repeat(100));
        await assert.rejects(readWithin(growing, 10, 'data/grows.txt'), is('file-too-large', /grew past 10 bytes/));
        await growing.handle.close();
      } finally {
        await dir.close();
      }
    });
  });

  describe('writing', () => {
    it('writes a new file, creating folders, and never replaces one without overwrite', async () => {
      const written = await writeHostFile(folder, 'results/deep/out.bin', Buffer.from([0, 1, 2, 255]));
      assert.equal(written, join(folder, 'results/deep/out.bin'));
      assert.deepEqual([...readFileSync(written)], [0, 1, 2, 255]);
      assert.equal(statSync(written).mode & 0o7777, 0o644);
      await assert.rejects(
        writeHostFile(folder, 'results/deep/out.bin', Buffer.from('new')),
        is('file-exists', /overwrite: true/),
      );
      assert.deepEqual([...readFileSync(written)], [0, 1, 2, 255]);
      await writeHostFile(folder, 'results/deep/out.bin', Buffer.from('new'), { overwrite: true });
      assert.equal(readFileSync(written, 'utf8'), 'new');
      await assert.rejects(writeHostFile(folder, 'data', Buffer.from('x'), { overwrite: true }), is('is-a-directory'));
      await assert.rejects(writeHostFile(folder, 'data/in.csv/x', Buffer.from('x')), is('not-a-file'));
      assert.deepEqual(leftovers(folder), []);
    });

    it('lets exactly one of several racing writes without overwrite create the file, and cleans up the others', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => writeHostFile(folder, 'race/out.txt', Buffer.from(`writer ${i}`))),
      );
      assert.equal(results.filter((result) => result.status === 'fulfilled').length, 1);
      for (const result of results) if (result.status === 'rejected') is('file-exists')(result.reason);
      assert.match(readFileSync(join(folder, 'race/out.txt'), 'utf8'), /^writer \d$/);
      assert.deepEqual(leftovers(folder), []);
    });

    it('never writes through a symbolic link: a linked folder is refused, a linked file is replaced itself', async () => {
      symlinkSync(outside, join(folder, 'linked-dir'));
      await assert.rejects(
        writeHostFile(folder, 'linked-dir/new.txt', Buffer.from('x')),
        is('path-outside-workspace', /symbolic link/),
      );
      await assert.rejects(
        writeHostFile(folder, 'linked-dir/sub/new.txt', Buffer.from('x')),
        is('path-outside-workspace'),
      );
      symlinkSync('data', join(folder, 'inner-dir'));
      await assert.rejects(writeHostFile(folder, 'inner-dir/new.txt', Buffer.from('x')), is('path-outside-workspace'));
      await assert.rejects(writeHostFile(folder, '../outside/new.txt', Buffer.from('x')), is('path-outside-workspace'));
      symlinkSync(join(outside, 'secret.txt'), join(folder, 'link.txt'));
      await assert.rejects(writeHostFile(folder, 'link.txt', Buffer.from('x')), is('file-exists'));
      await writeHostFile(folder, 'link.txt', Buffer.from('replaced'), { overwrite: true });
      assert.equal(lstatSync(join(folder, 'link.txt')).isFile(), true);
      assert.equal(readFileSync(join(folder, 'link.txt'), 'utf8'), 'replaced');
      assert.deepEqual(readdirSync(outside), ['secret.txt']);
      assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'secret');
    });

    it('replaces a file that has a hard link outside the folder without changing the outside one', async () => {
      linkSync(join(outside, 'secret.txt'), join(folder, 'hard.txt'));
      await writeHostFile(folder, 'hard.txt', Buffer.from('new'), { overwrite: true });
      assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'secret');
      assert.equal(readFileSync(join(folder, 'hard.txt'), 'utf8'), 'new');
    });

    it('replaces a FIFO with overwrite and never opens it', async () => {
      execFileSync('mkfifo', [join(folder, 'pipe')]);
      await assert.rejects(writeHostFile(folder, 'pipe', Buffer.from('x')), is('file-exists'));
      await writeHostFile(folder, 'pipe', Buffer.from('x'), { overwrite: true });
      assert.equal(readFileSync(join(folder, 'pipe'), 'utf8'), 'x');
    });

    it('refuses protected editor and VCS paths, naming the setting that lifts it, unless the list is empty', async () => {
      mkdirSync(join(folder, '.git'));
      writeFileSync(join(folder, '.git', 'config'), '[core]\n');
      for (const path of [
        '.git/config',
        '.git/hooks/pre-commit',
        '.vscode/settings.json',
        '.VSCode/tasks.json',
        './.github/workflows/ci.yml',
        '.devcontainer/devcontainer.json',
        '.git',
      ]) {
        await assert.rejects(
          writeHostFile(folder, path, Buffer.from('x'), { overwrite: true }),
          is('permission-denied', /agentSandbox\.configWritesAllowedIn/),
          path,
        );
      }
      assert.equal(readFileSync(join(folder, '.git', 'config'), 'utf8'), '[core]\n');
      assert.deepEqual(readdirSync(folder).sort(), ['.git', 'data']);
      await writeHostFile(folder, '.vscode/settings.json', Buffer.from('{}'), { protectedPaths: [] });
      assert.equal(readFileSync(join(folder, '.vscode', 'settings.json'), 'utf8'), '{}');
      await writeHostFile(folder, '.git-notes/today.txt', Buffer.from('fine'));
      assert.deepEqual(leftovers(folder), []);
    });

    it("writes no setuid or setgid bit and keeps a folder's own mode", async () => {
      chmodSync(join(folder, 'data'), 0o700);
      await writeHostFile(folder, 'data/plain.txt', Buffer.from('x'));
      assert.equal(statSync(join(folder, 'data', 'plain.txt')).mode & 0o6000, 0);
      assert.equal(statSync(join(folder, 'data')).mode & 0o7777, 0o700);
    });
  });
});
