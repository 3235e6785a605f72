/**
 * Shared setup for engine tests: a real Docker Engine, the local runtime images, and a check that the
 * suite leaves no container of ours behind. When AGENT_SANDBOX_REQUIRE_ENGINE=1 (CI and `npm test`)
 * a missing engine fails the suite instead of skipping it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '../../src/core/sessions/processAlive';
import Docker from 'dockerode';
import { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { VirtualEngine } from '../../src/engines/virtual/virtualEngine';
import type { SandboxEngine } from '../../src/core/engine/engine';
import { LABEL } from '../../src/engines/docker/labels';
import { claimantOf } from '../../src/engines/docker/sharedPool';
import type { Runtime } from '../../src/core/spec/spec';

export const engineRequired = process.env.AGENT_SANDBOX_REQUIRE_ENGINE === '1';

/** The locally built images (scripts/provision-engine.sh); an environment variable overrides each. */
export const TEST_IMAGES: Record<Runtime, string> = {
  python: process.env.AGENT_SANDBOX_IMAGE_PYTHON ?? 'agent-sandbox/python:bookworm',
  node: process.env.AGENT_SANDBOX_IMAGE_NODE ?? 'agent-sandbox/node:bookworm',
  bash: process.env.AGENT_SANDBOX_IMAGE_BASH ?? 'agent-sandbox/bash:bookworm',
  linux: process.env.AGENT_SANDBOX_IMAGE_LINUX ?? 'agent-sandbox/linux:bookworm',
};

export function testEngine(): DockerEngine {
  return new DockerEngine({ images: TEST_IMAGES });
}

let checked: Promise<string | undefined> | undefined;

/** Undefined when the engine answers and the test images exist, otherwise why not. */
export function engineProblem(): Promise<string | undefined> {
  checked ??= (async () => {
    const engine = testEngine();
    try {
      await engine.info();
    } catch (error) {
      return (error as Error).message;
    }
    for (const image of Object.values(TEST_IMAGES)) {
      try {
        await engine.docker.getImage(image).inspect();
      } catch {
        return `the test image ${image} is missing; run scripts/provision-engine.sh`;
      }
    }
    return undefined;
  })();
  return checked;
}

/** Call in a `before` hook: fails (CI) or skips (a developer without an engine) when there is no engine. */
export async function requireEngine(context: Mocha.Context): Promise<void> {
  const problem = await engineProblem();
  if (!problem) return;
  if (engineRequired) throw new Error(`The engine tests need a Docker Engine: ${problem}`);

  console.warn(`Skipping engine tests: ${problem} (set AGENT_SANDBOX_REQUIRE_ENGINE=1 to fail instead).`);
  context.skip();
}

/** When this test run started: containers created before it are a developer's own and not the suite's concern. */
export const RUN_STARTED = new Date().toISOString();

/** Containers of ours created since this test run started: sandboxes, and the network relays of allowlist sandboxes. */
export async function containersOfOurs(): Promise<Docker.ContainerInfo[]> {
  const docker = new Docker(testEngine().endpoint.options);
  const all = [
    ...(await docker.listContainers({ all: true, filters: { label: [`${LABEL.managed}=1`] } })),
    ...(await docker.listContainers({ all: true, filters: { label: [LABEL.egressFor] } })),
  ];
  return all.filter(
    (container) => (container.Labels[LABEL.created] ?? '') >= RUN_STARTED && !ownedByAnotherRun(container),
  );
}

/** Polls until `check` holds, for at most `tries` × 100 ms. */
export async function pollUntil(check: () => boolean | Promise<boolean>, tries = 600): Promise<boolean> {
  for (let attempt = 0; attempt < tries; attempt++) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** The containers a state folder's shared pool holds ready (sharedPool.ts): one ready file each, of every configuration. */
export function readyIds(state: string): string[] {
  const warm = join(state, 'warm');
  let keys: string[];
  try {
    keys = readdirSync(warm).filter((name) => /^[0-9a-f]{64}$/.test(name));
  } catch {
    return [];
  }
  return keys.flatMap((key) => readdirSync(join(warm, key)).filter((name) => /^[0-9a-f]{64}$/.test(name)));
}

/** Whether a detached `agent-sandbox warm-fill` runs on this machine (it may still make containers). */
export function fillerRunning(): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes('warm-fill')) return true;
    } catch {
      // Gone meanwhile.
    }
  }
  return false;
}

/**
 * Removes the shared warm containers of this run that still wait to be claimed (sharedPool.ts),
 * once no filler is making more; a claimed one (its name ends in -by-<pid>) stays for the check.
 */
export async function removeWaitingWarm(): Promise<number> {
  for (let attempt = 0; attempt < 600 && fillerRunning(); attempt++)
    await new Promise((resolve) => setTimeout(resolve, 100));
  const docker = new Docker(testEngine().endpoint.options);
  const warm = await docker.listContainers({ all: true, filters: { label: [LABEL.warm] } });
  const waiting = warm.filter(
    (container) =>
      (container.Labels[LABEL.created] ?? '') >= RUN_STARTED && !container.Names.some((name) => /-by-\d+$/.test(name)),
  );
  await Promise.all(
    waiting.map((container) =>
      docker
        .getContainer(container.Id)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
  return waiting.length;
}

/**
 * A warm or running compute sandbox of a process that is alive and is neither this run nor started by
 * it: another program on the same engine (a developer's VS Code, a second test run), not a leftover
 * of ours. A container whose owner is gone is counted: cleaning those up is the product's job.
 */
function ownedByAnotherRun(container: Docker.ContainerInfo): boolean {
  // A claimed shared warm container carries its claimant's pid in its name (sharedPool.ts).
  const pid = Number(container.Labels[LABEL.ownerPid] ?? claimantOf(container.Names));
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) return false;
  for (let ancestor: number | undefined = pid, hops = 0; ancestor && ancestor > 1 && hops < 64; hops++) {
    if (ancestor === process.pid) return false;
    ancestor = parentOf(ancestor);
  }
  return true;
}

function parentOf(pid: number): number | undefined {
  try {
    // The fields after the command's name, which is in parentheses and may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Volumes no container uses; a sandbox that leaked one (an image's VOLUME, say) would add to them. */
export async function danglingVolumes(): Promise<string[]> {
  const { Volumes } = await new Docker(testEngine().endpoint.options).listVolumes({ filters: { dangling: ['true'] } });
  return (Volumes ?? []).map((volume) => volume.Name);
}

/** The engines the contract suite (contract.test.ts) runs against: the same assertions for each. */
export interface ContractEngine {
  kind: 'docker' | 'virtual';
  create(): SandboxEngine;
  /** Like requireEngine: fails or skips when the engine cannot run here. */
  require(context: Mocha.Context): Promise<void>;
}

export const CONTRACT_ENGINES: readonly ContractEngine[] = [
  { kind: 'docker', create: testEngine, require: requireEngine },
  // The virtual engine needs no daemon: it runs wherever the tests run.
  { kind: 'virtual', create: () => new VirtualEngine(), require: async () => undefined },
];
