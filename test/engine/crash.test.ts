import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../../src/core/engine/engine';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import type { SessionDeath } from '../../src/core/sessions/sessionDeath';
import { findSession } from '../../src/core/sessions/findSession';
import { openSession } from './namedSession';
import type { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { requireEngine, testEngine } from './harness';

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(condition(), `no ${what} within 5 s`);
}

describe('crash detection against a real engine', function () {
  let engine: DockerEngine;
  const deaths: SessionDeath[] = [];
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-crash-'));

  const open = async (name: string, memory?: string): Promise<Sandbox> =>
    (
      await openSession(
        engine,
        resolveSpec({
          runtime: name.endsWith('oom') ? 'python' : 'bash',
          ...(memory ? { limits: { memoryBytes: memory } } : {}),
        }),
        { name, workspaceFolder: folder },
      )
    ).sandbox;

  before(async function () {
    await requireEngine(this);
    engine = testEngine();
    engine.onSessionDeath((death) => deaths.push(death));
  });

  after(async () => {
    await engine?.dispose();
    rmSync(folder, { recursive: true, force: true });
  });

  it('says that a session removed from outside is gone, and when, and does not replace it', async () => {
    const doomed = await open('engine-test-removed');
    try {
      await engine.docker.getContainer(doomed.info.id).remove({ force: true });
      const gone = (error: unknown) =>
        SandboxError.is(error, 'session-dead') &&
        /The session engine-test-removed no longer exists: it was removed from outside \(docker rm.*\) at \d{4}-\d\d-\d\dT/.test(
          error.message,
        ) &&
        /files .* are gone/.test(error.hint!) &&
        /sandbox_open/.test(error.hint!) &&
        /agent-sandbox open/.test(error.hint!);
      await assert.rejects(doomed.exec({ command: 'echo hi' }), gone);
      await assert.rejects(doomed.readFile('x.txt'), gone);
      assert.equal(
        await findSession(engine, folder, 'engine-test-removed'),
        undefined,
        'a new session appeared in its place',
      );
      await until(
        () => deaths.some((death) => death.id === doomed.info.id && death.reason.kind === 'removed'),
        'report to listeners',
      );
      assert.equal(deaths.filter((death) => death.id === doomed.info.id).length, 1, 'reported more than once');
      assert.equal(deaths.find((death) => death.id === doomed.info.id)?.name, 'engine-test-removed');
    } finally {
      await doomed.close();
    }
  });

  it('lives on after a command is OOM-killed, and says so precisely when killed from outside', async () => {
    const session = await open('engine-test-crash-oom', '64m');
    try {
      const oom = await session.exec({
        cmd: ['python3', '-c', 'b = []\nwhile True: b.append(bytearray(16 * 1024 * 1024))'],
      });
      assert.equal(oom.outcome, 'oom', JSON.stringify(oom));
      assert.equal((await session.exec({ command: 'echo alive' })).stdout, 'alive\n');
      assert.equal(
        engine.deaths.reasonFor(session.info.id),
        undefined,
        'the OOM of a command was taken for the death of the session',
      );
      assert.ok(!deaths.some((death) => death.id === session.info.id));

      await engine.docker.getContainer(session.info.id).kill({ signal: 'SIGKILL' });
      await assert.rejects(
        session.exec({ command: 'echo hi' }),
        (error: unknown) =>
          SandboxError.is(error, 'session-dead') &&
          /The session engine-test-crash-oom is no longer running: it was killed \(SIGKILL\) from outside Agent Sandbox/.test(
            error.message,
          ) &&
          !/memory/.test(error.message) &&
          /sandbox_close/.test(error.hint!) &&
          /open a new session/i.test(error.hint!),
      );
      await until(() => deaths.some((death) => death.id === session.info.id), 'report to listeners');
      assert.deepEqual(deaths.find((death) => death.id === session.info.id)?.reason, {
        kind: 'signal',
        at: engine.deaths.reasonFor(session.info.id)!.at,
        signal: 'SIGKILL',
        fromOutside: true,
      });
    } finally {
      await session.close();
    }
  });

  it('does not report its own close as a death', async () => {
    const closing = await open('engine-test-closing');
    const witness = await open('engine-test-witness');
    await closing.close();
    await engine.remove(witness.info.id); // the service's close path
    // The engine sends events in order: once the watcher has seen a later removal from outside, it has seen ours too.
    const marker = await open('engine-test-marker');
    await engine.docker.getContainer(marker.info.id).remove({ force: true });
    await until(
      () => deaths.some((death) => death.id === marker.info.id && death.reason.kind === 'removed'),
      'report of the marker',
    );
    assert.deepEqual(
      deaths.filter((death) => death.id === closing.info.id || death.id === witness.info.id),
      [],
    );
    assert.equal(engine.deaths.reasonFor(closing.info.id)?.kind, 'closed');
    await marker.close();
  });
});
