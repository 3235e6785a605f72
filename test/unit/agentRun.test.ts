import assert from 'node:assert/strict';
import { agentTools, checkOutput, jsonOfAnswer, sandboxBriefing, withSession } from '../../src/core/prompt/agentRun';

describe('running a .prompt agent: the pure parts', () => {
  it('offers the tools the file names, short or full, and every sandbox tool when it names none', () => {
    assert.deepEqual(agentTools(['exec', 'sandbox_fs_write', 'exec']), {
      tools: ['sandbox_exec', 'sandbox_fs_write'],
      unknown: [],
    });
    assert.deepEqual(agentTools(['web_search', 'run']).unknown, ['web_search']);
    assert.ok(agentTools([]).tools.includes('sandbox_run'));
    assert.equal(agentTools([]).tools.length, 10);
  });

  it("fills the agent's session into session tools' calls that name none, and leaves the rest", () => {
    assert.deepEqual(withSession('sandbox_exec', { command: 'ls' }, 'agent:a/default'), {
      command: 'ls',
      sandbox_id: 'agent:a/default',
    });
    assert.deepEqual(withSession('sandbox_exec', { command: 'ls', sandbox_id: 'other' }, 'agent:a/default'), {
      command: 'ls',
      sandbox_id: 'other',
    });
    assert.deepEqual(withSession('sandbox_run', { code: '1' }, 'agent:a/default'), { code: '1' });
    assert.deepEqual(withSession('sandbox_open', { session: 'x' }, 'agent:a/default'), { session: 'x' });
    assert.equal(withSession('sandbox_exec', 'not an object', 'agent:a/default'), 'not an object');
    assert.match(sandboxBriefing('agent:a/default', ['sandbox_exec']), /sandbox_id "agent:a\/default"/);
  });

  it('finds the JSON of an answer: whole, fenced, or inside prose', () => {
    assert.deepEqual(jsonOfAnswer('{"a": 1}').value, { a: 1 });
    assert.deepEqual(jsonOfAnswer('Here:\n```json\n{"a": 2}\n```\nDone.').value, { a: 2 });
    assert.deepEqual(jsonOfAnswer('The result is {"a": 3}.').value, { a: 3 });
    assert.match(jsonOfAnswer('no json here').problem!, /holds no JSON value/);
  });

  it('checks the answer against the output schema, naming the field', () => {
    const schema = {
      type: 'object',
      properties: { count: { type: 'integer' }, name: { type: 'string' } },
      required: ['count'],
    };
    assert.deepEqual(checkOutput({ schema }, '{"count": 2}').problems, []);
    const bad = checkOutput({ schema }, '{"count": "many"}');
    assert.equal(bad.problems.length, 1);
    assert.match(bad.problems[0]!, /^count: /);
    assert.match(checkOutput({ schema }, '{}').problems[0]!, /^count: /);
    assert.deepEqual(checkOutput({ format: 'json' }, '[1, 2]'), { value: [1, 2], problems: [] });
    assert.deepEqual(checkOutput({}, 'free text'), { problems: [] });
    assert.match(checkOutput({ format: 'json' }, 'free text').problems[0]!, /no JSON/);
  });
});
