// The Sandbox panel's view of a session's secrets (issue 23, visible use): names and bindings from
// the spec, never a value or a placeholder; how often the proxy added each bound one and how often
// its placeholder went out unreplaced, counted from the network decisions' notes.
import assert from 'node:assert/strict';
import type { SandboxEngine, SessionInfo } from '../../src/core/engine/engine';
import type { DecisionQuery, LoggedDecision, NetworkDecisionPage } from '../../src/core/network/decisionLog';
import { resolveSecrets, secretSettingsSchema, secretSpecLayers } from '../../src/core/secrets/catalog';
import { secretsLayer } from '../../src/core/secrets/knownSecrets';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import type { ActivityView } from '../../src/shared/protocol';
import { PanelDecisions } from '../../src/vscode/panel/panelDecisions';
import { SecretCounts, noteKind, notesSuffix, secretsView } from '../../src/vscode/panel/panelSecrets';

const CANARY = {
  TOKEN: 'canary-token-value-3f9a1c',
  BASIC: 'canary-basic-value-77d0e2',
  DB_PASSWORD: 'canary-db-value-5be461',
  HOST_KEY: 'canary-host-value-c1a8f0',
};
const words = { add: 'add one', setValue: (name: string) => `set ${name}` };

/** A spec as the service makes one: two bound secrets, an inside one, and a host variable marked secret. */
async function specWithSecrets() {
  const entries = secretSettingsSchema.parse([
    { name: 'TOKEN', domains: ['api.bound.test'] },
    { name: 'BASIC', domains: ['registry.bound.test', 'mirror.bound.test'], basicAuthUser: 'ci' },
    { name: 'DB_PASSWORD', inside: true },
  ]);
  const resolved = await resolveSecrets(entries, async (name) => CANARY[name as keyof typeof CANARY], words);
  return resolveSpec({ mode: 'code' }, secretsLayer({ HOST_KEY: CANARY.HOST_KEY }), ...secretSpecLayers(resolved), {
    networkAllow: ['api.bound.test', 'registry.bound.test', 'mirror.bound.test'],
  });
}

function session(id: string, spec: SessionInfo['spec']): SessionInfo {
  return {
    id: id.padEnd(64, '0'),
    name: id,
    engine: 'docker',
    mode: 'code',
    runtime: spec.runtime,
    image: 'img',
    spec,
    workspaceAccess: 'none',
    scope: { kind: 'workspace' },
    network: false,
    createdAt: '2026-01-01T00:00:00.000Z',
    state: 'running',
    notices: [],
  };
}

let seq = 0;
function decision(host: string, secrets?: string[]): LoggedDecision {
  return {
    seq: ++seq,
    at: new Date(Date.UTC(2026, 10, 24, 0, 0, seq)).toISOString(),
    host,
    port: 443,
    allowed: true,
    rule: host,
    bytesSent: 10,
    bytesReceived: 20,
    ...(secrets ? { secrets } : {}),
  };
}

/** An engine whose proxy logged these decisions per container, read as the decision log reads them. */
function engineWith(logs: Map<string, LoggedDecision[]>): SandboxEngine & { queries: DecisionQuery[] } {
  const queries: DecisionQuery[] = [];
  return {
    queries,
    async networkDecisions(id: string, query: DecisionQuery = {}): Promise<NetworkDecisionPage> {
      queries.push(query);
      const all = logs.get(id) ?? [];
      const newer = all.filter((entry) => entry.seq > (query.after ?? 0));
      const max = query.max ?? 200;
      return { decisions: newer.slice(-max), cursor: all.at(-1)?.seq ?? 0, truncated: newer.length > max };
    },
  } as unknown as SandboxEngine & { queries: DecisionQuery[] };
}

