import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type { Sandbox, SandboxEngine, SessionFilter, SessionInfo, OpenOptions } from '../../src/core/engine/engine';
import { CONTAINER_CAPABILITIES } from '../../src/core/engine/engineCapabilities';
import { SandboxError } from '../../src/core/errors';
import type { CopyChange } from '../../src/core/files/copyChanges';
import { changeCounts, someChanges } from '../../src/core/files/copyPending';
import { ChangesAwaitReview } from '../../src/core/sessions/copyHold';
import { removeOrphans } from '../../src/core/sessions/orphans';
import { SandboxService } from '../../src/core/sessions/sandboxService';
import { parseSettings } from '../../src/core/spec/settings';
import type { SandboxSpec } from '../../src/core/spec/spec';
import { closeTool } from '../../src/core/tools/specs/close';
import { parseCommandLine } from '../../src/cli/args';
import { Output } from '../../src/cli/output';

/** An in-memory engine: sessions as records, enough for what closes them and what keeps them. */
class FakeEngine implements SandboxEngine {
  readonly kind = 'docker' as const;
  readonly capabilities = CONTAINER_CAPABILITIES;
  readonly sessions: SessionInfo[] = [];
  async info() {
    return { kind: 'docker' as const, product: 'fake', version: '0', endpoint: 'fake://' };
  }
  async open(spec: SandboxSpec, options: OpenOptions = {}): Promise<Sandbox> {
    const info: SessionInfo = {
      id: `${'0'.repeat(60)}${String(this.sessions.length + 1).padStart(4, '0')}`,
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
      network: false,
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
  names(): string[] {
    return this.sessions.map((session) => session.name!).sort();
  }
}

const TWO: CopyChange[] = [
  { path: 'README.md', change: 'modified', oldSize: 4, newSize: 8 },
  { path: 'src/new.py', change: 'added', newSize: 3 },
];

/** A service whose copy sessions have the changes `pending` gives by name (or throw its error). */
function setup(settings: object = {}, clock?: { now: number }) {
  const engine = new FakeEngine();
  const pending = new Map<string, CopyChange[] | Error>();
  const logs: string[] = [];
  const parsed = parseSettings({ workspaceAccess: 'copy', ...settings });
  const service = new SandboxService({
    engine: () => engine,
    settings: () => parsed,
    workspaceFolder: () => '/ws',
    trusted: () => true,
    client: 'vscode',
    now: clock ? () => clock.now : undefined,
    log: (_level, message) => logs.push(message),
    unappliedChanges: async (sandbox) => {
      const found = pending.get(sandbox.info.name!) ?? [];
      if (found instanceof Error) throw found;
      return found;
    },
  });
  const open = async (name: string, workspaceAccess: 'copy' | 'none' = 'copy') =>
    (await service.openSession({ session: name, workspaceAccess })).sandbox.info;
  return { engine, pending, logs, service, open };
}

describe('copy sessions are not closed with unapplied changes', () => {
  it('counts and names a few changes', () => {
    assert.equal(changeCounts(TWO), '2 changes (1 added, 1 modified, 0 deleted)');
    assert.equal(changeCounts(TWO.slice(0, 1)), '1 change (0 added, 1 modified, 0 deleted)');
    assert.equal(someChanges(TWO), 'modified README.md and added src/new.py');
    const many = Array.from({ length: 8 }, (_, i): CopyChange => ({ path: `f${i}`, change: 'deleted' }));
    assert.equal(someChanges(many, 3), 'deleted f0, deleted f1, deleted f2 and 5 more');
  });

  it('close refuses a copy session with changes, naming them and where the user reviews them; the session stays', async () => {
    const { engine, pending, service, open } = setup();
    await open('work');
    pending.set('work', TWO);
    await assert.rejects(service.close('work'), (error: unknown) => {
      assert.ok(error instanceof ChangesAwaitReview);
      assert.deepEqual(error.changes, TWO);
      assert.match(
        error.message,
        /^Session "work" was not closed: its copy of the folder has 2 changes \(1 added, 1 modified, 0 deleted\) not applied to the folder/,
      );
      assert.match(error.message, /Source Control › "Sandbox changes".*agent-sandbox diff --session work/);
      assert.match(error.hint!, /agent-sandbox close --session work --discard/);
      return true;
    });
    assert.deepEqual(engine.names(), ['work']);
    // Restarting would lose them too.
    await assert.rejects(service.restart('work'), ChangesAwaitReview);
    assert.deepEqual(engine.names(), ['work']);
  });

  it('discardChanges closes it and says what was discarded; a copy without changes and other sessions close as before', async () => {
    const { engine, pending, service, open } = setup();
    await open('work');
    await open('clean');
    await open('plain', 'none');
    pending.set('work', TWO);
    const closed = await service.close('work', { discardChanges: true });
    assert.match(
      closed.notices[0]!,
      /^Discarded 2 changes \(1 added, 1 modified, 0 deleted\) not applied to the folder/,
    );
    assert.deepEqual((await service.close('clean')).notices, []);
    await service.close('plain');
    assert.deepEqual(engine.names(), []);
  });

  it('a copy whose changes cannot be listed is not closed either, unless discarding', async () => {
    const { engine, pending, service, open } = setup();
    await open('lost');
    pending.set('lost', new SandboxError('file-not-found', 'The record of what was copied is missing.'));
    await assert.rejects(service.close('lost'), /record of what was copied is missing/);
    assert.deepEqual(engine.names(), ['lost']);
    const closed = await service.close('lost', { discardChanges: true });
    assert.match(closed.notices[0]!, /Closed without listing its copy's changes first/);
    assert.deepEqual(engine.names(), []);
  });

  it('the tool returns a result that the sandbox stays open, for the model to ask the user', async () => {
    const { engine, pending, service, open } = setup();
    await open('work');
    pending.set('work', TWO);
    const result = await closeTool.run({ sandbox_id: 'work' }, {
      service,
      signal: new AbortController().signal,
    } as unknown as Parameters<typeof closeTool.run>[1]);
    const text = (result as { text: string }).text;
    assert.match(text, /^Sandbox "work" was NOT closed: .*2 changes \(1 added, 1 modified, 0 deleted\)/);
    assert.match(text, /modified README\.md and added src\/new\.py/);
    assert.match(text, /Source Control › "Sandbox changes"; elsewhere with agent-sandbox diff --session work/);
    assert.match(text, /ask them .*do not call sandbox_close for it again/);
    assert.deepEqual(engine.names(), ['work']);
    assert.ok(!('discard' in closeTool.schema.shape), 'the model has no input to discard the review');
  });

  it('closeAll closes the others and holds the copy with changes (logged), or closes all with discardChanges', async () => {
    const { engine, pending, logs, service, open } = setup();
    await open('work');
    await open('clean');
    await open('plain', 'none');
    pending.set('work', TWO);
    const { closed, held } = await service.closeAll();
    assert.deepEqual(closed.map((session) => session.name).sort(), ['clean', 'plain']);
    assert.deepEqual(
      held.map((hold) => [hold.session.name, hold.changes.length]),
      [['work', 2]],
    );
    assert.match(logs.join('\n'), /Kept session work open: its copy of the folder has 2 changes/);
    assert.deepEqual(engine.names(), ['work']);
    const all = await service.closeAll({ discardChanges: true });
    assert.deepEqual(all.held, []);
    assert.match(all.closed[0]!.notices[0]!, /^Discarded 2 changes/);
    assert.deepEqual(engine.names(), []);
  });

  it('idle collection keeps a copy with changes open (said once), and closes it once they are applied', async () => {
    const clock = { now: Date.now() };
    const { engine, pending, logs, service, open } = setup({ sessions: { idleTimeoutMinutes: 30 } }, clock);
    await open('work');
    await open('idle', 'none');
    pending.set('work', TWO);
    clock.now += 31 * 60_000;
    assert.deepEqual(
      (await service.collect()).map((entry) => entry.session.name),
      ['idle'],
    );
    clock.now += 60_000;
    assert.deepEqual(await service.collect(), []);
    assert.equal(logs.filter((line) => /Kept session work open/.test(line)).length, 1);
    assert.deepEqual(engine.names(), ['work']);
    pending.set('work', []);
    assert.deepEqual(
      (await service.collect()).map((entry) => entry.session.name),
      ['work'],
    );
    assert.deepEqual(engine.names(), []);
  });

  it('making room passes over a copy with changes for the next least recently used', async () => {
    const clock = { now: Date.now() };
    const { engine, pending, open } = setup({ sessions: { maxSessions: 2 } }, clock);
    await open('work');
    clock.now += 1000;
    await open('other', 'none');
    pending.set('work', TWO);
    clock.now += 1000;
    await open('third', 'none');
    assert.deepEqual(engine.names(), ['third', 'work']);
  });

  it('the end of an MCP connection keeps its copy with changes and closes the rest of its own', async () => {
    const engine = new FakeEngine();
    const scope = { kind: 'agent' as const, key: 'mcp-test-1' };
    const pending = new Map<string, CopyChange[]>([['default', TWO]]);
    const service = new SandboxService({
      engine: () => engine,
      settings: () => parseSettings({ workspaceAccess: 'copy' }),
      workspaceFolder: () => '/ws',
      trusted: () => true,
      client: 'mcp',
      defaultScope: scope,
      unappliedChanges: async (sandbox) => pending.get(sandbox.info.name!) ?? [],
    });
    await service.openSession({ workspaceAccess: 'copy' });
    await service.openSession({ session: 'scratch', scope, workspaceAccess: 'copy' });
    const closed = await service.closeDefaultScope();
    assert.deepEqual(
      closed.map((session) => session.name),
      ['scratch'],
    );
    assert.deepEqual(engine.names(), ['default']);
  });

  it('gc keeps an orphaned copy with changes (saying so) while its folder exists, and removes it once the folder is gone', async () => {
    const engine = new FakeEngine();
    const spec = { mode: 'code', workspaceAccess: 'copy', runtime: 'bash' } as SandboxSpec;
    await engine.open(spec, { name: 'work', client: 'vscode', workspaceFolder: '/ws' });
    await engine.open(
      { ...spec, workspaceAccess: 'none' },
      { name: 'plain', client: 'vscode', workspaceFolder: '/ws' },
    );
    const kept: string[] = [];
    let folderExists = true;
    const check = () => ({
      now: Date.now() + 3600_000,
      graceMs: 0,
      lease: () => undefined,
      folderExists: () => folderExists,
      onHeld: (held: { session: SessionInfo }) => kept.push(held.session.name!),
      unappliedChanges: async (sandbox: Sandbox) => (sandbox.info.name === 'work' ? TWO : []),
    });
    const removed = await removeOrphans(engine, check());
    assert.deepEqual(
      removed.map((entry) => entry.session.name),
      ['plain'],
    );
    assert.deepEqual(kept, ['work']);
    folderExists = false;
    assert.deepEqual(
      (await removeOrphans(engine, check())).map((entry) => entry.session.name),
      ['work'],
    );
  });
});

describe('agent-sandbox close --discard', () => {
  it('parses --discard', () => {
    assert.equal(parseCommandLine(['close', '--session', 's', '--discard']).values.discard, true);
  });

  it('names the held session with its counts, diff, apply and --discard (text), or lists it (--json)', async () => {
    const info = (await new FakeEngine().open({ mode: 'code', workspaceAccess: 'copy' } as SandboxSpec, { name: 'w' }))
      .info;
    const run = (json: boolean) => {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      new Output(json, stdout, stderr).closed([], [{ session: info, changes: TWO }]);
      return { stdout: String(stdout.read() ?? ''), stderr: String(stderr.read() ?? '') };
    };
    const text = run(false);
    assert.equal(text.stdout, '');
    assert.match(
      text.stderr,
      /^agent-sandbox: session w was not closed: 2 changes \(1 added, 1 modified, 0 deleted\) in its copy are not applied to the folder: .*agent-sandbox diff --session w, .*agent-sandbox apply --session w, .*agent-sandbox close --session w --discard\.\n$/,
    );
    const json = JSON.parse(run(true).stdout) as { closed: unknown[]; held: { session: string; added: number }[] };
    assert.deepEqual(json.closed, []);
    assert.equal(json.held[0]!.session, 'w');
    assert.equal(json.held[0]!.added, 1);
  });
});
