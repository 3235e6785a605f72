import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxError } from '../../src/core/errors';
import { readWorkspaceFile, workspaceTarget, writeWorkspaceFile } from '../../src/core/workspaceFiles';

const is = (reason: Parameters<typeof SandboxError.is>[1], pattern?: RegExp) => (error: unknown) => SandboxError.is(error, reason) && (!pattern || pattern.test(error.message));

describe('workspace files on the host', () => {
  let root: string;
  let folder: string;
  let outside: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'agent-sandbox-wsfiles-'));
    folder = join(root, 'workspace');
    outside = join(root, 'outside');
    mkdirSync(join(folder, 'data'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(folder, 'data', 'in.csv'), 'a,b\n');
    writeFileSync(join(outside, 'secret.txt'), 'secret');
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('resolves relative paths inside the folder and refuses the rest', () => {
    assert.equal(workspaceTarget(folder, 'data/in.csv'), join(folder, 'data/in.csv'));
    assert.equal(workspaceTarget(folder, './data/../data/in.csv'), join(folder, 'data/in.csv'));
    assert.throws(() => workspaceTarget(folder, '../outside/secret.txt'), is('path-outside-workspace', /outside the workspace folder/));
    assert.throws(() => workspaceTarget(folder, '.'), is('path-outside-workspace'));
    assert.throws(() => workspaceTarget(folder, '/etc/passwd'), is('invalid-input', /absolute/));
    assert.throws(() => workspaceTarget(folder, 'a\0b'), is('invalid-input', /NUL/));
  });

  it('reads a workspace file, but not through a link that leaves the folder', async () => {
    assert.equal(Buffer.from(await readWorkspaceFile(folder, 'data/in.csv', 1024)).toString(), 'a,b\n');
    symlinkSync(join(outside, 'secret.txt'), join(folder, 'link.txt'));
    symlinkSync(outside, join(folder, 'linked-dir'));
    symlinkSync(join(folder, 'data', 'in.csv'), join(folder, 'inner-link.csv'));
    await assert.rejects(readWorkspaceFile(folder, 'link.txt', 1024), is('path-outside-workspace', /link/));
    await assert.rejects(readWorkspaceFile(folder, 'linked-dir/secret.txt', 1024), is('path-outside-workspace'));
    assert.equal(Buffer.from(await readWorkspaceFile(folder, 'inner-link.csv', 1024)).toString(), 'a,b\n', 'a link inside the folder is fine');
    await assert.rejects(readWorkspaceFile(folder, 'missing.txt', 1024), is('file-not-found', /no file "missing\.txt"/));
    await assert.rejects(readWorkspaceFile(folder, 'data', 1024), is('is-a-directory'));
    await assert.rejects(readWorkspaceFile(folder, 'data/in.csv', 2), is('file-too-large'));
  });

  it('writes a new file atomically, creating folders, and never replaces one without overwrite', async () => {
    const written = await writeWorkspaceFile(folder, 'results/deep/out.bin', Buffer.from([0, 1, 2, 255]));
    assert.equal(written, join(folder, 'results/deep/out.bin'));
    assert.deepEqual([...readFileSync(written)], [0, 1, 2, 255]);
    await assert.rejects(writeWorkspaceFile(folder, 'results/deep/out.bin', Buffer.from('new')), is('file-exists', /already has a file/));
    assert.deepEqual([...readFileSync(written)], [0, 1, 2, 255]);
    await writeWorkspaceFile(folder, 'results/deep/out.bin', Buffer.from('new'), { overwrite: true });
    assert.equal(readFileSync(written, 'utf8'), 'new');
    assert.deepEqual(readdirSync(join(folder, 'results/deep')), ['out.bin'], 'no temporary file is left');
    await assert.rejects(writeWorkspaceFile(folder, 'data', Buffer.from('x'), { overwrite: true }), is('is-a-directory'));
    await assert.rejects(writeWorkspaceFile(folder, 'data/in.csv/x', Buffer.from('x')), is('not-a-file'));
  });

  it('never writes outside the folder, through .. or a linked folder', async () => {
    await assert.rejects(writeWorkspaceFile(folder, '../outside/new.txt', Buffer.from('x')), is('path-outside-workspace'));
    symlinkSync(outside, join(folder, 'linked-dir'));
    await assert.rejects(writeWorkspaceFile(folder, 'linked-dir/new.txt', Buffer.from('x')), is('path-outside-workspace'));
    await assert.rejects(writeWorkspaceFile(folder, 'linked-dir/sub/new.txt', Buffer.from('x')), is('path-outside-workspace'));
    assert.deepEqual(readdirSync(outside), ['secret.txt']);
    // Overwriting a link replaces the link itself, never the file it points at.
    symlinkSync(join(outside, 'secret.txt'), join(folder, 'link.txt'));
    await assert.rejects(writeWorkspaceFile(folder, 'link.txt', Buffer.from('x')), is('file-exists'));
    await writeWorkspaceFile(folder, 'link.txt', Buffer.from('replaced'), { overwrite: true });
    assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'secret');
    assert.equal(readFileSync(join(folder, 'link.txt'), 'utf8'), 'replaced');
  });
});
