import assert from 'node:assert/strict';
import type {
  EngineCapabilities,
  OpenOptions,
  Sandbox,
  SandboxEngine,
  SessionFilter,
  SessionInfo,
} from '../../src/core/engine/engine';
import { SandboxError } from '../../src/core/errors';
import { SandboxService } from '../../src/core/sessions/sandboxService';
import { parseSettings } from '../../src/core/spec/settings';
import type { SandboxSpec } from '../../src/core/spec/spec';
import { CONTAINER_CAPABILITIES } from '../../src/core/engine/engineCapabilities';

/** An in-memory engine: enough to check the service's policy and bookkeeping, not a sandbox. */
class FakeEngine implements SandboxEngine {
  readonly kind = 'docker' as const;
  capabilities: EngineCapabilities = { ...CONTAINER_CAPABILITIES, networkAllowlist: true };
  readonly sessions: SessionInfo[] = [];
  opened = 0;
  async info() {
    return { kind: 'docker' as const, product: 'fake', version: '0', endpoint: 'fake://' };
  }
  async open(spec: SandboxSpec, options: OpenOptions = {}): Promise<Sandbox> {
    this.opened++;
    const info: SessionInfo = {
      id: `${'0'.repeat(60)}${String(this.opened).padStart(4, '0')}`,
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
    return this.handle(info);
  }
  async attach(id: string): Promise<Sandbox> {
    const info = this.sessions.find((session) => session.id === id);
    if (!info) throw new SandboxError('session-not-found', 'gone');
    return this.handle(info);
  }
  async list(filter: SessionFilter = {}) {
    return this.sessions.filter(
      (session) =>
        (!filter.name || session.name === filter.name) &&
        (!filter.workspaceFolder || session.workspaceFolder === filter.workspaceFolder),
    );
  }
  async remove(id: string) {
    const index = this.sessions.findIndex((session) => session.id === id);
    if (index >= 0) this.sessions.splice(index, 1);
  }
  async dispose() {}
  private handle(info: SessionInfo): Sandbox {
    return { info } as Sandbox;
  }
}

function service(
  settings: object,
  options: { trusted?: boolean; folder?: string; clock?: { now: number }; logs?: string[] } = {},
) {
  const engine = new FakeEngine();
  const parsed = parseSettings(settings);
  return {
    engine,
    service: new SandboxService({
      engine: () => engine,
      settings: () => parsed,
      workspaceFolder: () => ('folder' in options ? options.folder : '/ws'),
      trusted: () => options.trusted ?? true,
      client: 'vscode',
      now: options.clock ? () => options.clock!.now : undefined,
      log: (_level, message) => options.logs?.push(message),
      injectedEnv: () => ({ API_KEY: 'from-host' }),
    }),
  };
}

describe('sandbox service policy', () => {
  it('opens the default session once and reuses it', async () => {
    const { engine, service: sandboxes } = service({});
    const first = await sandboxes.sandbox(undefined);
    const second = await sandboxes.sandbox(undefined);
    assert.equal(first.info.name, 'default');
    assert.equal(second, first);
    assert.equal(engine.opened, 1);
  });

  it('opens concurrent first calls only once', async () => {
    const { engine, service: sandboxes } = service({});
    await Promise.all([sandboxes.sandbox(undefined), sandboxes.sandbox(undefined), sandboxes.openSession({})]);
    assert.equal(engine.opened, 1);
  });

  it('never gives an agent more workspace access or network than the user allows', async () => {
    const { service: sandboxes } = service({ workspaceAccess: 'ro', network: { mode: 'off' } });
    const opened = await sandboxes.openSession({ session: 'greedy', workspaceAccess: 'rw', network: true });
    assert.equal(opened.sandbox.info.workspaceAccess, 'ro');
    assert.equal(opened.sandbox.info.network, false);
    assert.equal(opened.notices.length, 2);
    assert.match(opened.notices[0]!, /allows at most "ro"/);
    const modest = await sandboxes.openSession({ session: 'modest', workspaceAccess: 'none' });
    assert.equal(modest.sandbox.info.workspaceAccess, 'none');
  });

  it('shares nothing of an untrusted workspace or of no folder', async () => {
    const untrusted = service({ workspaceAccess: 'rw' }, { trusted: false }).service;
    assert.equal(untrusted.allowedAccess(), 'none');
    const opened = await untrusted.openSession({ workspaceAccess: 'rw' });
    assert.equal(opened.sandbox.info.workspaceAccess, 'none');
    assert.match(opened.notices[0]!, /not trusted/);
    assert.equal(service({ workspaceAccess: 'rw' }, { folder: undefined }).service.allowedAccess(), 'none');
  });

  it('finds sessions by name or id prefix, and says when there is none', async () => {
    const { engine, service: sandboxes } = service({});
    const opened = await sandboxes.openSession({ session: 'build' });
    const other = new SandboxService({
      engine: () => engine,
      settings: () => parseSettings({}),
      workspaceFolder: () => '/ws',
      trusted: () => true,
    });
    assert.equal((await other.sandbox('build')).info.id, opened.sandbox.info.id);
    assert.equal((await other.sandbox(opened.sandbox.info.id.slice(0, 12))).info.name, 'build');
    await assert.rejects(
      other.sandbox('nope'),
      (error: unknown) => SandboxError.is(error, 'session-not-found') && /sandbox_open/.test(error.hint!),
    );
  });

  it('closes and restarts with the same name', async () => {
    const { engine, service: sandboxes } = service({});
    const opened = await sandboxes.openSession({ session: 'x', runtime: 'node' });
    const restarted = await sandboxes.restart('x');
    assert.notEqual(restarted.sandbox.info.id, opened.sandbox.info.id);
    assert.equal(restarted.sandbox.info.runtime, 'node');
    await sandboxes.close('x');
    assert.equal(engine.sessions.length, 0);
    await assert.rejects(sandboxes.close('x'), (error: unknown) => SandboxError.is(error, 'session-not-found'));
  });
});

describe('sandbox service scopes and lifecycle', () => {
  it('never lets two scopes share a container', async () => {
    const { engine, service: sandboxes } = service({});
    const workspace = await sandboxes.openSession({ session: 'x' });
    const agentA = await sandboxes.openSession({ session: 'x', scope: { kind: 'agent', key: 'writer' } });
    const agentB = await sandboxes.openSession({ session: 'x', scope: { kind: 'agent', key: 'reviewer' } });
    const run = await sandboxes.openSession({ session: 'x', scope: { kind: 'workflow', key: 'run-1' } });
    assert.equal(new Set([workspace, agentA, agentB, run].map((opened) => opened.sandbox.info.id)).size, 4);
    assert.equal(engine.opened, 4);
    assert.equal((await sandboxes.sandbox('agent:writer/x')).info.id, agentA.sandbox.info.id);
    assert.equal((await sandboxes.sandbox('workflow:run-1/x')).info.id, run.sandbox.info.id);
    assert.equal((await sandboxes.sandbox('x')).info.id, workspace.sandbox.info.id);
  });

  it('injects host secrets into every session', async () => {
    const { service: sandboxes } = service({});
    assert.equal((await sandboxes.openSession({})).sandbox.info.spec.env.API_KEY, 'from-host');
  });

  it('closes idle and expired sessions, and only its own', async () => {
    const clock = { now: Date.now() };
    const logs: string[] = [];
    const { engine, service: sandboxes } = service(
      { sessions: { idleTimeoutMinutes: 30, maxLifetimeMinutes: 120 } },
      { clock, logs },
    );
    await sandboxes.openSession({ session: 'busy' });
    await sandboxes.openSession({ session: 'quiet' });
    await engine.open((await sandboxes.openSession({ session: 'busy' })).sandbox.info.spec, {
      name: 'from-cli',
      client: 'cli',
      workspaceFolder: '/ws',
    });
    clock.now += 20 * 60_000;
    await sandboxes.use('busy', async () => undefined);
    clock.now += 15 * 60_000;
    const collected = await sandboxes.collect();
    assert.deepEqual(
      collected.map((entry) => [entry.session.name, entry.reason]),
      [['quiet', 'idle']],
    );
    assert.match(logs[0]!, /Closed session quiet: unused for 30 min/);
    assert.deepEqual(engine.sessions.map((session) => session.name).sort(), ['busy', 'from-cli']);
  });

  it('closes the least recently used session to make room', async () => {
    const clock = { now: Date.now() };
    const logs: string[] = [];
    const { engine, service: sandboxes } = service({ sessions: { maxSessions: 2 } }, { clock, logs });
    await sandboxes.openSession({ session: 'a' });
    clock.now += 1000;
    await sandboxes.openSession({ session: 'b' });
    clock.now += 1000;
    await sandboxes.use('a', async () => undefined);
    clock.now += 1000;
    await sandboxes.openSession({ session: 'c' });
    assert.deepEqual(engine.sessions.map((session) => session.name).sort(), ['a', 'c']);
    assert.match(logs[0]!, /Closed session b, the least recently used, to make room: at most 2 sessions/);
  });
});

describe('sandbox service: the network allowlist', () => {
  const allowlist = { mode: 'allowlist', allow: ['pypi.org', '*.pythonhosted.org', 'localhost:3000'] };

  it("gives a new session the user's allowlist when nothing is asked, and the whole network never", async () => {
    const { service: sandboxes } = service({ network: allowlist });
    const opened = await sandboxes.openSession({ session: 'plain' });
    assert.equal(opened.sandbox.info.network, false);
    assert.deepEqual(opened.sandbox.info.spec.networkAllow, allowlist.allow);
    assert.deepEqual(opened.notices, []);
    const greedy = await sandboxes.openSession({ session: 'greedy', network: true });
    assert.equal(greedy.sandbox.info.network, false);
    assert.deepEqual(greedy.sandbox.info.spec.networkAllow, allowlist.allow);
    assert.match(greedy.notices[0]!, /not allowed the whole network .*reaches only the names on the user's allowlist/);
  });

  it("grants asked names within the user's entries (their wildcards included) and says which it left out", async () => {
    const { service: sandboxes } = service({ network: allowlist });
    const opened = await sandboxes.openSession({
      session: 'asked',
      networkAllow: ['files.pythonhosted.org', 'pypi.org', 'evil.example', 'localhost:22'],
    });
    assert.deepEqual(opened.sandbox.info.spec.networkAllow, ['files.pythonhosted.org', 'pypi.org']);
    assert.equal(opened.notices.length, 1);
    assert.match(
      opened.notices[0]!,
      /Network access to evil\.example, localhost:22 was asked for, but it is not on the user's allowlist \(setting agentSandbox\.network\.allow/,
    );
  });

  it('gives no names when the user allows no network, and any asked names when they allow all of it', async () => {
    const off = await service({}).service.openSession({ session: 'off', networkAllow: ['pypi.org'] });
    assert.deepEqual(off.sandbox.info.spec.networkAllow, []);
    assert.equal(off.sandbox.info.network, false);
    assert.match(off.notices[0]!, /the user allows no network/);
    const full = service({ network: { mode: 'full' } }).service;
    const narrowed = await full.openSession({ session: 'narrow', networkAllow: ['api.github.com'] });
    assert.equal(narrowed.sandbox.info.network, false, 'asking for names narrows the whole network to them');
    assert.deepEqual(narrowed.sandbox.info.spec.networkAllow, ['api.github.com']);
    const all = await full.openSession({ session: 'all' });
    assert.equal(all.sandbox.info.network, true);
  });

  it('refuses an allowlist on an engine that cannot enforce it, rather than widening or dropping it', async () => {
    const { engine, service: sandboxes } = service({ network: allowlist });
    engine.capabilities = { ...CONTAINER_CAPABILITIES, networkAllowlist: false };
    await assert.rejects(
      sandboxes.openSession({ session: 'x' }),
      (error: unknown) =>
        SandboxError.is(error, 'unsupported') && /cannot limit a sandbox's network to an allowlist/.test(error.message),
    );
    assert.equal(engine.opened, 0);
    // Without names, the same engine opens a sandbox without network as before.
    const plain = await service({}).service.openSession({ session: 'y' });
    assert.equal(plain.sandbox.info.network, false);
  });

  it('plans what a call would reach: the allowlist for a new session, named in the view', () => {
    const { service: sandboxes } = service({ network: allowlist });
    assert.deepEqual(sandboxes.plan({ networkAllow: ['pypi.org'] }), {
      workspaceAccess: 'none',
      network: false,
      networkAllow: ['pypi.org'],
      packages: false,
      secrets: [],
    });
    assert.deepEqual(sandboxes.computeNetwork(), { network: false, networkAllow: allowlist.allow, secrets: [] });
  });
});
