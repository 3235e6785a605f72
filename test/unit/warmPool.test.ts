import assert from 'node:assert/strict';
import type { SessionInfo } from '../../src/core/engine/engine';
import { orphanReason, type OrphanCheck } from '../../src/core/sessions/orphans';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { WarmPool } from '../../src/engines/docker/pool';

interface Item {
  id: number;
  alive: boolean;
}

function fakePool(size: number, options: { idleMs?: number; maxKeys?: number } = {}) {
  let next = 0;
  const discarded: number[] = [];
  const pool = new WarmPool<Item>(
    { size, ...options },
    { alive: (item) => item.alive, discard: async (item) => void discarded.push(item.id) },
  );
  const make = () => Promise.resolve({ id: ++next, alive: true });
  return { pool, make, discarded, made: () => next };
}

describe('the warm pool', () => {
  it('hands out each item once and refills to its size', async () => {
    const { pool, make, made } = fakePool(2);
    assert.equal(pool.take('a', make), undefined, 'empty at first: the caller makes its own');
    pool.retire({ id: 0, alive: false });
    await pool.settled();
    assert.equal(pool.snapshot().ready, 2);
    const first = pool.take('a', make)!;
    const second = pool.take('a', make)!;
    assert.notEqual(first.id, second.id);
    pool.retire(first);
    pool.retire(second);
    await pool.settled();
    assert.equal(pool.snapshot().ready, 2);
    assert.equal(made(), 4);
    assert.deepEqual({ hits: pool.snapshot().hits, misses: pool.snapshot().misses }, { hits: 2, misses: 1 });
  });

  it('makes nothing with size 0', async () => {
    const { pool, make, made } = fakePool(0);
    assert.equal(pool.take('a', make), undefined);
    await pool.settled();
    assert.equal(made(), 0);
  });

  it('skips and discards items that died while waiting', async () => {
    const { pool, make, discarded } = fakePool(2);
    pool.take('a', make);
    pool.release();
    await pool.settled();
    // Both ready items die; the next take finds none alive.
    const internal = pool as unknown as { entries: Map<string, { ready: Item[] }> };
    for (const item of internal.entries.get('a')!.ready) item.alive = false;
    assert.equal(pool.take('a', make), undefined);
    pool.release();
    await pool.settled();
    assert.deepEqual(discarded, [1, 2]);
    assert.equal(pool.snapshot().ready, 2, 'refilled with live ones');
  });

  it('refills after a burst of more runs than its size, not during it', async () => {
    const { pool, make, made } = fakePool(2);
    const taken = Array.from({ length: 5 }, () => pool.take('a', make));
    await pool.settled();
    assert.equal(made(), 0, 'nothing made while five runs are under way');
    for (const item of taken) {
      if (item) pool.retire(item);
      else pool.release();
    }
    await pool.settled();
    assert.equal(made(), 2);
    assert.equal(pool.snapshot().ready, 2);
  });

  it('keeps at most maxKeys configurations warm, dropping the least recently used', async () => {
    const { pool, make, discarded } = fakePool(1, { maxKeys: 2 });
    for (const key of ['a', 'b', 'a', 'c']) {
      const item = pool.take(key, make);
      if (item) pool.retire(item);
      else pool.release();
      await pool.settled();
    }
    assert.equal(pool.snapshot().keys, 2);
    assert.ok(discarded.includes(2), 'b was drained');
  });

  it('drains after a quiet spell and on dispose, and waits for removals', async () => {
    const { pool, make, discarded } = fakePool(2, { idleMs: 20 });
    pool.take('a', make);
    pool.release();
    await pool.settled();
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(pool.snapshot().ready, 0);
    assert.equal(discarded.length, 2);

    const other = fakePool(2);
    other.pool.take('a', other.make);
    other.pool.retire({ id: 99, alive: false });
    await new Promise((resolve) => setImmediate(resolve));
    await other.pool.dispose();
    assert.deepEqual(
      other.discarded.sort((x, y) => x - y),
      [1, 2, 99],
    );
    assert.equal(other.pool.take('a', other.make), undefined, 'a disposed pool makes nothing');
  });
});

describe('orphaned compute sandboxes', () => {
  const base: SessionInfo = {
    id: 'c1',
    engine: 'docker',
    mode: 'compute',
    runtime: 'python',
    image: 'python',
    spec: resolveSpec({ mode: 'compute' }),
    workspaceAccess: 'none',
    scope: { kind: 'workspace' },
    network: false,
    createdAt: new Date(0).toISOString(),
    state: 'running',
    notices: [],
  };
  const check = (alive: boolean): OrphanCheck => ({
    now: Date.now(),
    graceMs: 1000,
    lease: () => undefined,
    folderExists: () => true,
    host: 'here',
    processAlive: () => alive,
  });

  it('belong to their owner process while it lives, and are orphans after', () => {
    const warm = { ...base, owner: { pid: 4242, host: 'here', pooled: true } };
    assert.equal(orphanReason(warm, check(true)), undefined);
    assert.equal(orphanReason(warm, check(false)), 'it is a warm pool container of process 4242, which is gone');
    assert.equal(
      orphanReason({ ...warm, owner: { ...warm.owner, pooled: false } }, check(false)),
      'it is a compute sandbox of process 4242, which is gone',
    );
  });

  it('from another machine, are orphans only when older than any call may last', () => {
    const foreign = { ...base, owner: { pid: 1, host: 'elsewhere', pooled: true } };
    assert.match(orphanReason(foreign, check(true))!, /of elsewhere left for more than a day/);
    assert.equal(orphanReason({ ...foreign, createdAt: new Date().toISOString() }, check(true)), undefined);
  });
});
