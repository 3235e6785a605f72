/**
 * What is measured: each tool call through the code path the language-model tools use (runNamedTool: input
 * validation, the handler on SandboxService, the Docker engine with its warm pool, result formatting),
 * beside the same work done raw through dockerode and the docker CLI.
 */
import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import type { SandboxService } from '../../src/core/sessions/sandboxService';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { callNamedTool, runNamedTool, type ToolCallContext } from '../../src/core/tools/runTool';
import type { DockerEngine } from '../../src/engines/docker/dockerEngine';
import type { Group } from './measure';
import {
  ShellChannel,
  cliExec,
  cliOneShot,
  rawArchiveContainer,
  rawExec,
  rawGet,
  rawOneShot,
  rawPut,
  sandboxHostConfig,
} from './raw';

export interface BenchSetup {
  engine: DockerEngine;
  service: SandboxService;
  tool: ToolCallContext;
  pythonImage: string;
  /** The default session's container, opened before the exec and file groups. */
  session: () => Docker.Container;
  iterations: number;
  warmup: number;
}

const PYTHON_ONE_LINER = 'print(6 * 7)';
/** The same 600x400 plot for both arms: the interpreter returns it, python3 -c saves it. */
const PLOT =
  'import matplotlib.pyplot as plt\nplt.figure(figsize=(6, 4))\nplt.plot([x * x for x in range(50)])\nplt.title("squares")';

function expect(text: string, wanted: string, what: string): void {
  if (!text.includes(wanted))
    throw new Error(`${what} returned ${JSON.stringify(text.slice(0, 200))}, without ${JSON.stringify(wanted)}`);
}

