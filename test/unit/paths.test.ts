import assert from 'node:assert/strict';
import { SandboxError } from '../../src/core/errors';
import { resolveFiles } from '../../src/core/files/files';
import { resolveWorkspacePath } from '../../src/core/files/paths';

describe('path policy', () => {
  it('resolves relative paths against /workspace', () => {
    assert.equal(resolveWorkspacePath('a.txt'), '/workspace/a.txt');
    assert.equal(resolveWorkspacePath('./src/../src/main.py'), '/workspace/src/main.py');
    assert.equal(resolveWorkspacePath('/workspace/data/'), '/workspace/data');
    assert.equal(resolveWorkspacePath('.'), '/workspace');
  });

  for (const escape of [
    '../etc/passwd',
    '/etc/passwd',
    'a/../../etc',
    '/workspace/../etc',
    '/workspacex/a',
    '..',
    '/',
  ]) {
    it(`refuses ${escape}`, () => {
      assert.throws(
        () => resolveWorkspacePath(escape),
        (error: unknown) =>
          SandboxError.is(error, 'path-outside-workspace') &&
          /outside \/workspace/.test(error.message) &&
          Boolean(error.hint),
      );
    });
  }

  it('treats encoded and look-alike dots as plain names', () => {
    assert.equal(resolveWorkspacePath('%2e%2e/x'), '/workspace/%2e%2e/x');
    assert.equal(resolveWorkspacePath('\uff0e\uff0e/x'), '/workspace/\uff0e\uff0e/x');
  });

  it('refuses NUL bytes, empty paths and overlong paths', () => {
    assert.throws(() => resolveWorkspacePath('a\0b'), /NUL/);
    assert.throws(() => resolveWorkspacePath(''), /path is required/);
    assert.throws(() => resolveWorkspacePath('a/'.repeat(3000)), /longer than 4096 bytes/);
    assert.throws(() => resolveWorkspacePath('x'.repeat(256)), /longer than 255 bytes/);
  });
});

describe('file input', () => {
  const limits = { maxFileSizeBytes: 10, maxFiles: 2 };

  it('decodes text and base64', () => {
    const [text, binary] = resolveFiles(
      [
        { path: 'a.txt', content: 'hé' },
        { path: 'b.bin', content: 'AAEC', encoding: 'base64' },
      ],
      limits,
    );
    assert.deepEqual([...text!.data], [...Buffer.from('hé')]);
    assert.deepEqual([...binary!.data], [0, 1, 2]);
  });

  it('enforces the size and count caps before anything is written', () => {
    assert.throws(
      () => resolveFiles([{ path: 'a', content: 'x'.repeat(11) }], limits),
      (error: unknown) => SandboxError.is(error, 'file-too-large'),
    );
    assert.throws(
      () =>
        resolveFiles(
          [
            { path: 'a', content: '' },
            { path: 'b', content: '' },
            { path: 'c', content: '' },
          ],
          limits,
        ),
      (error: unknown) => SandboxError.is(error, 'too-many-files'),
    );
  });

  it('refuses bad base64, duplicates and paths outside /workspace', () => {
    assert.throws(() => resolveFiles([{ path: 'a', content: '!!', encoding: 'base64' }], limits), /not valid base64/);
    assert.throws(
      () =>
        resolveFiles(
          [
            { path: 'a', content: '' },
            { path: './a', content: '' },
          ],
          limits,
        ),
      /appears twice/,
    );
    assert.throws(
      () => resolveFiles([{ path: '../a', content: '' }], limits),
      (error: unknown) => SandboxError.is(error, 'path-outside-workspace'),
    );
  });
});
