/**
 * The same calls on Podman, beside Docker's in the same run: sandbox_run and sandbox_exec through the
 * tools' own path on a DockerEngine that talks to Podman's Docker-compatible API, beside the same work
 * through that API and through the `podman` CLI (the same limits and flags as the docker arms). The
 * service comes from scripts/provision-podman.sh (rootful, the images loaded from Docker), or from
 * AGENT_SANDBOX_BENCH_PODMAN (an address); where there is neither, the note says why it was skipped.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { runNamedTool } from '../../src/core/tools/runTool';
import { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { withSeccompFor } from '../../src/engines/docker/seccompProfile';
import { TEST_IMAGES } from '../../test/engine/harness';
import { benchTools } from './benchTools';
import type { Group } from './measure';
import { cliExec, cliOneShot, rawExec, rawOneShot, sandboxHostConfig } from './raw';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '..', '..');
const CODE = 'print(6 * 7)';

function expect(text: string, wanted: string, what: string): void {
  if (!text.includes(wanted))
    throw new Error(`${what} returned ${JSON.stringify(text.slice(0, 200))}, without ${JSON.stringify(wanted)}`);
}

/** Podman's API address, and whether this bench started the service (and stops it after). */
async function podmanHost(): Promise<{ host: string; started: boolean } | string> {
  const given = process.env.AGENT_SANDBOX_BENCH_PODMAN;
  if (given) return { host: given, started: false };
  try {
    await run('podman', ['--version']);
  } catch {
    return 'Podman is not installed here: its arms were skipped (set AGENT_SANDBOX_BENCH_PODMAN to an address, or install podman).';
  }
  try {
    const { stdout } = await run('bash', [join(ROOT, 'scripts', 'provision-podman.sh')], { maxBuffer: 1 << 20 });
    return { host: stdout.trim().split('\n').pop()!, started: true };
  } catch (error) {
    return `Podman's API service could not be provisioned (${(error as Error).message.split('\n')[0]}): its arms were skipped.`;
  }
}

export async function podmanGroups(
  iterations: number,
  warmup: number,
  poolSize: number,
): Promise<{ groups: Group[]; notes: string[]; dispose(): Promise<void> } | string> {
  const found = await podmanHost();
  if (typeof found === 'string') return found;
  const engine = new DockerEngine({ host: found.host, images: TEST_IMAGES, poolSize });
  const info = await engine.info().catch((error: Error) => error);
  if (info instanceof Error) {
    await engine.dispose();
    return `Podman at ${found.host} did not answer (${info.message}): its arms were skipped.`;
  }
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-bench-podman-'));
  const { service, tool } = benchTools(engine, folder, poolSize);
  await runNamedTool('sandbox_open', {}, tool);
  const session: Docker.Container = engine.docker.getContainer(service.known(undefined)!.id);
  const spec = resolveSpec({ runtime: 'python', mode: 'compute' });
  // Podman on this machine takes the seccomp profile as a file, as the engine gives it (seccompProfile.ts).
  const hostConfig = (
    await withSeccompFor({ HostConfig: sandboxHostConfig(spec, TEST_IMAGES.python, 'podman') }, 'podman-local')
  ).HostConfig!;
  const settle = () => engine.computeRuns.pool.settled();
  const groups: Group[] = [
    {
      id: 'podman-run',
      title: 'Podman: sandbox_run, Python one-liner',
      arms: [
        {
          name: 'Podman: sandbox_run (warm pool)',
          run: async () =>
            expect(await runNamedTool('sandbox_run', { code: CODE, runtime: 'python' }, tool), '42', 'sandbox_run'),
        },
        {
          name: 'Podman: API one-shot',
          run: async () =>
            expect(
              await rawOneShot(engine.docker, TEST_IMAGES.python, hostConfig, ['python3', '-c', CODE]),
              '42',
              'the API one-shot',
            ),
        },
        {
          name: 'podman run --rm',
          run: async () =>
            expect(await cliOneShot(TEST_IMAGES.python, spec, ['python3', '-c', CODE], 'podman'), '42', 'podman run'),
        },
      ],
      comparisons: [
        { ours: 'Podman: sandbox_run (warm pool)', baseline: 'podman run --rm', target: 0.25 },
        { ours: 'Podman: sandbox_run (warm pool)', baseline: 'Podman: API one-shot', target: 0.5 },
      ],
      iterations,
      warmup,
      settle,
    },
    {
      id: 'podman-exec',
      title: 'Podman: sandbox_exec, echo hi in a session',
      arms: [
        {
          name: 'Podman: sandbox_exec',
          run: async () =>
            expect(await runNamedTool('sandbox_exec', { command: 'echo hi' }, tool), 'hi', 'sandbox_exec'),
        },
        {
          name: 'Podman: API exec',
          run: async () =>
            expect((await rawExec(engine.docker, session, ['sh', '-c', 'echo hi'])).stdout, 'hi', 'the API exec'),
        },
        {
          name: 'podman exec',
          run: async () => expect(await cliExec(session.id, ['sh', '-c', 'echo hi'], 'podman'), 'hi', 'podman exec'),
        },
      ],
      comparisons: [{ ours: 'Podman: sandbox_exec', baseline: 'Podman: API exec', target: 1.1 }],
      iterations,
      warmup,
      settle,
    },
  ];
  return {
    groups,
    notes: [
      `Podman: ${info.product} ${info.version} (API ${info.apiVersion}) at ${found.host}, rootful, the same images (loaded from Docker); the podman CLI arms run podman itself (not through the service), with the docker arms' flags. On Podman the API one-shot asks for NetworkMode none (Podman ignores NetworkDisabled).`,
    ],
    dispose: async () => {
      await runNamedTool('sandbox_close', {}, tool).catch(() => undefined);
      await engine.dispose();
      rmSync(folder, { recursive: true, force: true });
      if (found.started)
        await run('bash', [join(ROOT, 'scripts', 'provision-podman.sh'), '--stop']).catch(() => undefined);
    },
  };
}