export function benchGroups(setup: BenchSetup): Group[] {
  const { engine, tool } = setup;
  const spec = resolveSpec({ runtime: 'python', mode: 'compute' });
  const hostConfig = sandboxHostConfig(spec, setup.pythonImage);
  const settle = () => engine.computeRuns.pool.settled();
  const base = { iterations: setup.iterations, warmup: setup.warmup, settle };
  const sandboxRun = async () =>
    expect(await runNamedTool('sandbox_run', { code: PYTHON_ONE_LINER, runtime: 'python' }, tool), '42', 'sandbox_run');
  const apiOneShot = async () =>
    expect(
      await rawOneShot(engine.docker, setup.pythonImage, hostConfig, ['python3', '-c', PYTHON_ONE_LINER]),
      '42',
      'the API one-shot',
    );

  const groups: Group[] = [
    {
      id: 'run',
      title: 'sandbox_run: Python one-liner',
      arms: [
        { name: 'sandbox_run (warm pool)', run: sandboxRun },
        { name: 'API one-shot', run: apiOneShot },
        {
          name: 'docker run --rm',
          run: async () =>
            expect(await cliOneShot(setup.pythonImage, spec, ['python3', '-c', PYTHON_ONE_LINER]), '42', 'docker run'),
        },
      ],
      comparisons: [
        { ours: 'sandbox_run (warm pool)', baseline: 'docker run --rm', target: 0.25 },
        { ours: 'sandbox_run (warm pool)', baseline: 'API one-shot', target: 0.5 },
      ],
      ...base,
    },
    {
      id: 'exec',
      title: 'sandbox_exec: echo hi in a session',
      arms: [
        {
          name: 'sandbox_exec',
          run: async () =>
            expect(await runNamedTool('sandbox_exec', { command: 'echo hi' }, tool), 'hi', 'sandbox_exec'),
        },
        {
          name: 'API exec',
          run: async () =>
            expect(
              (await rawExec(engine.docker, setup.session(), ['sh', '-c', 'echo hi'])).stdout,
              'hi',
              'the API exec',
            ),
        },
        {
          name: 'docker exec',
          run: async () => expect(await cliExec(setup.session().id, ['sh', '-c', 'echo hi']), 'hi', 'docker exec'),
        },
      ],
      comparisons: [
        { ours: 'sandbox_exec', baseline: 'API exec', target: 1.1 },
        { ours: 'sandbox_exec', baseline: 'docker exec' },
      ],
      ...base,
    },
    {
      id: 'interpreter',
      title: "sandbox_exec: 1+1 in the session's persistent Python interpreter beside python3 -c",
      arms: [
        {
          name: 'persistent interpreter: code 1+1',
          run: async () => expect(await runNamedTool('sandbox_exec', { code: '1+1' }, tool), '2', 'the interpreter'),
        },
        {
          name: "sandbox_exec: python3 -c 'print(1+1)'",
          run: async () =>
            expect(
              await runNamedTool('sandbox_exec', { cmd: ['python3', '-c', 'print(1+1)'] }, tool),
              '2',
              'python3 -c',
            ),
        },
      ],
      comparisons: [
        { ours: 'persistent interpreter: code 1+1', baseline: "sandbox_exec: python3 -c 'print(1+1)'", target: 0.25 },
      ],
      ...base,
    },
    {
      id: 'plot',
      title: 'a 600x400 matplotlib plot: returned as an image by the interpreter, beside python3 -c saving it',
      arms: [
        {
          name: 'persistent interpreter: plot returned as an image',
          run: async () => {
            const output = await callNamedTool('sandbox_exec', { code: PLOT }, tool);
            if (output.images?.length !== 1)
              throw new Error(
                `the plot came back as ${output.images?.length ?? 0} images: ${output.text.slice(0, 300)}`,
              );
          },
        },
        {
          name: 'sandbox_exec: python3 -c saving the plot',
          run: async () =>
            expect(
              await runNamedTool(
                'sandbox_exec',
                {
                  cmd: [
                    'python3',
                    '-c',
                    `import matplotlib\nmatplotlib.use("Agg")\n${PLOT}\nplt.savefig("/tmp/plot.png", dpi=100)\nprint("saved")`,
                  ],
                },
                tool,
              ),
              'saved',
              'python3 -c',
            ),
        },
      ],
      comparisons: [
        {
          ours: 'persistent interpreter: plot returned as an image',
          baseline: 'sandbox_exec: python3 -c saving the plot',
          target: 1.5,
        },
      ],
      ...base,
    },
  ];

  let channel: ShellChannel | undefined;
  groups.push({
    id: 'channel',
    title: 'design probe: a long-lived shell channel vs an exec per call (echo hi)',
    arms: [
      {
        name: 'API exec',
        run: async () =>
          expect((await rawExec(engine.docker, setup.session(), ['sh', '-c', 'echo hi'])).stdout, 'hi', 'the API exec'),
      },
      {
        name: 'one attached sh (prototype)',
        run: async () => {
          channel ??= await ShellChannel.open(engine.docker, setup.session());
          expect(await channel.run('echo hi'), 'hi', 'the shell channel');
        },
      },
    ],
    comparisons: [{ ours: 'one attached sh (prototype)', baseline: 'API exec' }],
    ...base,
    done: () => channel?.close(),
  });

  // The archive API's floor runs on a container of its own (raw.ts: rawArchiveContainer), made on
  // first use (a warm-up round) and kept for the read groups, which read what the write groups put.
  let floor: Promise<Docker.Container> | undefined;
  const archiveFloor = () => {
    if (!floor) {
      floor = rawArchiveContainer(engine.docker, setup.pythonImage, hostConfig);
      process.once(
        'beforeExit',
        () => void floor?.then((container) => container.remove({ force: true })).catch(() => undefined),
      );
    }
    return floor;
  };

  for (const size of [1, 10]) {
    const data = randomBytes(size * 1024 * 1024);
    const content = data.toString('base64');
    const path = `bench-${size}m.bin`;
    groups.push({
      id: `write-${size}m`,
      title: `write one ${size} MiB file`,
      arms: [
        {
          name: 'sandbox_fs_write',
          run: async () =>
            expect(
              await runNamedTool('sandbox_fs_write', { files: [{ path, content, encoding: 'base64' }] }, tool),
              path,
              'sandbox_fs_write',
            ),
        },
        {
          name: 'engine writeFiles (no tool layer)',
          run: async () =>
            void (await (await setup.service.sandbox(undefined)).writeFiles([{ path, content, encoding: 'base64' }])),
        },
        { name: 'putArchive', run: async () => rawPut(await archiveFloor(), [{ name: `raw-${path}`, data }]) },
      ],
      comparisons: [
        { ours: 'sandbox_fs_write', baseline: 'putArchive', target: 1.2 },
        // Where the rest goes: the engine's part alone, and the tool layer (validation, decoding, result text) on top.
        { ours: 'engine writeFiles (no tool layer)', baseline: 'putArchive' },
      ],
      ...base,
    });
    groups.push({
      id: `read-${size}m`,
      title: `read one ${size} MiB file`,
      arms: [
        {
          name: 'sandbox_fs_read',
          run: async () => {
            const text = await runNamedTool(
              'sandbox_fs_read',
              { path, encoding: 'base64', max_bytes: data.length },
              tool,
            );
            if (!text.endsWith(content.slice(-64))) throw new Error('sandbox_fs_read returned other bytes');
          },
        },
        {
          name: 'engine readFile (no tool layer)',
          run: async () => {
            const read = await (
              await setup.service.sandbox(undefined)
            ).readFile(path, { encoding: 'base64', maxBytes: data.length });
            if (!read.content.endsWith(content.slice(-64))) throw new Error('readFile returned other bytes');
          },
        },
        {
          name: 'getArchive',
          run: async () => {
            const read = await rawGet(await archiveFloor(), `/workspace/raw-${path}`);
            if (!read.equals(data)) throw new Error('getArchive returned other bytes');
          },
        },
      ],
      comparisons: [
        { ours: 'sandbox_fs_read', baseline: 'getArchive', target: 1.2 },
        { ours: 'engine readFile (no tool layer)', baseline: 'getArchive' },
      ],
      ...base,
    });
  }

  const small = Array.from({ length: 100 }, (_, index) => ({ path: `many/f${index}.txt`, data: randomBytes(512) }));
  groups.push({
    id: 'write-100',
    title: 'write 100 small files in one call',
    arms: [
      {
        name: 'sandbox_fs_write',
        run: async () =>
          expect(
            await runNamedTool(
              'sandbox_fs_write',
              {
                files: small.map((file) => ({
                  path: file.path,
                  content: file.data.toString('base64'),
                  encoding: 'base64',
                })),
              },
              tool,
            ),
            '100',
            'sandbox_fs_write',
          ),
      },
      {
        name: 'putArchive',
        run: async () =>
          rawPut(
            await archiveFloor(),
            small.map((file) => ({ name: `raw-${file.path}`, data: file.data })),
          ),
      },
    ],
    comparisons: [{ ours: 'sandbox_fs_write', baseline: 'putArchive', target: 1.2 }],
    ...base,
  });

  // The warm pool's refill, untimed everywhere else (settle): after a take, how long until the pool
  // is full again and the used container is gone, beside the create and start a refill needs at least.
  groups.push({
    id: 'refill',
    title: 'warm pool refill after a sandbox_run takes a container (pool.settled())',
    unit: 'from the end of the sandbox_run to the pool settled; the run itself untimed',
    arms: [
      {
        name: 'pool refill after a take',
        run: async () => {
          await sandboxRun();
          const started = performance.now();
          await settle();
          return [performance.now() - started];
        },
      },
      {
        name: 'API create + start of one container',
        run: async () => {
          const started = performance.now();
          const container = await engine.docker.createContainer({
            Image: setup.pythonImage,
            Entrypoint: ['sleep'],
            Cmd: ['infinity'],
            User: '1000:1000',
            NetworkDisabled: true,
            HostConfig: hostConfig,
          });
          try {
            await container.start();
            return [performance.now() - started];
          } finally {
            await container.remove({ force: true }); // untimed: the sample is taken before
          }
        },
      },
    ],
    comparisons: [{ ours: 'pool refill after a take', baseline: 'API create + start of one container' }],
    ...base,
  });

  const parallel = 20;
  groups.push({
    id: 'concurrent',
    title: `${parallel} sandbox_run calls at once (wall time)`,
    unit: 'wall',
    arms: [
      {
        name: `${parallel} × sandbox_run`,
        run: async () => void (await all(Array.from({ length: parallel }, () => sandboxRun))),
      },
      {
        name: `${parallel} × API one-shot`,
        run: async () => void (await all(Array.from({ length: parallel }, () => apiOneShot))),
      },
    ],
    comparisons: [{ ours: `${parallel} × sandbox_run`, baseline: `${parallel} × API one-shot`, target: 1.0 }],
    iterations: Math.max(3, Math.ceil(setup.iterations / 4)),
    warmup: 1,
    settle,
  });

  // How soon a call ends once its time limit passes or its caller cancels (the tests check that it
  // ends, and what it says; how long it takes is measured here). A sample includes the limit itself.
  groups.push({
    id: 'stops',
    title: 'sandbox_exec sleep 600 stopped: at a 1 s time limit, and cancelled after 200 ms',
    unit: 'wall, including the 1 s limit or the 200 ms before the cancel',
    arms: [
      {
        name: 'time limit 1 s',
        run: async () =>
          expect(
            await runNamedTool('sandbox_exec', { command: 'sleep 600', timeout_seconds: 1 }, tool),
            'killed after 1 s',
            'sandbox_exec at its time limit',
          ),
      },
      {
        name: 'cancelled after 200 ms',
        run: async () => {
          const controller = new AbortController();
          const timer = setTimeout(() => controller.abort(new Error('the bench cancelled')), 200);
          try {
            expect(
              await runNamedTool('sandbox_exec', { command: 'sleep 600' }, { ...tool, signal: controller.signal }),
              'cancel',
              'a cancelled sandbox_exec',
            );
          } finally {
            clearTimeout(timer);
          }
        },
      },
    ],
    comparisons: [],
    iterations: Math.max(3, Math.ceil(setup.iterations / 4)),
    warmup: 1,
    settle,
  });
  return groups;
}

/** Every call, failing with the first error only after all have ended (so none is left running). */
async function all(calls: (() => Promise<void>)[]): Promise<void> {
  const results = await Promise.allSettled(calls.map((call) => call()));
  const failed = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed.length)
    throw new Error(`${failed.length} of ${calls.length} calls failed: ${(failed[0]!.reason as Error).message}`);
}
