/**
 * `npm run bench`: our tool calls beside raw dockerode and the docker CLI, arms interleaved round-robin
 * in one run, warm-up discarded. Prints the Markdown table and writes bench/results/bench-<time>.{md,json,svg,png}
 * (and latest.*). Flags: --iterations N (30), --warmup N (5), --only run,exec,cli,podman-run,podman-exec,egress,copy,copy-list,... , --no-activation.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, copyFileSync, existsSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import type Docker from 'dockerode';
import { runNamedTool } from '../../src/core/tools/runTool';
import { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { TEST_IMAGES } from '../../test/engine/harness';
import { measureActivation } from './activation';
import { benchGroups } from './groups';
import { cliGroup } from './cli';
import { podmanGroups } from './podman';
import { benchTools } from './benchTools';
import { measureGroup, type GroupResult } from './measure';
import { profileCalls } from './profile';
import { markdown, renderPng, svgChart, type BenchReport } from './report';
import { outputShapesGroup } from './outputShapes';
import { virtualGroup } from './virtual';
import { mcpGroup } from './mcp';
import { egressGroup } from './egress';
import { copyGroups } from './copy';

const ROOT = resolve(__dirname, '..', '..');
const POOL_SIZE = 2;

function flag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

async function main(): Promise<void> {
  const iterations = Number(flag('iterations') ?? 30);
  const warmup = Number(flag('warmup') ?? 5);
  const only = flag('only')?.split(',');
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-bench-'));
  const engine = new DockerEngine({ images: TEST_IMAGES, poolSize: POOL_SIZE });
  const { service, tool } = benchTools(engine, folder, POOL_SIZE);
  const notes: string[] = [
    `Our arms go through runNamedTool (the language-model tools' own path) on a long-lived DockerEngine with a warm pool of ${POOL_SIZE}; untimed between calls, the pool refills and used containers finish being removed (an agent's think time between calls is longer than the ~150 ms that takes), so arms never overlap.`,
    'The API one-shot is create, start, wait, logs, remove with the same limits and NetworkDisabled; `docker run --rm` has the same limits but `--network none` (the CLI has no NetworkDisabled).',
  ];
  const groups: GroupResult[] = [];
  let session: Docker.Container | undefined;
  try {
    const info = await engine.info();
    const dockerInfo = (await engine.docker.info()) as { Driver?: string; CgroupVersion?: string; NCPU?: number };
    const machine = {
      cpu: `${cpus()[0]?.model.trim() ?? 'unknown'} × ${cpus().length}`,
      memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
      kernel: release(),
      node: process.version,
      engine: `${info.product} ${info.version} (API ${info.apiVersion}, ${dockerInfo.Driver ?? '?'}, cgroup v${dockerInfo.CgroupVersion ?? '?'})`,
    };
    log(`Benchmark on ${machine.cpu}, ${machine.engine}; ${iterations} rounds after ${warmup} warm-up.`);
    await runNamedTool('sandbox_open', {}, tool);
    session = engine.docker.getContainer(service.known(undefined)!.id);
    const setup = {
      engine,
      service,
      tool,
      pythonImage: TEST_IMAGES.python,
      session: () => session!,
      iterations,
      warmup,
    };
    const all = benchGroups(setup);
    all.push(await outputShapesGroup(tool, iterations, warmup));
    const cli =
      !only || only.includes('cli')
        ? cliGroup(TEST_IMAGES.python, iterations, warmup, (id) =>
            engine.docker.getContainer(id).remove({ force: true }),
          )
        : undefined;
    if (cli) all.push(cli);
    const podman =
      !only || only.some((id) => id.startsWith('podman'))
        ? await podmanGroups(iterations, warmup, POOL_SIZE)
        : undefined;
    if (typeof podman === 'string') notes.push(podman);
    else if (podman) {
      all.push(...podman.groups);
      notes.push(...podman.notes);
    }
    const virtual = await virtualGroup(iterations, warmup);
    if (typeof virtual === 'string') notes.push(virtual);
    else all.push(virtual.group);
    const mcp = !only || only.includes('mcp') ? await mcpGroup(iterations, warmup, POOL_SIZE) : undefined;
    if (mcp) all.push(mcp.group);
    const egress = !only || only.includes('egress') ? await egressGroup(iterations, warmup) : undefined;
    if (egress) all.push(egress.group);
    const copy =
      !only || only.some((id) => id.startsWith('copy'))
        ? await copyGroups({ engine, tool, iterations, warmup, log })
        : undefined;
    if (copy) all.push(...copy.groups);
    if (copy) notes.push(...copy.notes);
    try {
      for (const group of all.filter((candidate) => !only || only.includes(candidate.id))) {
        log(`${group.title}`);
        const result = await measureGroup(group, log);
        groups.push(result);
        if (group === egress?.group) notes.push(...egress.notes(result));
      }
    } finally {
      if (typeof virtual !== 'string') await virtual.dispose();
      await mcp?.dispose();
      await egress?.dispose();
      await copy?.dispose();
      await cli?.dispose();
      if (typeof podman === 'object') await podman.dispose();
    }
    const profiles = only && !only.includes('run') ? [] : await profileCalls(setup);
    const activation = process.argv.includes('--no-activation')
      ? undefined
      : await measureActivation(ROOT, Math.max(10, iterations), 3);
    if (activation)
      notes.push(
        "Activation is require() of the built dist/extension.js plus activate() in a fresh Node process per sample, with a stand-in `vscode` module: our code only, not VS Code's own work (scripts/bench/activationChild.cjs); no socket was open after activate (no engine call).",
      );
    if (activation?.samples.some((sample) => sample.sockets > 0))
      notes.push('WARNING: a socket was open after activate(): activation reached for the engine.');
    const report: BenchReport = {
      when: new Date().toISOString(),
      machine,
      settings: { rounds: iterations, 'warm-up': warmup, 'pool size': POOL_SIZE },
      groups,
      activation,
      notes,
      profiles,
    };
    await write(report, log);
  } finally {
    await runNamedTool('sandbox_close', {}, tool).catch(() => undefined);
    await engine.dispose();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function write(report: BenchReport, log: (line: string) => void): Promise<void> {
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const stem = join(dir, `bench-${report.when.replace(/[:.]/g, '-')}`);
  const md = markdown(report);
  const svg = svgChart(report);
  writeFileSync(`${stem}.md`, md);
  writeFileSync(`${stem}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${stem}.svg`, svg);
  const pngProblem = await renderPng(svg, `${stem}.png`).catch((error: Error) => `PNG not rendered: ${error.message}`);
  if (pngProblem) log(pngProblem);
  for (const extension of ['md', 'json', 'svg', 'png']) {
    if (existsSync(`${stem}.${extension}`)) copyFileSync(`${stem}.${extension}`, join(dir, `latest.${extension}`));
  }
  process.stdout.write(md);
  process.stdout.write(`\nJSON: ${stem}.json\nChart: ${stem}.svg${pngProblem ? '' : ` and ${stem}.png`}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
