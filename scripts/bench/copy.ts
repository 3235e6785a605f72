/**
 * Workspace access copy (issue 19, Speed): a seeded folder of 10,000 files / 200 MiB (copyFolder.ts)
 * copied into a session by sandbox_open through the tools' path, beside `docker cp` of the same folder
 * into a fresh container with the CLI and a raw putArchive of it (GNU tar streamed from the folder);
 * then the listing of that session's changes beside a raw exec of find.
 */
import { execFile, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { rmSync } from 'node:fs';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import type { Sandbox } from '../../src/core/engine/engine';
import { compareToBaseline } from '../../src/core/files/copyChanges';
import { copyDiff } from '../../src/core/files/copyDiff';
import { listSandboxFiles } from '../../src/core/files/copyListing';
import { loadBaseline, type CopyBaseline } from '../../src/core/files/folderCopy';
import { defaultStateDir } from '../../src/core/sessions/leases';
import { SandboxService } from '../../src/core/sessions/sandboxService';
import { parseSettings } from '../../src/core/spec/settings';
import { runNamedTool, type ToolCallContext } from '../../src/core/tools/runTool';
import type { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { TEST_IMAGES } from '../../test/engine/harness';
import { makeCopyFolder } from './copyFolder';
import type { Group } from './measure';
import { rawExec } from './raw';

const run = promisify(execFile);
const FILES = 10_000;
const BYTES = 200 * 1024 * 1024;
const SESSION = 'copy-bench';
/** The changes made in the listed session: 10 files modified, 5 added, 5 deleted. */
const CHANGES = 20;

function expect(text: string, wanted: string, what: string): void {
  if (!text.includes(wanted))
    throw new Error(`${what} returned ${JSON.stringify(text.slice(0, 300))}, without ${JSON.stringify(wanted)}`);
}

/** A started container of the bash image that nothing else uses, for the raw arms; removed by the caller. */
async function freshContainer(docker: Docker): Promise<Docker.Container> {
  const container = await docker.createContainer({
    Image: TEST_IMAGES.bash,
    Cmd: ['sleep', 'infinity'],
    NetworkDisabled: true,
  });
  await container.start();
  return container;
}

/** Times `work` alone, between untimed setup and cleanup: the arm's one sample. */
async function timed(work: () => Promise<void>): Promise<number[]> {
  const started = performance.now();
  await work();
  return [performance.now() - started];
}

export async function copyGroups(options: {
  engine: DockerEngine;
  tool: ToolCallContext;
  iterations: number;
  warmup: number;
  log: (line: string) => void;
}): Promise<{ groups: Group[]; notes: string[]; dispose(): Promise<void> }> {
  const { engine, log } = options;
  const docker = engine.docker;
  const given = process.env.AGENT_SANDBOX_SEED;
  const seed = given ? Number(given) : randomInt(2 ** 31);
  const made = makeCopyFolder(seed, FILES, BYTES);
  log(
    `copy: a folder of ${FILES} files, ${BYTES / 2 ** 20} MiB, seed ${seed} (AGENT_SANDBOX_SEED=${seed} makes it again)`,
  );
  const settings = parseSettings({ images: TEST_IMAGES, workspaceAccess: 'copy' });
  const service = new SandboxService({
    engine: () => engine,
    settings: () => settings,
    workspaceFolder: () => made.folder,
    trusted: () => true,
  });
  const tool: ToolCallContext = { ...options.tool, service };
  // A new sandbox each time (not the open one returned), closed after (a close refused would leave it open).
  const open = async (access: 'copy' | 'none') => {
    const text = await runNamedTool(
      'sandbox_open',
      { session: SESSION, runtime: 'bash', workspace_access: access },
      tool,
    );
    expect(text, 'Opened new sandbox', `sandbox_open ${access}`);
    return text;
  };
  const close = async () =>
    expect(await runNamedTool('sandbox_close', { sandbox_id: SESSION }, tool), 'Closed sandbox', 'sandbox_close');
  const rounds = { iterations: Math.max(3, Math.ceil(options.iterations / 10)), warmup: Math.min(1, options.warmup) };

  const copy: Group = {
    id: 'copy',
    title: `workspace access copy: ${FILES.toLocaleString('en-US')} files, ${BYTES / 2 ** 20} MiB into a session`,
    unit: 'the open, or the copy alone; closing and container setup untimed',
    arms: [
      {
        name: 'sandbox_open copy',
        run: async () => {
          try {
            return await timed(async () =>
              expect(await open('copy'), `${FILES.toLocaleString('en-US')} files`, 'sandbox_open copy'),
            );
          } finally {
            await close();
          }
        },
      },
      {
        name: 'sandbox_open none (same session, no copy)',
        run: async () => {
          try {
            return await timed(async () => expect(await open('none'), SESSION, 'sandbox_open none'));
          } finally {
            await close();
          }
        },
      },
      {
        name: 'docker cp (CLI, into a fresh container)',
        run: async () => {
          const container = await freshContainer(docker);
          try {
            return await timed(
              async () => void (await run('docker', ['cp', `${made.folder}/.`, `${container.id}:/workspace`])),
            );
          } finally {
            await container.remove({ force: true });
          }
        },
      },
      {
        name: 'putArchive (API, GNU tar of the folder streamed in)',
        run: async () => {
          const container = await freshContainer(docker);
          try {
            return await timed(async () => {
              const tar = spawn('tar', ['-C', made.folder, '--exclude=.git', '-cf', '-', '.'], {
                stdio: ['ignore', 'pipe', 'inherit'],
              });
              const exited = new Promise<number | null>((done) => tar.once('close', done));
              await container.putArchive(tar.stdout, { path: '/workspace' });
              if ((await exited) !== 0) throw new Error('tar failed');
            });
          } finally {
            await container.remove({ force: true });
          }
        },
      },
    ],
    comparisons: [
      { ours: 'sandbox_open copy', baseline: 'docker cp (CLI, into a fresh container)', target: 1.5 },
      { ours: 'sandbox_open copy', baseline: 'putArchive (API, GNU tar of the folder streamed in)' },
      { ours: 'sandbox_open none (same session, no copy)', baseline: 'docker cp (CLI, into a fresh container)' },
    ],
    ...rounds,
  };

  // The listed session stays open for the whole group, with the same few changes in it.
  let listed: { sandbox: Sandbox; baseline: CopyBaseline; container: Docker.Container } | undefined;
  const session = async () => {
    if (listed) return listed;
    await open('copy');
    const id = service.known(SESSION)!.id;
    const sandbox = await engine.attach(id);
    const change = await sandbox.exec({
      command: [
        'set -e',
        'files=$(find . -name .git -prune -o -type f -print | sort | head -n 20)',
        'for f in $(echo "$files" | head -n 10); do printf x >> "$f"; done',
        'for f in $(echo "$files" | tail -n 5); do rm "$f"; done',
        'for n in 1 2 3 4 5; do echo "new $n" > "added-$n.txt"; done',
      ].join('\n'),
    });
    if (change.exitCode !== 0) throw new Error(`changing the session failed: ${change.stderr}`);
    const baseline = await loadBaseline(defaultStateDir(), id);
    if (!baseline) throw new Error('the copy session has no baseline');
    listed = { sandbox, baseline, container: docker.getContainer(id) };
    return listed;
  };
  const changed = (count: number, what: string) => {
    if (count !== CHANGES) throw new Error(`${what} found ${count} changes, not ${CHANGES}`);
  };
  const list: Group = {
    id: 'copy-list',
    title: `listing a copy session's changes: ${FILES.toLocaleString('en-US')} files, ${CHANGES} of them changed`,
    arms: [
      {
        name: 'list changes (listSandboxFiles + compareToBaseline)',
        run: async () => {
          const { sandbox, baseline } = await session();
          changed(
            compareToBaseline(baseline, await listSandboxFiles(sandbox, undefined, baseline)).length,
            'the listing',
          );
        },
      },
      {
        name: 'copyDiff (the listing, then both sides of each change)',
        run: async () => {
          const { sandbox, baseline } = await session();
          changed((await copyDiff(sandbox, baseline, { maxBytes: 1024 * 1024 })).changes.length, 'copyDiff');
        },
      },
      {
        name: 'API exec: find -printf (size, mtime, path; no hash)',
        run: async () => {
          const { container } = await session();
          const { stdout } = await rawExec(docker, container, [
            'find',
            '/workspace',
            '-type',
            'f',
            '-printf',
            '%s %T@ %P\\n',
          ]);
          if (stdout.split('\n').length < FILES) throw new Error('find listed too few files');
        },
      },
      {
        name: 'API exec: find | xargs sha256sum (every file hashed)',
        run: async () => {
          const { container } = await session();
          const { stdout } = await rawExec(docker, container, [
            'sh',
            '-c',
            'find /workspace -type f -print0 | xargs -0 sha256sum',
          ]);
          if (stdout.split('\n').length < FILES) throw new Error('sha256sum listed too few files');
        },
      },
    ],
    comparisons: [
      {
        ours: 'list changes (listSandboxFiles + compareToBaseline)',
        baseline: 'API exec: find -printf (size, mtime, path; no hash)',
        kind: 'time',
        target: 1000,
      },
      {
        ours: 'list changes (listSandboxFiles + compareToBaseline)',
        baseline: 'API exec: find -printf (size, mtime, path; no hash)',
      },
      {
        ours: 'list changes (listSandboxFiles + compareToBaseline)',
        baseline: 'API exec: find | xargs sha256sum (every file hashed)',
      },
    ],
    ...rounds,
  };

  return {
    groups: [copy, list],
    notes: [
      `Copy groups: a git work tree of ${FILES} untracked files, ${BYTES / 2 ** 20} MiB (log-uniform sizes, a tenth executable, about 40 a folder, up to 5 deep; seed ${seed}, AGENT_SANDBOX_SEED=${seed} makes the same one). docker cp and putArchive write into a started container of the same image (the image's layer, as root); ours unpacks into the session's tmpfs /workspace as the sandbox user. docker cp also carries the folder's small .git.`,
    ],
    dispose: async () => {
      // Its changes were never applied, so sandbox_close keeps it open: removed through the engine.
      if (listed) await engine.remove(listed.sandbox.info.id).catch(() => undefined);
      rmSync(made.folder, { recursive: true, force: true });
    },
  };
}