describe('the panel: a session’s secrets', () => {
  it('reads each note for one name: added, not replaced (any way), or about another secret', () => {
    assert.equal(noteKind('TOKEN', 'TOKEN added for api.bound.test'), 'used');
    assert.equal(noteKind('TOKEN', 'TOKEN sent toward other.test: not replaced'), 'refused');
    assert.equal(noteKind('TOKEN', 'TOKEN in a URL toward api.bound.test: not replaced'), 'refused');
    assert.equal(noteKind('TOKEN', 'TOKEN in a body toward api.bound.test: not replaced'), 'refused');
    assert.equal(
      noteKind('TOKEN', 'TOKEN toward api.bound.test not in the form Authorization: Bearer {value}: not replaced'),
      'refused',
    );
    assert.equal(noteKind('TOKEN', 'TOKEN for api.bound.test: not replaced, the proxy has no value'), 'refused');
    assert.equal(noteKind('TOKEN', 'TOKEN_2 added for api.bound.test'), undefined, 'a longer name is another secret');
    assert.equal(noteKind('TOKEN', 'api.bound.test: socket hang up'), undefined);
  });

  it('counts per container and name: a decision once per kind, other containers and names apart', () => {
    const counts = new SecretCounts();
    const names = ['TOKEN', 'BASIC'];
    assert.equal(counts.count('c1', names, decision('api.bound.test', ['TOKEN added for api.bound.test'])), true);
    counts.count('c1', names, decision('api.bound.test', ['TOKEN added for api.bound.test']));
    counts.count(
      'c1',
      names,
      decision('other.test', [
        'TOKEN sent toward other.test: not replaced',
        'TOKEN in a URL toward other.test: not replaced',
        'BASIC sent toward other.test: not replaced',
      ]),
    );
    counts.count('c2', names, decision('api.bound.test', ['TOKEN added for api.bound.test']));
    assert.equal(counts.count('c1', names, decision('pypi.org')), false, 'no notes, nothing counted');
    assert.equal(counts.count('c1', [], decision('x.test', ['TOKEN added for x.test'])), false, 'not its secret');
    assert.deepEqual(Object.fromEntries(counts.of('c1')), {
      TOKEN: { used: 2, refused: 1 },
      BASIC: { used: 0, refused: 1 },
    });
    assert.deepEqual(Object.fromEntries(counts.of('c2')), { TOKEN: { used: 1, refused: 0 } });
    counts.keepOnly(['c2']);
    assert.equal(counts.of('c1').size, 0, 'a container gone is forgotten');
  });

  it('lists names and bindings, inside ones marked, and never a value or a placeholder', async () => {
    const spec = await specWithSecrets();
    // The spec holds what must not reach the panel: the inside values, the placeholders.
    const placeholders = (spec.boundSecrets ?? []).map((secret) => secret.placeholder);
    assert.equal(placeholders.length, 2);
    assert.ok(JSON.stringify(spec).includes(CANARY.DB_PASSWORD) && JSON.stringify(spec).includes(placeholders[0]!));

    const view = secretsView(spec, new Map([['TOKEN', { used: 3, refused: 1 }]]));
    assert.deepEqual(view.secrets, [
      { name: 'TOKEN', binding: '→ api.bound.test, Authorization header', inside: false, used: 3, refused: 1 },
      {
        name: 'BASIC',
        binding: '→ registry.bound.test, mirror.bound.test, basic auth as ci',
        inside: false,
        used: 0,
        refused: 0,
      },
      { name: 'HOST_KEY', binding: 'value inside the sandbox', inside: true, used: 0, refused: 0 },
      { name: 'DB_PASSWORD', binding: 'value inside the sandbox', inside: true, used: 0, refused: 0 },
    ]);
    const text = JSON.stringify(view);
    for (const value of [...Object.values(CANARY), ...placeholders, 'agent-sandbox-placeholder-'])
      assert.ok(!text.includes(value), `the view holds no ${value}`);
    assert.deepEqual(secretsView(resolveSpec({ mode: 'code' })), {}, 'no secrets, no list');
  });

  it('follows the decisions: counts every one read, shows the newest with their notes, and says when counts change', async () => {
    const spec = await specWithSecrets();
    const bound = session('bound', spec);
    const plain = session('plain', resolveSpec({ mode: 'code' }, { networkAllow: ['pypi.org'] }));
    const older = Array.from({ length: 30 }, () => decision('api.bound.test', ['TOKEN added for api.bound.test']));
    const logs = new Map([
      [bound.id, [...older, decision('other.test', ['TOKEN sent toward other.test: not replaced'])]],
      [plain.id, [decision('pypi.org', ['TOKEN added for pypi.org'])]],
    ]);
    const engine = engineWith(logs);
    const shown: ActivityView[] = [];
    let changes = 0;
    const panel = new PanelDecisions(
      (entry) => shown.push(entry),
      (text) => text.split(CANARY.TOKEN).join('[secret:TOKEN]'),
      () => changes++,
    );

    await panel.follow(engine, [bound, plain]);
    assert.deepEqual(Object.fromEntries(panel.secretUse(bound.id)), { TOKEN: { used: 30, refused: 1 } });
    assert.equal(panel.secretUse(plain.id).size, 0, 'a session without bound secrets counts nothing');
    assert.equal(changes, 1);
    assert.equal(shown.filter((entry) => entry.sandboxId === 'bound').length, 20, 'the first look shows the newest 20');
    assert.equal(
      shown.find((entry) => entry.sandboxId === 'bound')!.summary,
      'api.bound.test:443 allowed (api.bound.test), 10 B out, 20 B in; TOKEN added',
    );
    assert.equal(
      shown.filter((entry) => entry.sandboxId === 'bound').at(-1)!.summary,
      'other.test:443 allowed (other.test), 10 B out, 20 B in; TOKEN sent toward other.test: not replaced',
    );

    // Later looks read only what is new; nothing new changes no count.
    await panel.follow(engine, [bound, plain]);
    assert.equal(changes, 1);
    logs
      .get(bound.id)!
      .push(decision('api.bound.test', ['TOKEN added for api.bound.test', `api.bound.test: echo ${CANARY.TOKEN}`]));
    await panel.follow(engine, [bound, plain]);
    assert.equal(changes, 2);
    assert.deepEqual(Object.fromEntries(panel.secretUse(bound.id)), { TOKEN: { used: 31, refused: 1 } });
    assert.equal(
      shown.at(-1)!.summary,
      'api.bound.test:443 allowed (api.bound.test), 10 B out, 20 B in; TOKEN added; api.bound.test: echo [secret:TOKEN]',
      'redacted as every summary is',
    );
    assert.ok(engine.queries.slice(-2).every((query) => query.after !== undefined));

    await panel.follow(engine, [plain]);
    assert.equal(panel.secretUse(bound.id).size, 0, 'a closed session is forgotten');
  });

  it('shortens a note added for the decision’s own host, keeps the others whole', () => {
    assert.equal(notesSuffix('api.bound.test', undefined), '');
    assert.equal(
      notesSuffix('api.bound.test', [
        'TOKEN added for api.bound.test',
        'OTHER added for elsewhere.test',
        'TOKEN in a URL toward api.bound.test: not replaced',
      ]),
      '; TOKEN added; OTHER added for elsewhere.test; TOKEN in a URL toward api.bound.test: not replaced',
    );
  });
});
