import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { SandboxError } from '../../src/core/errors';
import { PROTECTED_PATHS } from '../../src/core/policy/protectedPaths';
import { LABEL } from '../../src/engines/docker/labels';
import {
  checkProtectedName,
  prepareProtection,
  protectedMountSettings,
  releasePlaceholders,
  withProtection,
} from '../../src/engines/docker/protectedMounts';

/** An engine that knows only the labels of the containers of one folder. */
function engineWith(containers: Record<string, string>[]): Docker {
  return {
    listContainers: async () =>
      containers.map((Labels, index) => ({
        Id: String(index).padStart(64, '0'),
        Image: 'img',
        State: 'running',
        Labels,
      })),
  } as unknown as Docker;
}

describe('protected paths of a read-write workspace (container side)', () => {
  let folder: string;

  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-protect-unit-'));
  });

  afterEach(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  it('mounts each entry read-only over its own place inside /workspace', () => {
    const mounts = protectedMountSettings('/home/me/project', [
      { name: '.git', kind: 'file', placeholder: false },
      { name: '.vscode', kind: 'directory', placeholder: true },
    ]);
    assert.deepEqual(mounts, [
      { Type: 'bind', Source: '/home/me/project/.git', Target: '/workspace/.git', ReadOnly: true },
      { Type: 'bind', Source: '/home/me/project/.vscode', Target: '/workspace/.vscode', ReadOnly: true },
    ]);
  });

  it('adds the mounts after the workspace mount and labels the placeholders', () => {
    const base = {
      Labels: { a: '1' },
      HostConfig: { Mounts: [{ Type: 'bind' as const, Source: '/p', Target: '/workspace', ReadOnly: false }] },
    };
    const options = withProtection(base, '/p', {
      entries: [
        { name: '.github', kind: 'directory', placeholder: true },
        { name: '.git', kind: 'directory', placeholder: false },
      ],
      notices: [],
    });
    assert.deepEqual(
      options.HostConfig!.Mounts!.map((mount) => mount.Target),
      ['/workspace', '/workspace/.github', '/workspace/.git'],
    );
    assert.equal(options.Labels![LABEL.placeholders], '[".github"]');
    assert.equal(options.Labels!.a, '1');
  });

  it('takes only single names', () => {
    for (const bad of ['', '.', '..', 'a/b', '../x', 'x\0y', 'a\\b'])
      assert.throws(
        () => checkProtectedName(bad),
        (error: unknown) => SandboxError.is(error, 'invalid-input'),
        JSON.stringify(bad),
      );
    assert.equal(checkProtectedName('.vscode'), '.vscode');
  });

  it('makes an empty folder for each missing name, keeps what exists, and says so', async () => {
    mkdirSync(join(folder, '.git'));
    writeFileSync(join(folder, '.vscode'), 'not a folder');
    const protection = await prepareProtection(engineWith([]), folder);
    assert.deepEqual(protection.entries, [
      { name: '.git', kind: 'directory', placeholder: false },
      { name: '.vscode', kind: 'file', placeholder: false },
      { name: '.github', kind: 'directory', placeholder: true },
      { name: '.devcontainer', kind: 'directory', placeholder: true },
    ]);
    assert.ok(lstatSync(join(folder, '.github')).isDirectory());
    assert.match(protection.notices[0]!, /^\.git, \.vscode, \.github, \.devcontainer in the workspace are read-only/);
    assert.match(protection.notices[1]!, /creating \.github, \.devcontainer in .*empty folders/);
    assert.deepEqual(
      PROTECTED_PATHS.slice(),
      protection.entries.map((entry) => entry.name),
    );
  });

  it('refuses a link or a special file instead of mounting whatever it points to', async () => {
    symlinkSync('/etc', join(folder, '.github'));
    await assert.rejects(
      prepareProtection(engineWith([]), folder),
      (error: unknown) => SandboxError.is(error, 'permission-denied') && /symbolic link/.test(error.message),
    );
    assert.ok(lstatSync(join(folder, '.github')).isSymbolicLink(), 'the link is left as it was');
    assert.ok(
      !existsSync(join(folder, '.git')) && !existsSync(join(folder, '.vscode')),
      'placeholders made before the refusal are gone again',
    );
  });

  it('does nothing when the protection is lifted', async () => {
    const protection = await prepareProtection(engineWith([]), folder, []);
    assert.deepEqual(protection, { entries: [], notices: [] });
    assert.ok(!existsSync(join(folder, '.git')));
  });

  it('shares an empty placeholder another session made, and removes placeholders only when nobody else uses them', async () => {
    const other = { [LABEL.workspace]: folder, [LABEL.placeholders]: '[".github"]' };
    mkdirSync(join(folder, '.github'));
    const second = await prepareProtection(engineWith([other]), folder, ['.github', '.devcontainer']);
    assert.deepEqual(
      second.entries.map((entry) => [entry.name, entry.placeholder]),
      [
        ['.github', true],
        ['.devcontainer', true],
      ],
    );
    assert.match(second.notices[1]!, /creating \.devcontainer in/);

    const mine = { [LABEL.workspace]: folder, [LABEL.placeholders]: '[".github", ".devcontainer"]' };
    assert.deepEqual(await releasePlaceholders(engineWith([other]), mine), ['.devcontainer']);
    assert.ok(existsSync(join(folder, '.github')), 'still used by the other session');
    writeFileSync(join(folder, '.github', 'kept'), 'x');
    assert.deepEqual(await releasePlaceholders(engineWith([]), mine), [], 'a folder with something in it stays');
    assert.ok(existsSync(join(folder, '.github', 'kept')));
  });
});
