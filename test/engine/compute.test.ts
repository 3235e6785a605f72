import assert from 'node:assert/strict';
import { runCompute } from '../../src/core/sessions/compute';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import type { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { requireEngine, testEngine } from './harness';

/** Compute mode where only a container has it: OOM, signals, capabilities, network, pids, images. The rest is in contract.test.ts, for every engine. */
describe('compute mode against a real engine', function () {
  let engine: DockerEngine;
  before(async function () {
    await requireEngine(this);
    engine = testEngine();
  });

  it('reports the engine it talks to', async () => {
    const info = await engine.info();
    assert.equal(info.kind, 'docker');
    assert.match(info.version, /^\d+\.\d+/);
    assert.match(info.endpoint, /^(unix|tcp|ssh|npipe):\/\//);
  });

  it('reports running out of memory as an OOM kill', async () => {
    const result = await runCompute(engine, resolveSpec({ runtime: 'python', limits: { memoryBytes: '64m' } }), {
      code: 'blocks = []\nwhile True:\n    blocks.append(bytearray(16 * 1024 * 1024))',
    });
    assert.equal(result.outcome, 'oom', JSON.stringify(result));
    assert.equal(result.exitCode, 137);
    assert.match(result.hint!, /64 MiB memory limit/);
  });

  it('reports a crash by signal as such', async () => {
    const result = await runCompute(engine, resolveSpec({ runtime: 'python' }), {
      code: 'import ctypes\nctypes.string_at(0)',
    });
    assert.equal(result.outcome, 'signal', JSON.stringify(result));
    assert.equal(result.exitCode, 139);
    assert.equal(result.signal, 'SIGSEGV');
    assert.match(result.hint!, /segmentation fault/);
  });

  it('runs as an unprivileged user with no capabilities', async () => {
    const result = await runCompute(engine, resolveSpec({ runtime: 'bash' }), {
      code: 'id -u; grep -E "^(CapEff|CapBnd|CapPrm|NoNewPrivs)" /proc/self/status',
    });
    const [uid, ...caps] = result.stdout.trim().split('\n');
    assert.notEqual(uid, '0');
    assert.deepEqual(caps.map((line) => line.replace(/\s+/g, ' ')).sort(), [
      'CapBnd: 0000000000000000',
      'CapEff: 0000000000000000',
      'CapPrm: 0000000000000000',
      'NoNewPrivs: 1',
    ]);
  });

  it('has no network interface but loopback when the network is off', async () => {
    const result = await runCompute(engine, resolveSpec({ runtime: 'bash' }), { code: 'ls /sys/class/net' });
    assert.equal(result.stdout.trim(), 'lo');
  });

  it('has a network interface besides loopback when the network is allowed', async () => {
    const result = await runCompute(engine, resolveSpec({ runtime: 'bash', network: true }), {
      code: 'ls /sys/class/net',
    });
    assert.ok(result.stdout.trim().split('\n').length > 1, result.stdout);
  });

  it('enforces the pids limit', async () => {
    const result = await runCompute(
      engine,
      resolveSpec({ runtime: 'python', limits: { pids: 32 }, timeoutSeconds: 20 }),
      {
        code: 'import os, time\nn = 0\ntry:\n    while n < 1000:\n        if os.fork() == 0:\n            time.sleep(30)\n            os._exit(0)\n        n += 1\nexcept OSError as error:\n    print(n, error.errno)',
      },
    );
    const [forked, errno] = result.stdout.trim().split(' ').map(Number);
    assert.ok(forked! < 32, result.stdout + result.stderr);
    assert.equal(errno, 11, 'fork fails with EAGAIN at the limit');
  });

  it('uses a local labelled image when the runtime image cannot be pulled, and says so', async function () {
    const { DockerEngine } = await import('../../src/engines/docker/dockerEngine');
    // A configured image that exists nowhere: the pull fails with or without a registry.
    const fallback = new DockerEngine({ images: { python: 'agent-sandbox-test/unpullable:never' } });
    const result = await runCompute(fallback, resolveSpec({ runtime: 'python' }), { code: 'print(6 * 7)' });
    assert.equal(result.stdout, '42\n');
    assert.ok(
      result.notices.some((notice) =>
        /could not be pulled.*org\.agent-sandbox\.runtime=python.*agentSandbox\.images\.python/s.test(notice),
      ),
      result.notices.join('\n'),
    );
  });

  it('names the image and the setting when an explicit image is missing', async () => {
    await assert.rejects(
      runCompute(engine, resolveSpec({ runtime: 'python', image: 'agent-sandbox/does-not-exist:1' }), {
        code: 'print(1)',
      }),
      (error: unknown) =>
        SandboxError.is(error, 'image-unavailable') &&
        /agent-sandbox\/does-not-exist:1/.test(error.message) &&
        /choose another image/.test(error.hint!),
    );
  });

  it('says precisely that no engine answers, and how to fix it', async () => {
    const { DockerEngine } = await import('../../src/engines/docker/dockerEngine');
    const missing = new DockerEngine({ host: 'unix:///tmp/agent-sandbox-no-such.sock' });
    await assert.rejects(missing.info(), (error: unknown) => {
      assert.ok(SandboxError.is(error, 'engine-unavailable'));
      assert.match(
        error.message,
        /unix:\/\/\/tmp\/agent-sandbox-no-such\.sock \(from the setting agentSandbox\.engineHost\)/,
      );
      assert.match(error.hint!, /Start Docker/);
      return true;
    });
    await assert.rejects(runCompute(missing, resolveSpec(), { code: 'print(1)' }), (error: unknown) =>
      SandboxError.is(error, 'engine-unavailable'),
    );
  });
});
