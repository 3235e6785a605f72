// Many calls in a row: zero failures and no growth in leaked containers, file descriptors, listeners
// or memory. SOAK_CALLS sets the count (npm run soak runs 1,000 of each; the test run a short version).
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { requireEngine } from '../engine/harness';
import { observe } from './report';
import { toolbox } from './toolbox';

const CALLS = Number(process.env.SOAK_CALLS ?? 30);

function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

async function heapAfterGc(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  let least = Infinity;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 20));
    least = Math.min(least, process.memoryUsage().heapUsed);
  }
  return least;
}

describe('soak', function () {
  before(async function () {
    await requireEngine(this);
  });

  it(`${CALLS} sandbox_run and ${CALLS} sandbox_exec calls: no failure, no leak`, async () => {
    const box = toolbox();
    try {
      // Warm up: the first calls load modules and fill caches that are meant to stay.
      for (let i = 0; i < 5; i++) {
        await box.call('sandbox_run', { runtime: 'bash', code: 'echo warm' });
        await box.call('sandbox_exec', { command: 'echo warm' });
      }
      await new Promise((resolve) => setTimeout(resolve, 2500)); // let sockets of the warm-up close
      const fdsBefore = openFds();
      const heapBefore = await heapAfterGc();
      const listenersBefore = process.listenerCount('exit') + process.listenerCount('SIGINT');
      const containersBefore = (await box.engine.docker.listContainers({ all: true })).length;
      let failures = 0;
      for (let i = 0; i < CALLS; i++) {
        const run = await box.call('sandbox_run', { runtime: 'python', code: `print(${i} * 2)` });
        if (!run.ok || !run.text.includes(String(i * 2))) failures++;
        const exec = await box.call('sandbox_exec', { command: `echo exec-${i}` });
        if (!exec.ok || !exec.text.includes(`exec-${i}`)) failures++;
      }
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const fdsAfter = openFds();
      const heapAfter = await heapAfterGc();
      const containersAfter = (await box.engine.docker.listContainers({ all: true })).length;
      const growth = (heapAfter - heapBefore) / heapBefore;
      assert.equal(failures, 0);
      assert.equal(containersAfter, containersBefore, 'no container leaked');
      assert.ok(fdsAfter <= fdsBefore + 3, `file descriptors ${fdsBefore} → ${fdsAfter}`);
      assert.equal(process.listenerCount('exit') + process.listenerCount('SIGINT'), listenersBefore);
      assert.ok(growth < 0.05, `heap grew ${(growth * 100).toFixed(1)}% (${heapBefore} → ${heapAfter})`);
      observe(
        'soak',
        `${CALLS} runs + ${CALLS} execs`,
        'zero failures; no leaked containers, descriptors, listeners; heap growth under 5%',
        `0 failures, containers ${containersBefore}→${containersAfter}, fds ${fdsBefore}→${fdsAfter}, heap ${(growth * 100).toFixed(1)}%`,
      );
    } finally {
      await box.dispose();
    }
  });
});
