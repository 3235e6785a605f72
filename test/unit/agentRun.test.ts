import assert from 'node:assert/strict';
import type { OpenOptions, Sandbox, SandboxEngine, SessionInfo } from '../../src/core/engine/engine';
import { CONTAINER_CAPABILITIES } from '../../src/core/engine/engineCapabilities';
import {
  agentSessionAsk,
  agentTools,
  checkOutput,
  jsonOfAnswer,
  sandboxBriefing,
  withSession,
} from '../../src/core/prompt/agentRun';
import { renderPrompt } from '../../src/core/prompt/render';
import { SandboxService } from '../../src/core/sessions/sandboxService';
import { parseSettings } from '../../src/core/spec/settings';
import type { SandboxSpec } from '../../src/core/spec/spec';
import { sessionReach } from '../../src/core/tools/reach';
import { sessionView } from '../../src/core/tools/targetView';

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

describe("running a .prompt agent: its sandbox's secrets", () => {
  /** Records what the service opens; no sandbox. */
  function recordingEngine(opened: { spec: SandboxSpec; options: OpenOptions }[]): SandboxEngine {
    return {
      kind: 'docker',
      capabilities: { ...CONTAINER_CAPABILITIES, networkAllowlist: true },
      info: async () => ({ kind: 'docker', product: 'fake', version: '0', endpoint: 'fake://' }),
      open: async (spec: SandboxSpec, options: OpenOptions = {}) => {
        opened.push({ spec, options });
        const info: SessionInfo = {
          id: 'c'.repeat(64),
          name: options.name,
          engine: 'docker',
          mode: spec.mode,
          runtime: spec.runtime,
          image: 'img',
          spec,
          workspaceAccess: spec.workspaceAccess,
          workspaceFolder: options.workspaceFolder,
          scope: options.scope ?? { kind: 'workspace' },
          client: options.client,
          network: spec.network,
          createdAt: new Date().toISOString(),
          state: 'running',
          notices: [],
        };
        return { info } as Sandbox;
      },
      attach: async () => {
        throw new Error('not here');
      },
      list: async () => [],
      remove: async () => {},
      dispose: async () => {},
    } as SandboxEngine;
  }

  it('opens the agent session with the secrets its sandbox block names, which its calls then reach', async () => {
    const outcome = await renderPrompt({
      file: 'agents/publisher.prompt',
      text: '---\nmetadata:\n  name: Publisher\nsandbox:\n  mode: code\n  secrets: [GITHUB_TOKEN, DB_PASSWORD]\n---\nPublish it.\n',
    });
    assert.ok(outcome.ok);
    const prompt = outcome.prompt;
    assert.deepEqual(prompt.secrets, ['GITHUB_TOKEN', 'DB_PASSWORD']);
    const ask = agentSessionAsk(prompt);
    assert.deepEqual(ask, {
      scope: { kind: 'agent', key: 'Publisher' },
      layer: prompt.sandbox,
      secrets: ['GITHUB_TOKEN', 'DB_PASSWORD'],
    });

    const opened: { spec: SandboxSpec; options: OpenOptions }[] = [];
    const settings = parseSettings({
      network: { mode: 'allowlist' },
      secrets: [
        { name: 'GITHUB_TOKEN', domains: ['api.github.com'] },
        { name: 'DB_PASSWORD', inside: true },
        { name: 'UNASKED', inside: true },
      ],
    });
    const service = new SandboxService({
      engine: () => recordingEngine(opened),
      settings: () => settings,
      workspaceFolder: () => '/ws',
      trusted: () => true,
      client: 'vscode',
      secretValue: async (name) => `value-of-${name}`,
    });
    const session = (await service.openSession(ask)).sandbox.info;
    assert.equal(opened.length, 1);
    assert.equal(opened[0]!.spec.env.DB_PASSWORD, 'value-of-DB_PASSWORD');
    assert.equal(opened[0]!.spec.env.UNASKED, undefined);
    assert.notEqual(opened[0]!.spec.env.GITHUB_TOKEN, 'value-of-GITHUB_TOKEN', 'a bound secret stays outside');
    assert.deepEqual(opened[0]!.options.boundSecretValues, { GITHUB_TOKEN: 'value-of-GITHUB_TOKEN' });
    // The confirmation of the agent's calls on its session shows the secrets it has.
    const view = sessionView(session, service);
    assert.ok(sessionReach(view).has('secrets'));
    assert.deepEqual(view.secrets, [
      'GITHUB_TOKEN → api.github.com (Authorization header)',
      'DB_PASSWORD (its value enters the sandbox)',
    ]);
  });

  it('asks for no secrets when the block names none, and a name the user does not offer fails the opening', async () => {
    const plain = await renderPrompt({ file: 'a.prompt', text: '---\nsandbox: python\n---\nHi\n' });
    assert.ok(plain.ok);
    assert.equal(plain.prompt.secrets, undefined);
    assert.equal('secrets' in agentSessionAsk(plain.prompt), false);
    const unknown = await renderPrompt({ file: 'a.prompt', text: '---\nsandbox:\n  secrets: [NPM_TOKEN]\n---\nHi\n' });
    assert.ok(unknown.ok, 'a name not offered is no error of the file');
    const service = new SandboxService({
      engine: () => recordingEngine([]),
      settings: () => parseSettings({}),
      workspaceFolder: () => '/ws',
      trusted: () => true,
      client: 'vscode',
    });
    await assert.rejects(service.openSession(agentSessionAsk(unknown.prompt)), /no secret named "NPM_TOKEN"/i);
  });
});
