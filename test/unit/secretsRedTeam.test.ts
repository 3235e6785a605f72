// Red team of secrets offered by name: an agent (the model calling tools, code in a sandbox, a
// repository's .prompt file) trying to get a bound secret's value, a secret nobody confirmed, more
// network through a bound secret's domains, or a value into an error, the spec or a log. Each case
// is an attempt that must fail; they run the real service, catalog and policy with an in-memory engine.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  EngineCapabilities,
  OpenOptions,
  Sandbox,
  SandboxEngine,
  SessionFilter,
  SessionInfo,
} from '../../src/core/engine/engine';
import { CONTAINER_CAPABILITIES } from '../../src/core/engine/engineCapabilities';
import { SandboxError } from '../../src/core/errors';
import { agentSessionAsk } from '../../src/core/prompt/agentRun';
import { KnownSecrets } from '../../src/core/secrets/knownSecrets';
import { SandboxService } from '../../src/core/sessions/sandboxService';
import { sessionSpec, type PolicyContext } from '../../src/core/sessions/sessionPolicy';
import { parseSettings } from '../../src/core/spec/settings';
import { specFromFrontmatter } from '../../src/core/spec/frontmatterSpec';
import type { SandboxSpec } from '../../src/core/spec/spec';
import { readSecretsFile } from '../../src/cli/secretFlags';
import { admitWithin } from '../../src/core/tools/admit';
import { ReachGrants, approvalFor } from '../../src/core/tools/approvals';
import { RUN_TARGET } from '../../src/core/tools/reach';
import { toolSpec } from '../../src/core/tools/toolList';

const TOKEN_VALUE = 'ghp_redteamCanaryValue0123456789abcdef';
const DB_VALUE = 'db-redteam-canary-7f3a91';

const SECRETS = [
  { name: 'TOKEN', domains: ['api.bound.test'] },
  { name: 'DB_PASSWORD', inside: true },
];

/** An in-memory engine that records what each open was given (the spec, and the values for the proxy). */
class RecordingEngine implements SandboxEngine {
  readonly kind = 'docker' as const;
  capabilities: EngineCapabilities = { ...CONTAINER_CAPABILITIES, networkAllowlist: true };
  readonly sessions: SessionInfo[] = [];
  readonly opens: { spec: SandboxSpec; boundSecretValues?: Readonly<Record<string, string>> }[] = [];
  async info() {
    return { kind: 'docker' as const, product: 'fake', version: '0', endpoint: 'fake://' };
  }
  async open(spec: SandboxSpec, options: OpenOptions = {}): Promise<Sandbox> {
    this.opens.push({ spec, boundSecretValues: options.boundSecretValues });
    const info: SessionInfo = {
      id: `${'0'.repeat(60)}${String(this.opens.length).padStart(4, '0')}`,
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
    this.sessions.push(info);
    return { info } as Sandbox;
  }
  async attach(id: string): Promise<Sandbox> {
    const info = this.sessions.find((session) => session.id === id);
    if (!info) throw new SandboxError('session-not-found', 'gone');
    return { info } as Sandbox;
  }
  async list(filter: SessionFilter = {}) {
    return this.sessions.filter(
      (session) => !filter.workspaceFolder || session.workspaceFolder === filter.workspaceFolder,
    );
  }
  async remove(id: string) {
    const index = this.sessions.findIndex((session) => session.id === id);
    if (index >= 0) this.sessions.splice(index, 1);
  }
  async dispose() {}
}

function world(settings: object = {}, values: Record<string, string> = { TOKEN: TOKEN_VALUE, DB_PASSWORD: DB_VALUE }) {
  const engine = new RecordingEngine();
  let parsed = parseSettings({ network: { mode: 'allowlist', allow: ['pypi.org'] }, secrets: SECRETS, ...settings });
  const read: string[] = [];
  const logs: string[] = [];
  const secrets = new KnownSecrets();
  const service = new SandboxService({
    engine: () => engine,
    settings: () => parsed,
    workspaceFolder: () => '/ws',
    trusted: () => true,
    client: 'vscode',
    secrets,
    injectedEnv: () => ({}),
    secretValue: async (name) => (read.push(name), values[name]),
    log: (_level, message) => logs.push(message),
  });
  return {
    engine,
    service,
    read,
    logs,
    secrets,
    setSettings: (next: object) => (parsed = parseSettings({ ...next })),
  };
}

/** Every text an attempt could have produced, checked for the values. */
function assertNoValue(texts: readonly unknown[]): void {
  for (const text of texts) {
    const shown = typeof text === 'string' ? text : JSON.stringify(text);
    assert.ok(!shown.includes(TOKEN_VALUE), `the bound value leaked: ${shown.slice(0, 200)}`);
    assert.ok(!shown.includes(DB_VALUE), `the inside value leaked: ${shown.slice(0, 200)}`);
  }
}

async function failure(promise: Promise<unknown>): Promise<SandboxError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(SandboxError.is(error), String(error));
    return error;
  }
  assert.fail('expected the attempt to fail');
}

