/**
 * Extension activation: require() of the built dist/extension.js plus activate(), in a fresh Node
 * process per sample with a stand-in `vscode` module (activationChild.cjs). Not the real extension
 * host: it leaves out VS Code's own work and measures only ours.
 */
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { summarize, type Summary } from './stats';

const run = promisify(execFile);

export interface ActivationResult {
  samples: { requireMs: number; activateMs: number; totalMs: number; firstUseMs: number; sockets: number }[];
  total: Summary;
  require: Summary;
  activate: Summary;
  /** After activate(), the first use of a feature: loading the services (dist/compositionRoot.js) and building them. */
  firstUse: Summary;
  /** Bytes of each built file the extension ships. */
  bundle: Record<string, number>;
}

export async function measureActivation(root: string, iterations: number, warmup: number): Promise<ActivationResult> {
  const extension = join(root, 'dist', 'extension.js');
  const samples: ActivationResult['samples'] = [];
  for (let index = 0; index < warmup + iterations; index++) {
    const { stdout } = await run(process.execPath, [join(__dirname, 'activationChild.cjs'), extension], { cwd: root });
    const sample = JSON.parse(stdout.trim().split('\n').pop()!) as {
      requireMs: number;
      activateMs: number;
      firstUseMs: number;
      sockets: number;
    };
    if (index >= warmup) samples.push({ ...sample, totalMs: sample.requireMs + sample.activateMs });
  }
  const bundle: Record<string, number> = {};
  for (const file of [
    'extension.js',
    'compositionRoot.js',
    'cli.js',
    'cli-main.js',
    'egressProxy.js',
    'ssh.js',
    'webview.js',
  ]) {
    const path = join(root, 'dist', file);
    if (existsSync(path)) bundle[`dist/${file}`] = statSync(path).size;
  }
  return {
    samples,
    total: summarize(samples.map((sample) => sample.totalMs)),
    require: summarize(samples.map((sample) => sample.requireMs)),
    activate: summarize(samples.map((sample) => sample.activateMs)),
    firstUse: summarize(samples.map((sample) => sample.firstUseMs)),
    bundle,
  };
}
