import assert from 'node:assert/strict';
import { analyzePrompt } from '../../src/core/prompt/analyzePrompt';
import { applyEdits } from '../../src/core/prompt/textPositions';

/** Applies the first fix of the first problem that has one, and returns the new text. */
function fixOnce(text: string, which: 'preferred' | 'any' = 'preferred'): string {
  const problem = analyzePrompt(text).problems.find((candidate) =>
    candidate.fixes.some((fix) => which === 'any' || fix.preferred),
  );
  assert.ok(problem, `no problem with a fix in ${JSON.stringify(text)}`);
  const fix = problem.fixes.find((candidate) => which === 'any' || candidate.preferred)!;
  return applyEdits(text, fix.edits);
}

const CASES: { what: string; before: string; after: string; which?: 'any' }[] = [
  {
    what: 'a misspelled shorthand runtime',
    before: '---\nsandbox: pyhton\n---\nbody\n',
    after: '---\nsandbox: python\n---\nbody\n',
  },
  {
    what: 'a misspelled runtime',
    before: '---\nsandbox:\n  runtime: pyhton\n---\n',
    after: '---\nsandbox:\n  runtime: python\n---\n',
  },
  {
    what: 'a misspelled mode',
    before: '---\nsandbox:\n  mode: cod\n---\n',
    after: '---\nsandbox:\n  mode: code\n---\n',
  },
  {
    what: 'a misspelled session',
    before: '---\nsandbox:\n  mode: code\n  session: agnet\n---\n',
    after: '---\nsandbox:\n  mode: code\n  session: agent\n---\n',
  },
  {
    what: 'a quoted, misspelled runtime',
    before: '---\nsandbox:\n  runtime: "nodee"\n---\n',
    after: '---\nsandbox:\n  runtime: node\n---\n',
  },
  {
    what: 'a misspelled key',
    before: '---\nsandbox:\n  alow_network: true\n---\n',
    after: '---\nsandbox:\n  allow_network: true\n---\n',
  },
  {
    what: 'pip_packges',
    before: '---\nsandbox:\n  pip_packges: [pandas]\n---\n',
    after: '---\nsandbox:\n  pip_packages: [pandas]\n---\n',
  },
  {
    what: 'a misspelled limit',
    before: '---\nsandbox:\n  limits:\n    memroy: 1g\n---\n',
    after: '---\nsandbox:\n  limits:\n    memory: 1g\n---\n',
  },
  {
    what: 'cpus for cpu',
    before: '---\nsandbox:\n  limits:\n    cpus: 2\n---\n',
    after: '---\nsandbox:\n  limits:\n    cpu: 2\n---\n',
  },
  {
    what: 'the harness spelling timeout',
    before: '---\nsandbox:\n  timeout: 30\n---\n',
    after: '---\nsandbox:\n  timeout_seconds: 30\n---\n',
  },
  {
    what: 'a quoted boolean',
    before: '---\nsandbox:\n  allow_network: "yes"\n---\n',
    after: '---\nsandbox:\n  allow_network: true\n---\n',
  },
  {
    what: 'a quoted number',
    before: '---\nsandbox:\n  timeout_seconds: "300"\n---\n',
    after: '---\nsandbox:\n  timeout_seconds: 300\n---\n',
  },
  {
    what: 'one package instead of a list',
    before: '---\nsandbox:\n  pip_packages: pandas\n---\n',
    after: '---\nsandbox:\n  pip_packages: [pandas]\n---\n',
  },
  {
    what: 'memory in bytes that meant MiB',
    before: '---\nsandbox:\n  limits:\n    memory: 512\n---\n',
    after: '---\nsandbox:\n  limits:\n    memory: 512m\n---\n',
  },
  {
    what: 'runtime linux without a mode',
    before: '---\nsandbox:\n  runtime: linux\n---\n',
    after: '---\nsandbox:\n  mode: code\n  runtime: linux\n---\n',
  },
  {
    what: 'runtime linux in compute mode',
    before: '---\nsandbox:\n  runtime: linux\n  mode: compute\n---\n',
    after: '---\nsandbox:\n  runtime: linux\n  mode: code\n---\n',
  },
  {
    what: 'runtime linux in a flow block',
    before: '---\nsandbox: {runtime: linux}\n---\n',
    after: '---\nsandbox: {mode: code, runtime: linux}\n---\n',
  },
  {
    what: 'the shorthand sandbox: linux',
    before: '---\nsandbox: linux # a shell\n---\n',
    after: '---\nsandbox:\n  mode: code\n  runtime: linux # a shell\n---\n',
  },
  {
    what: 'a session in compute mode',
    before: '---\nmetadata:\n  name: x\nsandbox:\n    session: agent\n---\n',
    after: '---\nmetadata:\n  name: x\nsandbox:\n    mode: code\n    session: agent\n---\n',
    which: 'any',
  },
];

describe('.prompt quick fixes', () => {
  for (const { what, before, after, which } of CASES) {
    it(`fix ${what}, leaving a clean file`, () => {
      const fixed = fixOnce(before, which ?? 'preferred');
      assert.equal(fixed, after);
      assert.deepEqual(analyzePrompt(fixed).problems, []);
    });
  }

  it('fixes several near misses one after the other', () => {
    let text = '---\nsandbox:\n  runtime: pyhton\n  alow_network: "true"\n  limits:\n    memroy: 1g\n---\nbody\n';
    // The key's fix reveals that its value is quoted, which has its own fix: four in all.
    for (let i = 0; i < 4; i++) text = fixOnce(text);
    assert.equal(
      text,
      '---\nsandbox:\n  runtime: python\n  allow_network: true\n  limits:\n    memory: 1g\n---\nbody\n',
    );
    assert.deepEqual(analyzePrompt(text).problems, []);
  });

  it('offers no fix where none is obvious', () => {
    for (const text of [
      '---\nsandbox: ruby\n---\n',
      '---\nsandbox:\n  colour: blue\n---\n',
      '---\nsandbox:\n  runtime: node\n  pip_packages: [x]\n---\n',
    ]) {
      assert.deepEqual(
        analyzePrompt(text).problems.flatMap((problem) => problem.fixes),
        [],
        text,
      );
    }
  });
});
