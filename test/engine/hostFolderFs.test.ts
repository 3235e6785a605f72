/**
 * The virtual engine's read-write workspace file system on a real host folder, called directly:
 * links are never followed, protected paths are refused, no setuid or setgid bit is ever set, and a
 * hard link to a file outside the folder never changes that file.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxError } from '../../src/core/errors';
import { hostFilesSupported } from '../../src/core/files/hostFiles/hostFolder';
import { PROTECTED_PATHS } from '../../src/core/policy/protectedPaths';
import { HostFolderFs } from '../../src/engines/virtual/hostFolderFs';

const refused = (code: string, reason?: string) => (error: unknown) => {
  assert.match((error as Error).message, new RegExp(`^${code}:`), (error as Error).message);
  if (reason)
    assert.ok(
      SandboxError.is(error) && error.reason === reason,
      `${(error as SandboxError).reason}: ${(error as Error).message}`,
    );
  return true;
};

describe("the virtual engine's read-write folder (HostFolderFs)", function () {
  let root: string;
  let folder: string;
  let outside: string;
  let fs: HostFolderFs;

  before(function () {
    if (!hostFilesSupported()) this.skip();
  });

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostfolderfs-'));
    folder = join(root, 'workspace');
    outside = join(root, 'outside');
    mkdirSync(join(folder, '.git'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(folder, '.git', 'config'), '[core]\n');
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    symlinkSync(outside, join(folder, 'out-dir'));
    symlinkSync(join(outside, 'secret.txt'), join(folder, 'out-file'));
    fs = await HostFolderFs.open(folder, { maxFileReadBytes: 1024, protectedPaths: PROTECTED_PATHS });
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('reads, writes, appends, lists, moves and removes inside the folder', async () => {
    await fs.mkdir('/a/b', { recursive: true });
    await fs.writeFile('/a/b/f.txt', 'one\n');
    await fs.appendFile('/a/b/f.txt', 'two\n');
    assert.equal(await fs.readFile('/a/b/f.txt'), 'one\ntwo\n');
    assert.deepEqual(await fs.readdir('/a'), ['b']);
    await fs.cp('/a', '/copy', { recursive: true });
    await fs.mv('/copy/b/f.txt', '/moved.txt');
    assert.equal(readFileSync(join(folder, 'moved.txt'), 'utf8'), 'one\ntwo\n');
    await fs.rm('/a', { recursive: true });
    assert.equal(await fs.exists('/a'), false);
    assert.deepEqual(fs.getAllPaths().sort(), [
      '/.git',
      '/.git/config',
      '/copy',
      '/copy/b',
      '/moved.txt',
      '/out-dir',
      '/out-file',
    ]);
  });

  it('follows no link: reads, writes, stats and listings through one are refused, and the outside is unchanged', async () => {
    await assert.rejects(fs.readFile('/out-file'), refused('ELOOP', 'path-outside-workspace'));
    await assert.rejects(fs.readFile('/out-dir/secret.txt'), refused('ELOOP'));
    await assert.rejects(fs.writeFile('/out-dir/new.txt', 'x'), refused('ELOOP'));
    await assert.rejects(fs.writeFile('/out-file', 'x'), refused('ELOOP'));
    await assert.rejects(fs.appendFile('/out-file', 'x'), refused('ELOOP'));
    await assert.rejects(fs.chmod('/out-file', 0o777), refused('ELOOP'));
    await assert.rejects(fs.readdir('/out-dir'), refused('ELOOP'));
    await assert.rejects(fs.stat('/out-file'), refused('ELOOP'));
    await assert.rejects(fs.mkdir('/out-dir/sub', { recursive: true }), refused('ELOOP'));
    await assert.rejects(fs.cp('/out-dir', '/copied', { recursive: true }), refused('ELOOP'));
    await assert.rejects(fs.symlink('/etc', '/new-link'), refused('EPERM'));
    assert.equal((await fs.lstat('/out-file')).isSymbolicLink, true);
    // Removing a link removes the link, never what it points at.
    await fs.rm('/out-dir', { recursive: true });
    assert.deepEqual(readdirSync(outside), ['secret.txt']);
    assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'secret');
  });

  it('refuses a FIFO without waiting for a writer, and a file over the read limit', async () => {
    execFileSync('mkfifo', [join(folder, 'pipe')]);
    await assert.rejects(fs.readFileBuffer('/pipe'), refused('EACCES', 'not-a-file'));
    await assert.rejects(fs.appendFile('/pipe', 'x'), refused('EACCES', 'not-a-file'));
    writeFileSync(join(folder, 'big.bin'), Buffer.alloc(2048));
    await assert.rejects(fs.readFileBuffer('/big.bin'), refused('EFBIG', 'file-too-large'));
  });

  it('refuses to create, change, move or remove protected paths, and allows them when the list is empty', async () => {
    await assert.rejects(fs.writeFile('/.git/config', 'x'), refused('EPERM', 'permission-denied'));
    await assert.rejects(fs.appendFile('/.git/config', 'x'), refused('EPERM'));
    await assert.rejects(fs.mkdir('/.vscode'), refused('EPERM'));
    await assert.rejects(fs.mkdir('/.VSCode/x', { recursive: true }), refused('EPERM'));
    await assert.rejects(fs.rm('/.git', { recursive: true }), refused('EPERM'));
    await assert.rejects(fs.mv('/.git', '/git'), refused('EPERM'));
    await fs.mkdir('/workflows');
    await assert.rejects(fs.mv('/workflows', '/.github'), refused('EPERM'));
    await assert.rejects(fs.cp('/workflows', '/.devcontainer', { recursive: true }), refused('EPERM'));
    await assert.rejects(fs.chmod('/.git/config', 0o777), refused('EPERM'));
    await assert.rejects(fs.utimes('/.git/config', new Date(0), new Date(0)), refused('EPERM'));
    await assert.rejects(fs.link('/.git/config', '/config-link'), refused('EPERM'));
    await assert.rejects(fs.rm('/', { recursive: true }), refused('EBUSY'));
    assert.equal(readFileSync(join(folder, '.git', 'config'), 'utf8'), '[core]\n');
    assert.deepEqual(readdirSync(folder).sort(), ['.git', 'out-dir', 'out-file', 'workflows']);
    assert.equal(await fs.readFile('/.git/config'), '[core]\n', 'reading stays allowed');
    const lifted = await HostFolderFs.open(folder, { maxFileReadBytes: 1024, protectedPaths: [] });
    await lifted.writeFile('/.vscode/settings.json', '{}');
    assert.equal(readFileSync(join(folder, '.vscode', 'settings.json'), 'utf8'), '{}');
  });

  it('never sets a setuid or setgid bit, by chmod or by copying', async () => {
    await fs.writeFile('/tool.sh', '#!/bin/sh\n');
    await fs.chmod('/tool.sh', 0o6755);
    await fs.mkdir('/shared');
    await fs.chmod('/shared', 0o2775);
    await fs.cp('/tool.sh', '/copy.sh');
    for (const name of ['tool.sh', 'shared', 'copy.sh'])
      assert.equal(statSync(join(folder, name)).mode & 0o6000, 0, name);
    assert.equal(statSync(join(folder, 'tool.sh')).mode & 0o777, 0o755);
  });

  it('never changes a file outside through a hard link to it: writes, appends and chmod copy first', async () => {
    linkSync(join(outside, 'secret.txt'), join(folder, 'hard.txt'));
    await fs.appendFile('/hard.txt', ' appended');
    await fs.chmod('/hard.txt', 0o600);
    await fs.writeFile('/hard.txt', 'replaced');
    assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'secret');
    assert.equal(statSync(join(outside, 'secret.txt')).mode & 0o777, 0o644);
    assert.equal(readFileSync(join(folder, 'hard.txt'), 'utf8'), 'replaced');
  });
});
