/** Root hooks: every engine test file starts with an engine, and the run ends with nothing of ours left. */
import assert from 'node:assert/strict';
import { containersOfOurs, engineProblem } from './harness';

export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    if (await engineProblem()) return;
    const left = await containersOfOurs();
    assert.deepEqual(left.map((container) => container.Names[0]), [], 'the engine tests left containers behind');
  },
};
