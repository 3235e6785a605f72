// The list of a copy session's files is written inside the sandbox, where the agent may rewrite it
// before the host reads it: a name that leaves the folder must never reach the folder's side.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ExecRequest, Sandbox } from '../../src/core/engine/engine';
import { planApply } from '../../src/core/files/copyApply';
import { discardCopyChanges } from '../../src/core/files/copyDiscard';
import { sha256, type CopyBaseline } from '../../src/core/files/folderCopy';
import { isPlainRelativePath } from '../../src/core/files/hostFiles/hostPath';
import { resolveSpec } from '../../src/core/spec/resolveSpec';

/** A sandbox whose file listing is the one given, and whose files all hold `data`. */
function forgingSandbox(listing: string, data: string, deleted: string[]): Sandbox {
  const spec = resolveSpec({ runtime: 'bash', workspaceAccess: 'copy' });
  return {
    info: { id: 'c0ffee', spec } as never,
    async exec(request: ExecRequest) {
      const script = request.cmd?.[2] ?? '';
      if (script.startsWith('cd /workspace'))
        return { exitCode: 0, stdout: '/tmp/.agent-sandbox-list.forged\n', stderr: '' } as never;
      if (script.startsWith('dd '))
        return { exitCode: 0, stdout: Buffer.from(listing).toString('base64'), stderr: '' } as never;
      return { exitCode: 0, stdout: '', stderr: '' } as never;
    },
    async readFile(path: string) {
      return {
        path,
        content: Buffer.from(data).toString('base64'),
        encoding: 'base64',
        size: data.length,
        offset: 0,
        truncated: false,
      };
    },
    async deletePath(path: string) {
      deleted.push(path);
      return { path, deleted: true };
    },
    async writeFiles() {
      throw new Error('nothing is written into the sandbox here');
    },
  } as unknown as Sandbox;
}

describe('copy sessions: a forged list of files', () => {
  it('knows a plain relative path', () => {
    for (const good of ['a.txt', 'src/a.txt', '.github/ci.yml']) assert.ok(isPlainRelativePath(good), good);
    for (const bad of ['', '/etc/passwd', '../x', 'a/../../x', 'a//b', './a', 'a/.', 'a\0b'])
      assert.ok(!isPlainRelativePath(bad), JSON.stringify(bad));
  });

  it('holds back a name that leaves the folder instead of touching anything outside it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'agent-sandbox-forged-'));
    const folder = join(root, 'project');
    const outside = join(root, 'escape.txt');
    writeFileSync(join(dirname(folder), 'keep'), '');
    const data = 'planted\n';
    const listing = ['S', `${data.length} 644 ../escape.txt`, 'H', `${sha256(data)}  ./../escape.txt`, 'L', ''].join(
      '\0',
    );
    const baseline: CopyBaseline = { folder, copiedAt: new Date(0).toISOString(), files: {} };
    const deleted: string[] = [];
    const sandbox = forgingSandbox(listing, data, deleted);
    const plan = await planApply(sandbox, baseline, { maxBytes: 1024 * 1024 });
    assert.deepEqual(plan.ready, []);
    assert.deepEqual(plan.conflicts, []);
    assert.deepEqual(plan.heldBack, [{ path: '../escape.txt', why: 'not a plain path inside the folder' }]);
    const outcome = await discardCopyChanges(sandbox, baseline, {
      maxBytes: 1024 * 1024,
      stateDir: join(root, 'state'),
    });
    assert.deepEqual(outcome.kept, [{ path: '../escape.txt', why: 'not a plain path inside the folder' }]);
    assert.deepEqual(deleted, []);
    assert.deepEqual(readdirSync(root).sort(), ['keep']);
    assert.throws(() => readdirSync(outside));
  });
});
