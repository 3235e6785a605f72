/**
 * The virtual engine (just-bash: bash with a virtual file system, Python in WebAssembly), when it is in
 * the tree: imported on demand, so the benchmark runs the same without it. Its workers are the bundled
 * ones of dist/ (what the extension and the CLI run; `npm run bench` builds them), else the source tree's.
 *
 * Warm calls run on one engine, as an extension host or a long CLI process makes them: between calls,
 * untimed, the worker kept for the next sandbox finishes loading (as the Docker arms let their pool
 * refill). The first call of a process is timed in a new Node.js process per sample (this file, run
 * as a child with AGENT_SANDBOX_BENCH_FIRST_CALL): from the engine's construction to the call's result,
 * without Node.js's own start and the import of our code.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCompute } from '../../src/core/sessions/compute';
import type { SandboxEngine } from '../../src/core/engine/engine';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import type { Group } from './measure';

const ROOT = join(__dirname, '..', '..');
const SOURCE = join(ROOT, 'src', 'engines', 'virtual', 'virtualEngine.ts');
const BUNDLED = join(ROOT, 'dist', 'just-bash');
const FIRST_CALL = 'AGENT_SANDBOX_BENCH_FIRST_CALL';

type VirtualEngineLike = SandboxEngine & { warmedUp?(): Promise<void> };
type Runtime = 'bash' | 'python';

const ONE_LINERS: Record<Runtime, { code: string; wanted: string }> = {
  bash: { code: 'echo hi', wanted: 'hi' },
  python: { code: 'print(6 * 7)', wanted: '42' },
};

type EngineClass = new (options?: object) => VirtualEngineLike;

async function engineClass(): Promise<EngineClass> {
  return ((await import(SOURCE)) as { VirtualEngine: EngineClass }).VirtualEngine;
}

/** The engine on the bundled workers when they are built, else on the source tree's. */
function virtualEngine(VirtualEngine: EngineClass): VirtualEngineLike {
  if (!existsSync(join(BUNDLED, 'dist', 'bundle', 'chunks', 'virtualWorker.js'))) return new VirtualEngine();
  return new VirtualEngine({
    location: {
      entry: join(BUNDLED, 'dist', 'bundle', 'chunks', 'virtualWorker.js'),
      typescript: false,
      packageJson: join(BUNDLED, 'package.json'),
    },
  });
}

async function oneLiner(engine: SandboxEngine, runtime: Runtime): Promise<void> {
  const { code, wanted } = ONE_LINERS[runtime];
  const result = await runCompute(engine, resolveSpec({ runtime, mode: 'compute' }), { code });
  if (!result.stdout.includes(wanted))
    throw new Error(
      `${runtime} returned ${JSON.stringify(result.stdout.slice(0, 100))} ${result.stderr.slice(0, 200)}`,
    );
}

/** One sample of a first call: a new process that times its engine's first one-liner and prints the milliseconds. */
function firstCallInNewProcess(runtime: Runtime): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', __filename], {
      cwd: ROOT,
      env: { ...process.env, [FIRST_CALL]: runtime },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(/^first-call-ms (\S+)$/m.exec(out)?.[1]);
      if (code === 0 && Number.isFinite(ms)) resolve([ms]);
      else reject(new Error(`the first-call process ended with ${code}: ${err.slice(0, 300)}`));
    });
  });
}

async function firstCallChild(runtime: Runtime): Promise<void> {
  const VirtualEngine = await engineClass();
  const started = performance.now();
  const engine = virtualEngine(VirtualEngine);
  await oneLiner(engine, runtime);
  const elapsed = performance.now() - started;
  await engine.dispose();
  process.stdout.write(`first-call-ms ${elapsed}\n`);
}

export async function virtualGroup(
  iterations: number,
  warmup: number,
): Promise<{ group: Group; dispose(): Promise<void> } | string> {
  if (!existsSync(SOURCE))
    return 'The virtual engine (src/engines/virtual) is not in this tree: its arms were skipped.';
  let engine: VirtualEngineLike;
  try {
    engine = virtualEngine(await engineClass());
    await oneLiner(engine, 'bash');
  } catch (error) {
    return `The virtual engine did not run here (${(error as Error).message.split('\n')[0]}): its arms were skipped.`;
  }
  const warm = (runtime: Runtime) => `virtual: ${runtime === 'bash' ? 'bash echo hi' : 'Python one-liner'}`;
  const first = (runtime: Runtime) => `${warm(runtime)}, first call of a new process`;
  return {
    group: {
      id: 'virtual',
      title: 'virtual engine: compute one-liners warm and as a process first call, and a loop at its time limit',
      arms: [
        { name: warm('bash'), run: () => oneLiner(engine, 'bash') },
        { name: warm('python'), run: () => oneLiner(engine, 'python') },
        { name: first('bash'), run: () => firstCallInNewProcess('bash') },
        { name: first('python'), run: () => firstCallInNewProcess('python') },
        {
          // How soon a runaway loop is stopped once its limit passes (the tests check that it is).
          name: 'virtual: bash loop stopped at a 1 s time limit',
          run: async () => {
            const result = await runCompute(engine, resolveSpec({ runtime: 'bash', timeoutSeconds: 1 }), {
              code: 'while true; do :; done',
            });
            if (result.outcome !== 'timeout') throw new Error(`the loop ended with ${result.outcome}`);
          },
        },
      ],
      // Issue 21, part 4: after the first call of a process, bash at most 10 ms and Python at most 250 ms.
      comparisons: [
        { ours: warm('bash'), baseline: first('bash'), kind: 'time', target: 10 },
        { ours: warm('python'), baseline: first('python'), kind: 'time', target: 250 },
      ],
      settle: async () => {
        await engine.warmedUp?.();
      },
      iterations: Math.max(5, Math.ceil(iterations / 2)),
      warmup: Math.min(2, warmup),
    },
    dispose: () => engine.dispose(),
  };
}

const asChild = process.env[FIRST_CALL];
if (asChild === 'bash' || asChild === 'python') {
  firstCallChild(asChild).catch((error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  });
}
