/** Root hooks: every engine test file starts with an engine, and the run ends with nothing of ours left. */
import assert from 'node:assert/strict';
import { containersOfOurs, danglingVolumes, engineProblem, removeWaitingWarm } from './harness';

let volumesBefore: Set<string> | undefined;

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    if (await engineProblem()) return;
    volumesBefore = new Set(await danglingVolumes());
  },
  async afterAll(this: Mocha.Context) {
    if (await engineProblem()) return;
    // The shared warm containers CLI runs leave for the next one are meant to stay (they end by
    // themselves); those still waiting go, and anything else left is a leftover.
    await removeWaitingWarm();
    // A compute container that ran to its end is removed by the engine (AutoRemove) a moment after
    // the process that used it returned: those may still be listed, stopped, for that moment.
    let left = await containersOfOurs();
    for (let attempt = 0; attempt < 50 && left.some((container) => container.State !== 'running'); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      left = await containersOfOurs();
    }
    assert.deepEqual(
      left.map((container) => container.Names[0]),
      [],
      'the engine tests left containers behind',
    );
    const newVolumes = (await danglingVolumes()).filter((name) => !volumesBefore?.has(name));
    assert.deepEqual(newVolumes, [], 'the engine tests left volumes behind');
  },
};
