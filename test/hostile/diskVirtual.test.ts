// The disk limit on the virtual engine (issue 14, item 5): its in-memory places and a host folder
// mounted read-write, measured on the host.
import assert from 'node:assert/strict';
import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { VirtualEngine } from '../../src/engines/virtual/virtualEngine';
import { observe } from './report';

const MiB = 1024 * 1024;
/** A megabyte of text in a shell variable, written again and again. */
const MEGABYTE = 's=$(printf %01048576d 0)';

function bytesIn(dir: string): number {
  return readdirSync(dir).reduce((sum, name) => {
    const stat = lstatSync(join(dir, name));
    return sum + (stat.isDirectory() ? bytesIn(join(dir, name)) : stat.size);
  }, 0);
}

describe('the virtual engine holds the disk limit', function () {
  this.timeout(120_000);
  const engine = new VirtualEngine();
  after(() => engine.dispose());

  it('in its memory: a write past the limit fails with "disk limit reached", and the session stays usable', async () => {
    const sandbox = await engine.open(resolveSpec({ mode: 'code', runtime: 'bash', limits: { diskBytes: '16m' } }), {
      name: 'virtual-disk',
    });
    const fill = await sandbox.exec({
      command: `${MEGABYTE}; for i in $(seq 1 20); do printf %s "$s" >> /tmp/fill || break; done`,
    });
    assert.equal(fill.diskLimitReached, true, JSON.stringify(fill));
    assert.match(fill.hint!, /^disk limit reached: .*16 MiB/);
    await assert.rejects(
      sandbox.writeFiles([{ path: 'big.bin', content: 'x'.repeat(9 * MiB) }]),
      (error: unknown) => SandboxError.is(error, 'disk-limit') && /disk limit reached/.test(error.message),
    );
    await sandbox.exec({ command: 'rm /tmp/fill' });
    assert.equal(
      (await sandbox.writeFiles([{ path: 'big.bin', content: 'x'.repeat(9 * MiB) }])).files.length,
      1,
      'deleting made room again',
    );
    assert.equal((await sandbox.exec({ command: 'echo alive' })).stdout, 'alive\n');
    observe(
      'disk (virtual)',
      'virtual engine: 20 MiB into /tmp, then a 9 MiB file through the file tools (limit 16 MiB)',
      '"disk limit reached" for both; room again after rm; the session usable',
      'disk limit reached for both; usable',
      true,
    );
    await sandbox.close();
  });

  it('on a folder mounted read-write: the session is stopped past the limit and says why', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-virtual-rw-'));
    try {
      const sandbox = await engine.open(
        resolveSpec({ mode: 'code', runtime: 'bash', workspaceAccess: 'rw', limits: { diskBytes: '16m' } }),
        { name: 'virtual-rw', workspaceFolder: folder },
      );
      // About 20 MiB a second: the watch looks once a second, so it stops the writer within about 20 MiB past the limit.
      const fill = await sandbox.exec({
        command: `${MEGABYTE}; for i in $(seq 1 200); do printf %s "$s" > /workspace/f$i; sleep 0.05; done`,
        timeoutSeconds: 60,
      });
      assert.equal(fill.diskLimitReached, true, JSON.stringify({ ...fill, stdout: '' }));
      assert.match(fill.hint!, /stopped the session: disk limit reached: it wrote .* into the workspace folder/);
      const grew = bytesIn(folder);
      observe(
        'disk (virtual)',
        'virtual engine, rw folder: 200 MiB, 1 MiB at a time (limit 16 MiB)',
        'stopped with "disk limit reached"; the host folder grew by at most the limit and about a second of writing',
        `stopped; the host folder grew ${(grew / MiB).toFixed(1)} MiB`,
        grew <= 16 * MiB + 48 * MiB,
      );
      assert.ok(grew <= 16 * MiB + 48 * MiB, `the folder grew by ${grew} bytes`);
      await assert.rejects(
        sandbox.exec({ command: 'echo alive' }),
        (error: unknown) =>
          SandboxError.is(error, 'session-dead') && /no longer running: disk limit reached/.test(error.message),
      );
      await sandbox.close();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
