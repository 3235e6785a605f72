import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceLeases } from '../../src/core/sessions/leases';
import { removeOrphans } from '../../src/core/sessions/orphans';
import { SandboxService } from '../../src/core/sessions/sandboxService';
import { parseSettings, type Settings } from '../../src/core/spec/settings';
import { runCliText } from './cliRunner';
import { TEST_IMAGES, requireEngine, testEngine } from './harness';

function newService(folder: string, options: { settings?: object; clock?: { now: number } } = {}): SandboxService {
  const engine = testEngine();
  const settings: Settings = parseSettings({ images: TEST_IMAGES, ...options.settings });
  return new SandboxService({
    engine: () => engine,
    settings: () => settings,
    workspaceFolder: () => folder,
    trusted: () => true,
    client: 'vscode',
    now: options.clock ? () => options.clock!.now : undefined,
  });
}

describe('session lifecycle against a real engine', function () {
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-life-'));
  const stateDir = mkdtempSync(join(tmpdir(), 'agent-sandbox-state-'));

  before(async function () {
    await requireEngine(this);
  });

  after(async () => {
    await newService(folder).closeAll();
    rmSync(folder, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('finds the same session and its files again after every service is rebuilt (a window reload)', async () => {
    const before = newService(folder);
    const opened = await before.openSession({});
    await before.use(undefined, (sandbox) => sandbox.writeFiles([{ path: 'kept.txt', content: 'still here' }]));
    // Everything is dropped: a new engine connection and a new service, as after a reload.
    const after = newService(folder);
    const again = await after.sandbox(undefined);
    assert.equal(again.info.id, opened.sandbox.info.id);
    assert.equal((await again.readFile('kept.txt')).content, 'still here');
  });

  it('keeps scopes apart: the same name in two scopes is two containers', async () => {
    const service = newService(folder);
    const workspace = await service.openSession({ session: 'shared-name', runtime: 'bash' });
    const agent = await service.openSession({
      session: 'shared-name',
      runtime: 'bash',
      scope: { kind: 'agent', key: 'reviewer' },
    });
    assert.notEqual(workspace.sandbox.info.id, agent.sandbox.info.id);
    await workspace.sandbox.exec({ command: 'echo mine > /tmp/who' });
    assert.match((await agent.sandbox.exec({ command: 'cat /tmp/who 2>&1 || true' })).stdout, /No such file/);
    assert.equal((await newService(folder).sandbox('agent:reviewer/shared-name')).info.id, agent.sandbox.info.id);
    await service.close('shared-name');
    await service.close('agent:reviewer/shared-name');
  });

  it('closes idle and expired sessions with short settings', async () => {
    const clock = { now: Date.now() };
    const service = newService(folder, {
      settings: { sessions: { idleTimeoutMinutes: 1, maxLifetimeMinutes: 10 } },
      clock,
    });
    const idle = await service.openSession({ session: 'idle', runtime: 'bash' });
    clock.now += 61_000;
    const collected = await service.collect();
    assert.ok(collected.some((entry) => entry.session.id === idle.sandbox.info.id && entry.reason === 'idle'));
    assert.equal(
      (await service.list()).some((session) => session.id === idle.sandbox.info.id),
      false,
    );

    const old = await service.openSession({ session: 'old', runtime: 'bash' });
    clock.now += 11 * 60_000;
    await service.use('old', async () => undefined); // used just now, but too old
    const expired = await service.collect();
    assert.ok(expired.some((entry) => entry.session.id === old.sandbox.info.id && entry.reason === 'lifetime'));
  });

  it('removes orphans: a window gone past the grace period, or a deleted folder, but not a live window', async () => {
    const leases = new WorkspaceLeases(join(stateDir, 'leases'));
    const goneFolder = mkdtempSync(join(tmpdir(), 'agent-sandbox-gone-'));
    const liveFolder = mkdtempSync(join(tmpdir(), 'agent-sandbox-live-'));
    const deletedFolder = mkdtempSync(join(tmpdir(), 'agent-sandbox-deleted-'));
    const gone = await newService(goneFolder).openSession({ runtime: 'bash' });
    const live = await newService(liveFolder).openSession({ runtime: 'bash' });
    const deleted = await newService(deletedFolder).openSession({ runtime: 'bash' });
    leases.release(goneFolder, false);
    leases.renew(liveFolder);
    leases.renew(deletedFolder);
    rmSync(deletedFolder, { recursive: true, force: true });
    const later = Date.now() + 10 * 60_000;
    leases.renew(liveFolder); // the live window keeps renewing
    const lease = (folder: string) =>
      folder === liveFolder ? { ...leases.read(folder)!, seen: later } : leases.read(folder);
    // One folder at a time, so that sessions of anything else on this engine are never touched.
    const removed = (
      await Promise.all(
        [goneFolder, liveFolder, deletedFolder].map((onlyFolder) =>
          removeOrphans(testEngine(), { now: later, graceMs: 120_000, lease, onlyFolder }),
        ),
      )
    ).flat();
    const byId = new Map(removed.map((entry) => [entry.session.id, entry.reason]));
    assert.match(byId.get(gone.sandbox.info.id) ?? '', /window closed/);
    assert.match(byId.get(deleted.sandbox.info.id) ?? '', /no longer exists/);
    assert.equal(byId.has(live.sandbox.info.id), false);
    await newService(liveFolder).closeAll();
    rmSync(goneFolder, { recursive: true, force: true });
    rmSync(liveFolder, { recursive: true, force: true });
  });

  it('agent-sandbox gc removes the sessions of a window that is gone', async () => {
    const orphanFolder = mkdtempSync(join(tmpdir(), 'agent-sandbox-orphan-'));
    const orphan = await newService(orphanFolder).openSession({ runtime: 'bash' });
    await new Promise((done) => setTimeout(done, 1500));
    const output = (
      await runCliText(['gc', '--grace', '1', '--folder', orphanFolder, '--json'], {
        env: { AGENT_SANDBOX_STATE_DIR: stateDir },
      })
    ).stdout;
    const removed = JSON.parse(output).removed as { id: string; reason: string }[];
    assert.ok(
      removed.some((entry) => entry.id === orphan.sandbox.info.id && /window is gone/.test(entry.reason)),
      output,
    );
    rmSync(orphanFolder, { recursive: true, force: true });
  });
});
