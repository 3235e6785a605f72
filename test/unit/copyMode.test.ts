import assert from 'node:assert/strict';
import { holdReason } from '../../src/core/files/copyApply';
import { compareToBaseline } from '../../src/core/files/copyChanges';
import { fileDiff } from '../../src/core/files/copyDiff';
import { isText, unifiedHunks } from '../../src/core/files/unifiedDiff';
import { parseListing } from '../../src/core/files/copyListing';
import { linkInside, sha256, tooManyBytes, tooManyFiles, type CopyBaseline } from '../../src/core/files/folderCopy';
import { tightenAccess } from '../../src/core/policy/settingsLevels';
import { sessionSpec } from '../../src/core/sessions/sessionPolicy';
import { settingsSchema } from '../../src/core/spec/settings';
import { policyReach, sessionReach } from '../../src/core/tools/reach';

const entry = (text: string) => ({
  kind: 'file' as const,
  size: text.length,
  sha256: sha256(text),
  mtimeMs: 0,
  mode: 0o644,
});

describe('workspace access copy: policy', () => {
  it('orders copy between none and ro: a workspace may tighten ro to copy, never loosen copy to ro', () => {
    assert.equal(tightenAccess({ user: 'ro', workspace: ['copy'] }, 'none').value, 'copy');
    assert.equal(tightenAccess({ user: 'copy', workspace: ['rw'] }, 'none').value, 'copy');
    assert.equal(tightenAccess({ user: 'copy', workspace: ['none'] }, 'none').value, 'none');
  });

  it('gives an agent copy where the user allows ro, and no more than copy where the user allows copy', () => {
    const context = (workspaceAccess: string) => ({
      settings: settingsSchema.parse({ workspaceAccess }),
      trusted: true,
      folder: '/project',
    });
    assert.equal(sessionSpec({ workspaceAccess: 'copy' }, context('ro')).spec.workspaceAccess, 'copy');
    const asked = sessionSpec({ workspaceAccess: 'ro' }, context('copy'));
    assert.equal(asked.spec.workspaceAccess, 'copy');
    assert.match(asked.notices.join('\n'), /allows at most "copy"/);
  });

  it('counts a copy as reading the folder, never writing it', () => {
    assert.deepEqual([...policyReach('copy', 'off')], ['folder-read']);
    const reach = sessionReach({
      workspaceAccess: 'copy',
      network: false,
      networkAllow: [],
      open: true,
      packages: false,
    } as never);
    assert.deepEqual([...reach], ['folder-read']);
  });
});

describe('workspace access copy: pure parts', () => {
  it('keeps a link only when it stays inside the folder (and out of .git)', () => {
    assert.ok(linkInside('a/b', '../c'));
    assert.ok(!linkInside('a/b', '../../c'));
    assert.ok(!linkInside('a', '/etc/passwd'));
    assert.ok(!linkInside('a', '.git/config'));
  });

  it('names the numbers when a limit is exceeded', () => {
    assert.match(tooManyFiles(12_345, 10_000).message, /12,345 files to copy, more than the 10,000/);
    assert.match(
      tooManyBytes(3 * 1024 * 1024, 1024 * 1024).message,
      /3 MiB, more than the sandbox's disk limit of 1 MiB/,
    );
  });

  it('parses the sandbox listing and compares it with the baseline', () => {
    const listing = [
      'S',
      '4 644 same.txt',
      '3 755 dir/with space.txt',
      '8 644 changed.txt',
      'H',
      `${sha256('same')}  ./same.txt`,
      `${sha256('new')}  ./dir/with space.txt`,
      `${sha256('changed!')}  ./changed.txt`,
      'L',
      'link',
      '../x',
      '',
    ].join('\0');
    const current = parseListing(listing);
    assert.equal(current.get('dir/with space.txt')?.size, 3);
    assert.equal(current.get('dir/with space.txt')?.mode, 0o755);
    assert.equal(current.get('link')?.kind, 'symlink');
    const baseline: CopyBaseline = {
      folder: '/p',
      copiedAt: '',
      files: { 'same.txt': entry('same'), 'changed.txt': entry('before'), 'gone.txt': entry('gone') },
    };
    assert.deepEqual(
      compareToBaseline(baseline, current).map((change) => `${change.change} ${change.path}`),
      ['modified changed.txt', 'added dir/with space.txt', 'deleted gone.txt', 'added link'],
    );
  });

  it('writes unified hunks with context, separate hunks far apart, and the missing final newline', () => {
    const old = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const now = old.replace('line 2\n', 'line two\n').replace('line 19\n', '');
    assert.deepEqual(unifiedHunks(old, now), [
      '@@ -1,5 +1,5 @@',
      ' line 1',
      '-line 2',
      '+line two',
      ' line 3',
      ' line 4',
      ' line 5',
      '@@ -16,5 +16,4 @@',
      ' line 16',
      ' line 17',
      ' line 18',
      '-line 19',
      ' line 20',
    ]);
    assert.deepEqual(unifiedHunks('a\n', 'a'), ['@@ -1 +1 @@', '-a', '+a\n\\ No newline at end of file']);
  });

  it('marks binary files with their sizes', () => {
    assert.ok(!isText(new Uint8Array([0, 1])));
    assert.ok(!isText(new Uint8Array([0xff, 0xfe])));
    assert.ok(isText(Buffer.from('héllo\n')));
    assert.equal(
      fileDiff({ path: 'img.png', change: 'modified' }, new Uint8Array([0, 1, 2]), new Uint8Array([0])),
      'diff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ (3 → 1 bytes)\n',
    );
  });

  it('holds back protected paths and files that gain an executable bit, not those that had one', () => {
    const baseline: CopyBaseline = {
      folder: '/p',
      copiedAt: '',
      files: { 'tool.sh': { ...entry('x'), mode: 0o755 }, 'a.txt': entry('a') },
    };
    assert.match(
      holdReason({ path: '.github/workflows/ci.yml', change: 'added', newMode: 0o644 }, baseline) ?? '',
      /configuration/,
    );
    assert.match(
      holdReason({ path: '.Git/config', change: 'modified', newMode: 0o644 }, baseline) ?? '',
      /configuration/,
    );
    assert.match(holdReason({ path: 'a.txt', change: 'modified', newMode: 0o744 }, baseline) ?? '', /executable/);
    assert.equal(holdReason({ path: 'tool.sh', change: 'modified', newMode: 0o755 }, baseline), undefined);
    assert.equal(holdReason({ path: 'a.txt', change: 'deleted' }, baseline), undefined);
  });
});
