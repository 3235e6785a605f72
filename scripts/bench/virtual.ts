/**
 * The virtual engine (just-bash: bash with a virtual file system, Python in WebAssembly), when it is in
 * the tree: imported on demand, so the benchmark runs the same without it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCompute } from '../../src/core/sessions/compute';
import type { SandboxEngine } from '../../src/core/engine/engine';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import type { Group } from './measure';

export async function virtualGroup(
  iterations: number,
  warmup: number,
): Promise<{ group: Group; dispose(): Promise<void> } | string> {
  const path = join(__dirname, '..', '..', 'src', 'engines', 'virtual', 'virtualEngine.ts');
  if (!existsSync(path)) return 'The virtual engine (src/engines/virtual) is not in this tree: its arms were skipped.';
  let engine: SandboxEngine;
  try {
    const { VirtualEngine } = (await import(path)) as { VirtualEngine: new () => SandboxEngine };
    engine = new VirtualEngine();
    await runCompute(engine, resolveSpec({ runtime: 'bash', mode: 'compute' }), { code: 'echo hi' });
  } catch (error) {
    return `The virtual engine did not run here (${(error as Error).message.split('\n')[0]}): its arms were skipped.`;
  }
  const check = async (runtime: 'bash' | 'python', code: string, wanted: string) => {
    const result = await runCompute(engine, resolveSpec({ runtime, mode: 'compute' }), { code });
    if (!result.stdout.includes(wanted))
      throw new Error(
        `${runtime} returned ${JSON.stringify(result.stdout.slice(0, 100))} ${result.stderr.slice(0, 200)}`,
      );
  };
  return {
    group: {
      id: 'virtual',
      title: 'virtual engine: compute one-liners, and a loop at its time limit',
      arms: [
        { name: 'virtual: bash echo hi', run: () => check('bash', 'echo hi', 'hi') },
        { name: 'virtual: Python one-liner', run: () => check('python', 'print(6 * 7)', '42') },
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
      comparisons: [],
      iterations: Math.max(5, Math.ceil(iterations / 2)),
      warmup: Math.min(2, warmup),
    },
    dispose: () => engine.dispose(),
  };
}
