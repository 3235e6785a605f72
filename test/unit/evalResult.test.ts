import assert from 'node:assert/strict';
import type { EvalResult } from '../../src/core/interpreters/persistentInterpreter';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { evalAsExec } from '../../src/core/tools/evalResult';

const base: EvalResult = {
  outcome: 'timeout',
  stdout: '',
  stderr: '',
  stdoutBytes: 0,
  stderrBytes: 0,
  durationMs: 1000,
  stateLost: false,
  images: [],
  notices: [],
};
const limits = resolveSpec({}).limits;

describe('an interpreter call as an exec result: what the hint says', () => {
  it('says nothing ran when the interpreter never started the code, not that it was interrupted', () => {
    const hint = evalAsExec({ ...base, notStarted: true, error: 'not started' }, 1, limits, []).hint!;
    assert.match(hint, /did not start this code; nothing of it ran and the state is kept/);
    assert.doesNotMatch(hint, /interrupted/);
  });

  it('says the code was interrupted and the state kept at a timeout, and that it is gone when lost', () => {
    assert.match(
      evalAsExec(base, 5, limits, []).hint!,
      /interrupted at its 5 s limit; the interpreter and its state are kept/,
    );
    assert.match(evalAsExec({ ...base, stateLost: true }, 5, limits, []).hint!, /state is gone/);
  });
});
