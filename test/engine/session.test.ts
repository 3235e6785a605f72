import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../../src/core/engine/engine';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { openSession } from './namedSession';
import type { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { requireEngine, testEngine } from './harness';

/** Code mode where only a container has it: processes, OOM kills, deaths from outside. The rest is in contract.test.ts, for every engine. */
describe('code mode against a real engine', function () {
  let engine: DockerEngine;
  let sandbox: Sandbox;
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-ws-'));

  before(async function () {
    await requireEngine(this);
    engine = testEngine();
    sandbox = (
      await openSession(engine, resolveSpec({ runtime: 'python', timeoutSeconds: 30 }), {
        name: 'engine-test',
        workspaceFolder: folder,
      })
    ).sandbox;
  });

  after(async () => {
    await sandbox?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('keeps files, installed state and background processes between calls', async () => {
    await sandbox.exec({ command: 'echo remembered > /tmp/state && (sleep 300 &)' });
    // The [0] keeps pgrep from finding the shell whose command line holds the pattern.
    const later = await sandbox.exec({ command: 'cat /tmp/state; pgrep -fc "sleep 30[0]"' });
    assert.equal(later.stdout, 'remembered\n1\n');
  });

  it('reports an OOM kill in a session, and the session lives on', async () => {
    const small = (
      await openSession(engine, resolveSpec({ runtime: 'python', limits: { memoryBytes: '64m' } }), {
        name: 'engine-test-oom',
        workspaceFolder: folder,
      })
    ).sandbox;
    try {
      const result = await small.exec({
        cmd: ['python3', '-c', 'b = []\nwhile True: b.append(bytearray(16 * 1024 * 1024))'],
      });
      assert.equal(result.outcome, 'oom', JSON.stringify(result));
      assert.equal((await small.exec({ command: 'echo alive' })).stdout, 'alive\n');
    } finally {
      await small.close();
    }
  });

  it('says precisely that a session died when its container was killed from outside', async () => {
    const doomed = (
      await openSession(engine, resolveSpec({ runtime: 'bash' }), {
        name: 'engine-test-doomed',
        workspaceFolder: folder,
      })
    ).sandbox;
    try {
      await engine.docker.getContainer(doomed.info.id).kill({ signal: 'SIGKILL' });
      await assert.rejects(
        doomed.exec({ command: 'echo hi' }),
        (error: unknown) =>
          SandboxError.is(error, 'session-dead') &&
          /killed \(SIGKILL\)/.test(error.message) &&
          /open a new session/i.test(error.hint!),
      );
      await assert.rejects(engine.attach(doomed.info.id), (error: unknown) => SandboxError.is(error, 'session-dead'));
    } finally {
      await doomed.close();
    }
    await assert.rejects(engine.attach(doomed.info.id), (error: unknown) =>
      SandboxError.is(error, 'session-not-found'),
    );
  });
});
