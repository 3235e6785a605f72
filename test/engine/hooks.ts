/** Root hooks: every engine test file starts with an engine, and the run ends with nothing of ours left. */
import assert from 'node:assert/strict';
import { containersOfOurs, danglingVolumes, engineProblem } from './harness';

let volumesBefore: Set<string> | undefined;

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    if (await engineProblem()) return;
    volumesBefore = new Set(await danglingVolumes());
  },
  async afterAll(this: Mocha.Context) {
    if (await engineProblem()) return;
    const left = await containersOfOurs();
    assert.deepEqual(
      left.map((container) => container.Names[0]),
      [],
      'the engine tests left containers behind',
    );
    const newVolumes = (await danglingVolumes()).filter((name) => !volumesBefore?.has(name));
    assert.deepEqual(newVolumes, [], 'the engine tests left volumes behind');
  },
};