describe('secrets offered by name: red team', () => {
  describe('(a) a bound value never enters the sandbox, a result or the spec', () => {
    it('a session opened with a bound secret holds a placeholder; the value goes to the engine for the proxy alone', async () => {
      const { engine, service, secrets } = world();
      const opened = await service.openSession({ session: 'build', secrets: ['TOKEN'] });
      const { spec, boundSecretValues } = engine.opens[0]!;
      assertNoValue([spec, opened.sandbox.info, opened.notices, service.secretsOf(opened.sandbox.info)]);
      assert.deepEqual(boundSecretValues, { TOKEN: TOKEN_VALUE });
      const placeholder = spec.boundSecrets![0]!.placeholder;
      assert.equal(spec.env.TOKEN, placeholder);
      // Both the value and the placeholder are redacted from then on.
      assert.equal(secrets.redact(`a ${TOKEN_VALUE} b ${placeholder}`), 'a [secret:TOKEN] b [secret:TOKEN]');
    });

    it('a bound secret named like an injected host variable still holds the placeholder, not the host value', async () => {
      const engine = new RecordingEngine();
      const service = new SandboxService({
        engine: () => engine,
        settings: () => parseSettings({ network: { mode: 'allowlist', allow: [] }, secrets: SECRETS }),
        workspaceFolder: () => '/ws',
        trusted: () => true,
        injectedEnv: () => ({ TOKEN: TOKEN_VALUE }),
        secretValue: async () => TOKEN_VALUE,
      });
      await service.openSession({ secrets: ['TOKEN'] });
      assert.match(engine.opens[0]!.spec.env.TOKEN!, /^agent-sandbox-placeholder-/);
    });

    it('a .prompt sandbox block cannot carry bindings, placeholders or environment of its own', () => {
      const layer = specFromFrontmatter({
        mode: 'code',
        allow_domains: ['evil.test'],
        env: { TOKEN: 'x' },
        boundSecrets: [{ name: 'TOKEN', domains: ['evil.test'], how: { kind: 'basic', user: 'u' } }],
      } as object);
      assert.equal((layer as { boundSecrets?: unknown }).boundSecrets, undefined);
      assert.equal((layer as { env?: unknown }).env, undefined);
    });
  });

  describe('(c) a bound secret`s domains join the allowlist, and nothing more', () => {
    const context = (settings: object): PolicyContext => ({
      settings: parseSettings({ secrets: SECRETS, ...settings }),
      trusted: true,
      folder: '/ws',
    });

    it('an agent asking for the whole network and other names with a bound secret gets the allowlist and the bound domains only', () => {
      for (const network of [{ mode: 'off' }, { mode: 'allowlist', allow: ['pypi.org'] }]) {
        const ask = agentSessionAsk({
          name: 'greedy',
          sandbox: { mode: 'code', network: true, networkAllow: ['evil.test', '*.bound.test', 'bound.test'] },
          secrets: ['TOKEN'],
        });
        const { spec } = sessionSpec(ask, context({ network }));
        assert.equal(spec.network, false);
        assert.deepEqual(spec.networkAllow, ['api.bound.test']);
      }
    });

    it('a whole-network user gets the allowlist instead, and the asked names stay within it', () => {
      const { spec, notices } = sessionSpec(
        { networkAllow: ['other.test'], secrets: ['TOKEN'] },
        context({ network: { mode: 'full' } }),
      );
      assert.equal(spec.network, false);
      assert.deepEqual(spec.networkAllow, ['other.test', 'api.bound.test']);
      assert.ok(notices.some((notice) => /api\.bound\.test/.test(notice)));
    });

    it('an inside secret opens no network', () => {
      const { spec } = sessionSpec({ secrets: ['DB_PASSWORD'] }, context({ network: { mode: 'off' } }));
      assert.equal(spec.network, false);
      assert.deepEqual(spec.networkAllow, []);
    });

    it('the one-off sandbox`s network is the same: no domain beyond the bound ones', () => {
      const { service } = world({ network: { mode: 'off' } });
      assert.deepEqual(service.computeNetwork(['evil.test'], ['TOKEN']), {
        network: false,
        networkAllow: ['api.bound.test'],
        secrets: ['TOKEN → api.bound.test (Authorization header)'],
      });
    });
  });

  describe('(e) a session gets the secrets it was opened with, no others', () => {
    it('sandbox_open with secrets on an open session reads no value and gives it nothing', async () => {
      const { engine, service, read } = world();
      await service.openSession({ session: 'build' });
      const again = await service.openSession({ session: 'build', secrets: ['TOKEN', 'DB_PASSWORD'] });
      assert.equal(again.created, false);
      assert.deepEqual(read, []);
      assert.equal(engine.opens.length, 1);
      assert.deepEqual(service.secretsOf(again.sandbox.info), []);
    });

    it('two openings of one name at once: the second joins the first, with its secrets only', async () => {
      const { engine, service } = world();
      const [first, second] = await Promise.all([
        service.openSession({ session: 'race' }),
        service.openSession({ session: 'race', secrets: ['DB_PASSWORD'] }),
      ]);
      assert.equal(first.sandbox.info.id, second.sandbox.info.id);
      assert.equal(engine.opens.length, 1);
      assert.equal(engine.opens[0]!.spec.env.DB_PASSWORD, undefined);
    });

    it('restart asks again for the same names only, and drops one no longer offered', async () => {
      const { engine, service, read, setSettings } = world();
      await service.openSession({ session: 'build', secrets: ['TOKEN'] });
      await service.restart('build');
      assert.deepEqual(read, ['TOKEN', 'TOKEN']);
      assert.equal(engine.opens[1]!.spec.env.DB_PASSWORD, undefined);
      assert.notEqual(
        engine.opens[0]!.spec.boundSecrets![0]!.placeholder,
        engine.opens[1]!.spec.boundSecrets![0]!.placeholder,
      );
      setSettings({ network: { mode: 'allowlist', allow: [] }, secrets: [{ name: 'DB_PASSWORD', inside: true }] });
      await service.restart('build');
      assert.deepEqual(read, ['TOKEN', 'TOKEN']);
      assert.equal(engine.opens[2]!.spec.boundSecrets?.length ?? 0, 0);
      assert.equal(engine.opens[2]!.spec.env.DB_PASSWORD, undefined);
    });

    it('an inside secret another opener gave counts as the session`s secret here too, offered or not; a host variable every sandbox gets does not', async () => {
      const { engine, service } = world({ secrets: [] });
      const opened = await service.openSession({ session: 'x' });
      opened.sandbox.info.spec.secretEnv = ['DB_PASSWORD', 'HOST_TOKEN'];
      opened.sandbox.info.spec.env.DB_PASSWORD = 'given';
      opened.sandbox.info.spec.env.HOST_TOKEN = 'host';
      opened.sandbox.info.spec.insideSecrets = ['DB_PASSWORD'];
      assert.deepEqual(service.secretsOf(opened.sandbox.info), ['DB_PASSWORD (its value enters the sandbox)']);
      assert.equal(engine.opens.length, 1);
    });
  });

  describe('(f) errors name secrets, never values', () => {
    it('an unknown name fails before any value is read, listing names only', async () => {
      const { engine, service, read } = world();
      const error = await failure(service.openSession({ session: 'x', secrets: ['TOKEN', 'NOPE'] }));
      assert.equal(error.reason, 'invalid-input');
      assert.match(error.message, /no secret named "NOPE".*TOKEN, DB_PASSWORD/);
      assert.deepEqual(read, []);
      assert.equal(engine.opens.length, 0);
      const run = await failure(service.run({ code: 'print(1)', secrets: ['NOPE', 'TOKEN'] }));
      assert.equal(run.reason, 'invalid-input');
      assert.deepEqual(read, []);
    });

    it('a bound value a header cannot carry is refused without showing it, and nothing opens', async () => {
      for (const bad of [
        `${TOKEN_VALUE}\n`,
        `${TOKEN_VALUE}\r\nX-Evil: 1`,
        `${TOKEN_VALUE}\u0000`,
        `${TOKEN_VALUE}€`,
      ]) {
        const { engine, service, logs } = world({}, { TOKEN: bad, DB_PASSWORD: DB_VALUE });
        const error = await failure(service.openSession({ session: 'x', secrets: ['DB_PASSWORD', 'TOKEN'] }));
        assert.equal(error.reason, 'secret-unavailable');
        assert.match(error.message, /TOKEN .*cannot carry/);
        assertNoValue([error.message, error.hint, logs]);
        assert.equal(engine.opens.length, 0);
      }
    });

    it('a missing value says where to set it and opens nothing', async () => {
      const { engine, service } = world({}, { DB_PASSWORD: DB_VALUE });
      const error = await failure(service.openSession({ session: 'x', secrets: ['DB_PASSWORD', 'TOKEN'] }));
      assert.equal(error.reason, 'secret-unavailable');
      assert.match(error.hint ?? '', /Sandbox: Add Secret/);
      assertNoValue([error.message, error.hint]);
      assert.equal(engine.opens.length, 0);
    });

    it('a secrets file line that is not NAME=VALUE is refused without showing it', () => {
      const folder = mkdtempSync(join(tmpdir(), 'redteam-'));
      try {
        const path = join(folder, 'secrets');
        writeFileSync(path, `TOKEN=${TOKEN_VALUE}\n${DB_VALUE}\n`);
        chmodSync(path, 0o600);
        assert.throws(
          () => readSecretsFile(path),
          (error: Error) => /line 2/.test(error.message) && !error.message.includes(DB_VALUE),
        );
        writeFileSync(path, ` =${DB_VALUE}\n`);
        assert.throws(
          () => readSecretsFile(path),
          (error: Error) => /line 1/.test(error.message) && !error.message.includes(DB_VALUE),
        );
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });
  });
});

describe('secrets offered by name: red team, the gaps it found (each failed before its fix)', () => {
  const refuse = (sandboxId: string) => new SandboxError('permission-denied', `refused ${sandboxId}`);
  const exec = toolSpec('sandbox_exec');
  const input = { sandbox_id: 'build', command: 'env' };

  it('a grant for all one-off sandboxes never covers secrets: each one-off sandbox with secrets is asked about', () => {
    const grants = new ReachGrants();
    grants.grant(RUN_TARGET, new Set(['allowlist', 'secrets'] as const));
    const target = { sandboxId: RUN_TARGET, open: false } as Parameters<ReachGrants['granted']>[0];
    const granted = grants.granted(target);
    assert.ok(granted.has('allowlist'));
    assert.ok(!granted.has('secrets'));
    assert.deepEqual(approvalFor({ changes: true }, new Set(['secrets'] as const), granted, 'reach'), {
      kind: 'ask',
      widening: ['secrets'],
    });
  });

  it('a flag-policy caller refuses a session holding a bound secret it does not offer the same way', async () => {
    const { service } = world({ secrets: [{ name: 'WRITE', domains: ['api.bound.test'] }] }, { WRITE: TOKEN_VALUE });
    const opened = await service.openSession({ session: 'build', secrets: ['WRITE'] });
    const policy = (entries: object[]) => ({
      allowed: new Set(['allowlist', 'secrets'] as const),
      protectedPaths: [],
      keptBy: 'k',
      liftWith: 'l',
      allowedNames: ['pypi.org'],
      offeredSecrets: parseSettings({ secrets: entries }).secrets,
    });
    const admit = (entries: object[]) =>
      admitWithin(exec, input, policy(entries), service, refuse)(opened.sandbox.info);
    assert.throws(
      () => admit([{ name: 'READ', domains: ['api.bound.test'] }]),
      /holds the secret WRITE → api\.bound\.test/,
    );
    assert.throws(() => admit([{ name: 'WRITE', domains: ['api.bound.test'], header: 'x-api-key: {value}' }]), /WRITE/);
    assert.doesNotThrow(() => admit([{ name: 'WRITE', domains: ['api.bound.test'] }]));
  });

  it('an inside secret of a session counts whoever offers it: its reach is secrets, and a caller without it is refused', async () => {
    const { service } = world();
    const opened = await service.openSession({ session: 'build', secrets: ['DB_PASSWORD'] });
    // Another process offering nothing sees the secret all the same.
    const { service: other } = world({ secrets: [] });
    assert.deepEqual(other.secretsOf(opened.sandbox.info), ['DB_PASSWORD (its value enters the sandbox)']);
    const admit = admitWithin(
      exec,
      input,
      {
        allowed: new Set(['allowlist', 'secrets'] as const),
        protectedPaths: [],
        keptBy: 'k',
        liftWith: 'l',
        allowedNames: [],
        offeredSecrets: [],
      },
      other,
      refuse,
    );
    assert.throws(() => admit(opened.sandbox.info), /holds the secret DB_PASSWORD \(its value enters the sandbox\)/);
  });

  it('an offered secret`s domains are allowed only to a session that holds that secret', async () => {
    const { service } = world({ network: { mode: 'full' } });
    const plain = await service.openSession({ session: 'plain', networkAllow: ['api.bound.test'] });
    assert.deepEqual(plain.sandbox.info.spec.networkAllow, ['api.bound.test']);
    const policy = {
      allowed: new Set(['allowlist', 'secrets'] as const),
      protectedPaths: [],
      keptBy: 'k',
      liftWith: 'l',
      allowedNames: ['pypi.org'],
      offeredSecrets: parseSettings({ secrets: SECRETS }).secrets,
    };
    assert.throws(
      () => admitWithin(exec, { ...input, sandbox_id: 'plain' }, policy, service, refuse)(plain.sandbox.info),
      /can reach api\.bound\.test on the network, beyond the allowlist here/,
    );
    const { service: bound } = world();
    const holding = await bound.openSession({ session: 'build', secrets: ['TOKEN'] });
    assert.doesNotThrow(() => admitWithin(exec, input, policy, bound, refuse)(holding.sandbox.info));
  });
});
