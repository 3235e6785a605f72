/**
 * The CLI as a user's shell runs it, a whole process per call: `agent-sandbox run` of a Python
 * one-liner beside `docker run --rm` of the same (the same limits, see raw.ts), and `agent-sandbox
 * --help` beside `node -e 0` (what starting the CLI costs over starting Node.js). The run claims a
 * shared warm container a previous run left (sharedPool.ts); between calls, untimed, its filler
 * tops the pool up, as a user's pause between commands would let it. The cold arm turns the shared
 * pool off (AGENT_SANDBOX_POOL_SIZE=0) for comparison.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { fillerRunning, readyIds } from '../../test/engine/harness';
import type { Group } from './measure';
import { cliOneShot } from './raw';

const CLI = resolve(__dirname, '..', '..', 'dist', 'cli.js');
const CODE = 'print(6 * 7)';

function processRun(argv: readonly string[], env: NodeJS.ProcessEnv, wanted: string): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (code) => {
      if (code === 0 && stdout.includes(wanted)) done();
      else fail(new Error(`exit ${code}: ${stdout.slice(0, 200)} ${stderr.slice(0, 300)}`));
    });
  });
}

export function cliGroup(
  pythonImage: string,
  iterations: number,
  warmup: number,
  /** Removes a container the pool still holds once the group is done. */
  remove: (id: string) => Promise<unknown>,
): Group & { dispose(): Promise<void> } {
  const state = mkdtempSync(join(tmpdir(), 'agent-sandbox-bench-cli-'));
  const env = { AGENT_SANDBOX_STATE_DIR: state, AGENT_SANDBOX_IMAGE_PYTHON: pythonImage };
  const spec = resolveSpec({ runtime: 'python', mode: 'compute' });
  return {
    id: 'cli',
    title: 'the CLI as a whole process: agent-sandbox run vs docker run --rm, and --help vs node -e 0',
    arms: [
      {
        name: 'agent-sandbox run (warm container from an earlier process)',
        run: () => processRun([CLI, 'run', '--runtime', 'python', '--code', CODE], env, '42'),
      },
      {
        name: 'agent-sandbox run, no warm containers (AGENT_SANDBOX_POOL_SIZE=0)',
        run: () =>
          processRun(
            [CLI, 'run', '--runtime', 'python', '--code', CODE],
            { ...env, AGENT_SANDBOX_POOL_SIZE: '0' },
            '42',
          ),
      },
      {
        name: 'docker run --rm',
        run: async () => {
          const output = await cliOneShot(pythonImage, spec, ['python3', '-c', CODE]);
          if (!output.includes('42')) throw new Error(`docker run printed ${output.slice(0, 200)}`);
        },
      },
      { name: 'agent-sandbox --help', run: () => processRun([CLI, '--help'], {}, 'Usage: agent-sandbox') },
      { name: 'node -e 0', run: () => processRun(['-e', '0'], {}, '') },
    ],
    comparisons: [
      { ours: 'agent-sandbox run (warm container from an earlier process)', baseline: 'docker run --rm', target: 0.6 },
      { ours: 'agent-sandbox run, no warm containers (AGENT_SANDBOX_POOL_SIZE=0)', baseline: 'docker run --rm' },
      { ours: 'agent-sandbox --help', baseline: 'node -e 0', target: 1.3 },
    ],
    iterations,
    warmup,
    // The filler ends once the pool is full again (or a few seconds passed).
    settle: async () => {
      for (let attempt = 0; attempt < 100 && (fillerRunning() || readyIds(state).length < 2); attempt++)
        await new Promise((done) => setTimeout(done, 50));
    },
    dispose: async () => {
      for (let attempt = 0; attempt < 100 && fillerRunning(); attempt++)
        await new Promise((done) => setTimeout(done, 50));
      await Promise.all(readyIds(state).map((id) => remove(id).catch(() => undefined)));
    },
  };
}
