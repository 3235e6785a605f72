/** Where one call's time goes: the engine round trips it makes, with when each started and how long it took. */
import { runNamedTool } from '../../src/core/tools/runTool';
import { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { TEST_IMAGES } from '../../test/engine/harness';
import type { BenchSetup } from './groups';
import { rawArchiveContainer, rawOneShot, rawPut, sandboxHostConfig } from './raw';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { SandboxService } from '../../src/core/sessions/sandboxService';
import { parseSettings } from '../../src/core/spec/settings';

type Modem = {
  dial(options: { method: string; path: string }, callback: (error: unknown, data: unknown) => void): unknown;
};

/** Runs `call` while recording every request dockerode makes through `engine` (background ones too, once they end). */
async function traced(
  engine: DockerEngine,
  title: string,
  call: () => Promise<unknown>,
): Promise<{ title: string; lines: string[] }> {
  const modem = engine.docker.modem as unknown as Modem;
  const original = modem.dial;
  const calls: { started: number; line: string }[] = [];
  const t0 = performance.now();
  modem.dial = function (this: Modem, options, callback) {
    const started = performance.now() - t0;
    return original.call(this, options, (error, data) => {
      const path = options.path.split('?')[0]!.replace(/[0-9a-f]{64}/g, '{id}');
      calls.push({
        started,
        line: `+${started.toFixed(1).padStart(6)} ms  ${options.method.padEnd(6)} ${path.padEnd(34)} ${(performance.now() - t0 - started).toFixed(1).padStart(6)} ms`,
      });
      callback(error, data);
    });
  };
  let total: number;
  try {
    await call();
    total = performance.now() - t0;
  } finally {
    modem.dial = original;
  }
  await engine.computeRuns.pool.settled();
  const lines = calls.sort((a, b) => a.started - b.started).map((entry) => entry.line);
  lines.push(
    `the call returned after ${total.toFixed(1)} ms${calls.some((entry) => entry.started > total) ? '; requests starting later are background work' : ''}`,
  );
  return { title, lines };
}

export async function profileCalls(setup: BenchSetup): Promise<{ title: string; lines: string[] }[]> {
  const { engine, tool } = setup;
  const profiles = [];
  await engine.computeRuns.pool.settled();
  // The run itself makes no round trip; what shows is the pool's refill and the removal of the used container, both in the background.
  profiles.push(
    await traced(
      engine,
      "One sandbox_run from the warm pool (every round trip below is background work: the refill, then the used container's removal)",
      () => runNamedTool('sandbox_run', { code: 'print(6 * 7)', runtime: 'python' }, tool),
    ),
  );
  await engine.computeRuns.pool.settled();
  // The program's own share: python3's start and exit, timed inside the sandbox.
  const inside = await runNamedTool(
    'sandbox_run',
    {
      runtime: 'bash',
      code: 's=$(date +%s%N); python3 -c "print(6 * 7)" >/dev/null; e=$(date +%s%N); echo "python3 inside: $(( (e - s) / 1000 )) us"',
    },
    tool,
  );
  profiles.push({
    title: 'The Python one-liner itself, timed inside the sandbox',
    lines: inside.split('\n').filter((line) => line.includes('python3 inside')),
  });
  await engine.computeRuns.pool.settled();

  const cold = new DockerEngine({ images: TEST_IMAGES, poolSize: 0 });
  try {
    const coldService = new SandboxService({
      engine: () => cold,
      settings: () => parseSettings({ images: TEST_IMAGES }),
      workspaceFolder: () => undefined,
      trusted: () => true,
    });
    const coldTool = { ...tool, service: coldService };
    await runNamedTool('sandbox_run', { code: 'print(1)', runtime: 'python' }, coldTool);
    profiles.push(
      await traced(cold, 'One sandbox_run without a warm container (pool empty or size 0)', () =>
        runNamedTool('sandbox_run', { code: 'print(6 * 7)', runtime: 'python' }, coldTool),
      ),
    );
  } finally {
    await cold.dispose();
  }
  profiles.push(
    await traced(engine, 'One sandbox_exec (echo hi)', () =>
      runNamedTool('sandbox_exec', { command: 'echo hi' }, tool),
    ),
  );
  const content = Buffer.alloc(1024 * 1024, 7).toString('base64');
  profiles.push(
    await traced(
      engine,
      "One sandbox_fs_write of 1 MiB (the session's file helper: the script checks the paths, tar unpacks as the sandbox user)",
      () => runNamedTool('sandbox_fs_write', { files: [{ path: 'profile.bin', content, encoding: 'base64' }] }, tool),
    ),
  );
  profiles.push(
    await traced(
      engine,
      "One sandbox_fs_read of 1 MiB (the session's file helper: realpath, stat, dd as the sandbox user)",
      () => runNamedTool('sandbox_fs_read', { path: 'profile.bin', encoding: 'base64', max_bytes: 1024 * 1024 }, tool),
    ),
  );
  // Into a container with a writable root (the sessions' root is read-only, and the archive API cannot reach their tmpfs).
  const spec = resolveSpec({ runtime: 'python', mode: 'compute' });
  const floor = await rawArchiveContainer(engine.docker, setup.pythonImage, sandboxHostConfig(spec, setup.pythonImage));
  try {
    profiles.push(
      await traced(engine, 'One putArchive of 1 MiB (as root in the engine)', () =>
        rawPut(floor, [{ name: 'profile-raw.bin', data: Buffer.alloc(1024 * 1024, 7) }]),
      ),
    );
  } finally {
    await floor.remove({ force: true }).catch(() => undefined);
  }
  profiles.push(
    await traced(engine, 'One raw API one-shot (python3 -c)', () =>
      rawOneShot(engine.docker, setup.pythonImage, sandboxHostConfig(spec, setup.pythonImage), [
        'python3',
        '-c',
        'print(6 * 7)',
      ]),
    ),
  );
  return profiles;
}
