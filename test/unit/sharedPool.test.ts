// The pure parts of the warm containers shared between CLI processes (sharedPool.ts): the pool's
// settings, who owns a shared container, and when gc takes one.
import assert from 'node:assert/strict';
import { sharedPoolFromEnv } from '../../src/engines/docker/computeRuns';
import { claimantOf, fillRequestSchema } from '../../src/engines/docker/sharedPool';
import { sessionFromSummary } from '../../src/engines/docker/sessionInfo';
import { LABEL } from '../../src/engines/docker/labels';
import { orphanReason, type OrphanCheck } from '../../src/core/sessions/orphans';
import { resolveSpec } from '../../src/core/spec/resolveSpec';

const KEY = 'a'.repeat(64);

function summary(names: string[], until: string) {
  const spec = resolveSpec({ runtime: 'bash', mode: 'compute' });
  return {
    Id: 'b'.repeat(64),
    Names: names,
    Image: 'agent-sandbox/bash:bookworm',
    State: 'running',
    Labels: {
      [LABEL.managed]: '1',
      [LABEL.mode]: 'compute',
      [LABEL.spec]: JSON.stringify(spec),
      [LABEL.created]: '2026-11-25T01:00:00.000Z',
      [LABEL.pool]: '1',
      [LABEL.warm]: KEY,
      [LABEL.warmUntil]: until,
      [LABEL.ownerHost]: 'here',
      [LABEL.ownerUid]: '1000',
    },
  };
}

const check = (now: number, alive: boolean): OrphanCheck => ({
  now,
  graceMs: 1000,
  lease: () => undefined,
  folderExists: () => true,
  host: 'here',
  processAlive: () => alive,
});

describe('shared warm containers', () => {
  it('AGENT_SANDBOX_POOL_SIZE sets how many wait per configuration: 2 unset, 0 off, at most 8', () => {
    assert.deepEqual(sharedPoolFromEnv({}), { size: 2, waitSeconds: 600 });
    assert.equal(sharedPoolFromEnv({ AGENT_SANDBOX_POOL_SIZE: '0' }).size, 0);
    assert.equal(sharedPoolFromEnv({ AGENT_SANDBOX_POOL_SIZE: '3' }).size, 3);
    assert.equal(sharedPoolFromEnv({ AGENT_SANDBOX_POOL_SIZE: '50' }).size, 8);
    assert.equal(sharedPoolFromEnv({ AGENT_SANDBOX_POOL_SIZE: 'lots' }).size, 0, 'not a number: off, not the default');
    assert.equal(sharedPoolFromEnv({ AGENT_SANDBOX_WARM_SECONDS: '30' }).waitSeconds, 30);
    assert.equal(sharedPoolFromEnv({ AGENT_SANDBOX_WARM_SECONDS: '-5' }).waitSeconds, 600);
  });

  it('a claimed container carries its claimant in its name; a waiting one has none', () => {
    assert.equal(claimantOf(['/agent-sandbox-run-0123456789ab-by-4242']), 4242);
    assert.equal(claimantOf(['/agent-sandbox-warm-0123456789ab']), undefined);
    assert.equal(claimantOf(undefined), undefined);
  });

  it('gc leaves a waiting container until its wait is over, and a claimed one while its claimant lives', () => {
    const end = Date.parse('2026-11-25T01:10:00.000Z');
    const waiting = sessionFromSummary(summary(['/agent-sandbox-warm-0123456789ab'], new Date(end).toISOString()));
    assert.equal(waiting.mode, 'compute');
    assert.equal(waiting.owner?.waitsUntil, new Date(end).toISOString());
    assert.equal(orphanReason(waiting, check(end - 60_000, false)), undefined);
    assert.equal(orphanReason(waiting, check(end + 30_000, false)), undefined, 'a moment to end by itself');
    assert.equal(orphanReason(waiting, check(end + 120_000, false)), 'it is a shared warm container whose wait ended');
    const claimed = sessionFromSummary(
      summary(['/agent-sandbox-run-0123456789ab-by-4242'], new Date(end).toISOString()),
    );
    assert.deepEqual(claimed.owner, { pid: 4242, host: 'here', pooled: true });
    assert.equal(orphanReason(claimed, check(end - 60_000, true)), undefined);
    assert.equal(
      orphanReason(claimed, check(end - 60_000, false)),
      'it is a warm pool container of process 4242, which is gone',
    );
  });

  it('a filler takes only a request it can use: a 64-hex key, a size within bounds, a wait of 10 s to a day', () => {
    const good = { createOptions: { Image: 'x' }, key: KEY, size: 2, waitSeconds: 600 };
    assert.ok(fillRequestSchema.safeParse(good).success);
    for (const bad of [
      { ...good, key: '../../etc' },
      { ...good, size: 0 },
      { ...good, size: 9 },
      { ...good, waitSeconds: 5 },
      { ...good, waitSeconds: 2 * 24 * 3600 },
      { ...good, createOptions: 'x' },
    ])
      assert.equal(fillRequestSchema.safeParse(bad).success, false, JSON.stringify(bad));
  });
});
