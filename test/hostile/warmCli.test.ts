// Warm containers shared between CLI processes (sharedPool.ts, oneShot.ts), attacked: a program that
// learns its runner's end marker, ready files that name containers other than warm ones, a filler
// request that files weaker containers under another configuration's key, hostile ready files, a warm
// container whose wait ends as its request comes, concurrent fillers of many configurations, and a
// tampered V8 code cache. Every case asserts the host side: containers left, host files, outputs.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { LABEL } from '../../src/engines/docker/labels';
import { ONE_SHOT_RUNNER } from '../../src/engines/docker/oneShot';
import type { FillRequest } from '../../src/engines/docker/sharedPool';
import { CLI, runCliText } from '../engine/cliRunner';
import { TEST_IMAGES, pollUntil as until, requireEngine, testEngine } from '../engine/harness';
import { observe } from './report';

const AREA = 'warm containers (cli)';
/** The ready files of a state folder, per configuration key. */
function readyFiles(state: string): { key: string; id: string }[] {
  const warm = join(state, 'warm');
  try {
    return readdirSync(warm)
      .filter((key) => /^[0-9a-f]{64}$/.test(key))
      .flatMap((key) =>
        readdirSync(join(warm, key))
          .filter((id) => /^[0-9a-f]{64}$/.test(id))
          .map((id) => ({ key, id })),
      );
  } catch {
    return [];
  }
}

/** The fillers started for this state folder that still run (other people's fillers are not ours to wait for). */
function fillerOf(state: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes('warm-fill')) continue;
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`AGENT_SANDBOX_STATE_DIR=${state}`))
        pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}

/** A CLI run that must end by itself: one still running after `guardMs` is killed and reported as hung. */
function runGuarded(args: string[], env: NodeJS.ProcessEnv, guardMs = 90_000) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; hung: boolean }>((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    let hung = false;
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const guard = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, guardMs);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr, hung });
    });
    child.stdin.end();
  });
}

async function gone(docker: Docker, id: string): Promise<boolean> {
  return docker
    .getContainer(id)
    .inspect()
    .then(
      (info) => !info.State.Running,
      () => true,
    );
}

describe('warm containers shared between CLI processes, attacked', function () {
  this.timeout(240_000);
  const engine = testEngine();
  const docker = engine.docker;
  let state: string;
  let env: NodeJS.ProcessEnv;
  const made: string[] = [];

  before(async function () {
    await requireEngine(this);
  });
  beforeEach(() => {
    state = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-warm-'));
    env = {
      AGENT_SANDBOX_STATE_DIR: state,
      AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash,
      AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
    };
  });
  afterEach(async () => {
    // A filler this case's runs started that is still there after a minute is stuck: it is ended.
    if (!(await until(() => fillerOf(state).length === 0)))
      for (const pid of fillerOf(state)) process.kill(pid, 'SIGKILL');
    const ids = [...readyFiles(state).map((ready) => ready.id), ...made.splice(0)];
    for (const id of ids)
      await docker
        .getContainer(id)
        .remove({ force: true })
        .catch(() => undefined);
    rmSync(state, { recursive: true, force: true });
  });
  after(() => engine.dispose());

  /** A first run leaves the configuration's warm containers; returns its key and their ids. */
  async function filled(runtime: string, extra: NodeJS.ProcessEnv = {}): Promise<{ key: string; ids: string[] }> {
    const code = runtime === 'python' ? 'pass' : 'true';
    const first = await runCliText(['run', '--runtime', runtime, '--code', code], { env: { ...env, ...extra } });
    assert.equal(first.code, 0, first.stderr);
    assert.ok(await until(() => readyFiles(state).length === 2 && fillerOf(state).length === 0), 'the filler made two');
    const ready = readyFiles(state);
    return { key: ready[0]!.key, ids: ready.map((one) => one.id) };
  }

  /** Removes a configuration's real warm containers and their ready files, so that only what a case plants is left. */
  async function emptied(key: string, ids: string[]): Promise<void> {
    for (const id of ids) {
      rmSync(join(state, 'warm', key, id), { force: true });
      await docker
        .getContainer(id)
        .remove({ force: true })
        .catch(() => undefined);
    }
  }

  // The runner runs as the sandbox user, and with no Yama the program may read its memory: the nonce
  // is no secret. Printing it ended the CLI's run while the program went on in a container nobody
  // removed (the CLI took the end marker for the container's end).
  const FORGER = String.raw`
import os, re, sys, time
print("host", open("/etc/hostname").read().strip(), flush=True)
runner = [p for p in os.listdir("/proc") if p.isdigit() and open(f"/proc/{p}/cmdline", "rb").read().startswith(b"sh\x00-c\x00trap")][0]
found = set()
with open(f"/proc/{runner}/mem", "rb") as mem:
    for line in open(f"/proc/{runner}/maps").read().splitlines():
        if "[heap]" not in line: continue
        start, end = (int(x, 16) for x in line.split()[0].split("-"))
        mem.seek(start)
        found.update(x.decode() for x in re.findall(rb"(?<![0-9a-f])([0-9a-f]{32})(?![0-9a-f])", mem.read(end - start)))
print("candidates", len(found), flush=True)
for nonce in found:
    sys.stdout.write(nonce + "x0\n"); sys.stderr.write(nonce + "x0\n")
sys.stdout.flush(); sys.stderr.flush()
time.sleep(600)
`;

  for (const warm of [true, false])
    it(`a program that prints its runner's end marker does not outlive the run (${warm ? 'claimed warm container' : 'own container'})`, async () => {
      const extra = warm ? {} : { AGENT_SANDBOX_POOL_SIZE: '0' };
      const waiting = warm ? (await filled('python')).ids : [];
      const result = await runGuarded(['run', '--runtime', 'python', '--code', FORGER], { ...env, ...extra });
      const host = /^host (\w+)$/m.exec(result.stdout)?.[1];
      assert.ok(host, result.stdout + result.stderr);
      const id = (await docker.listContainers({ all: true, filters: { id: [host] } }))[0]?.Id;
      made.push(...(id ? [id] : []));
      // Its own container: not running any more right after the CLI returned. A claimed warm one: the
      // CLI ends with the output and hands the container to its filler, which removes it when it is
      // still running a moment (STOP_AFTER_RUN_MS) later; the program gains nothing in that moment.
      const ended = !id || (warm ? await until(() => gone(docker, id), 200) : await gone(docker, id));
      observe(
        AREA,
        `program reads the runner's nonce from /proc/<runner>/mem, prints the end marker, sleeps (${warm ? 'warm' : 'own'})`,
        'the CLI returns and the container is gone with the program',
        `${result.stdout.match(/candidates \d+/)?.[0] ?? 'no candidates'}; exit ${result.code}; container ${ended ? 'gone' : 'STILL RUNNING'}`,
        ended && !result.hung,
      );
      assert.equal(result.hung, false);
      assert.match(result.stdout, /candidates 1/, 'the program found the nonce (the attack ran)');
      assert.ok(ended, `container ${host} still runs after the CLI returned`);
      if (warm)
        assert.ok(
          waiting.some((one) => one.startsWith(host)),
          'it ran in a claimed warm container',
        );
    });

  it('a ready file naming a container with the labels and name of a warm one but a host folder mounted is not claimed', async () => {
    const { key, ids } = await filled('bash');
    const real = await docker.getContainer(ids[0]!).inspect();
    await emptied(key, ids);
    const hostDir = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-warm-host-'));
    chmodSync(hostDir, 0o777);
    const suffix = randomBytes(6).toString('hex');
    // Everything a claimant could read from labels and name is right; only the engine's settings differ.
    const decoy = await docker.createContainer({
      name: `agent-sandbox-warm-${suffix}`,
      Image: TEST_IMAGES.bash,
      User: real.Config.User,
      Labels: real.Config.Labels,
      Entrypoint: ['sh', '-c', ONE_SHOT_RUNNER, 'agent-sandbox-run', '600'],
      Cmd: [],
      OpenStdin: true,
      StdinOnce: false,
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      HostConfig: { Init: true, Binds: [`${hostDir}:/mnt/host`], AutoRemove: true },
    });
    made.push(decoy.id);
    await decoy.start();
    const until = Date.now() + 3_600_000;
    writeFileSync(
      join(state, 'warm', key, decoy.id),
      JSON.stringify({ until, name: suffix, createdAt: new Date().toISOString() }),
      { mode: 0o600 },
    );
    const result = await runGuarded(
      ['run', '--runtime', 'bash', '--code', 'echo pwned > /mnt/host/pwned 2>/dev/null; echo ran $(cat /etc/hostname)'],
      env,
    );
    const written = readdirSync(hostDir);
    const after = await docker
      .getContainer(decoy.id)
      .inspect()
      .catch(() => ({ Name: '(gone)', State: { Running: false } }));
    const untouched = after.Name === `/agent-sandbox-warm-${suffix}` && after.State.Running;
    observe(
      AREA,
      'ready file names a running container with a warm one’s name and labels plus a bind mount of a host folder',
      'not claimed: the run is cold, the host folder unchanged, the decoy not renamed',
      `host folder: ${written.length ? `WRITTEN ${written.join(',')}` : 'unchanged'}; decoy ${untouched ? 'untouched' : `now ${after.Name}`}; ${result.stdout.trim()}`,
      written.length === 0 && untouched,
    );
    rmSync(hostDir, { recursive: true, force: true });
    assert.equal(result.hung, false);
    assert.deepEqual(written, [], 'the program wrote the host folder through the decoy');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^ran \w+\n$/);
    assert.ok(!decoy.id.startsWith(result.stdout.trim().split(' ')[1]!), 'it ran in the decoy');
    assert.ok(untouched, `the decoy was renamed or ended: ${after.Name}`);
  });

  it('a filler request that files containers with a host folder mounted under another configuration’s key makes none', async () => {
    const { key, ids } = await filled('bash');
    const real = await docker.getContainer(ids[0]!).inspect();
    await emptied(key, ids);
    const hostDir = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-warm-host-'));
    chmodSync(hostDir, 0o777);
    const {
      [LABEL.warm]: _warm,
      [LABEL.warmUntil]: _until,
      [LABEL.created]: _created,
      ...labels
    } = real.Config.Labels ?? {};
    const request: FillRequest = {
      key,
      size: 2,
      waitSeconds: 600,
      createOptions: {
        Image: TEST_IMAGES.bash,
        User: real.Config.User,
        Labels: labels,
        HostConfig: { Init: true, Binds: [`${hostDir}:/mnt/host`] },
      },
    };
    const filler = spawn(process.execPath, [CLI, 'warm-fill'], {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    filler.stdin.end(JSON.stringify(request));
    await new Promise((resolve) => filler.once('close', resolve));
    const planted = readyFiles(state).map((ready) => ready.id);
    made.push(...planted);
    const result = await runGuarded(
      ['run', '--runtime', 'bash', '--code', 'echo pwned > /mnt/host/pwned 2>/dev/null; echo ran'],
      env,
    );
    const written = readdirSync(hostDir);
    observe(
      AREA,
      'warm-fill request on stdin: the bash configuration’s key, create options with a bind mount of a host folder',
      'no container made for it; the next run unaffected',
      `${planted.length} ready files planted; host folder ${written.length ? 'WRITTEN' : 'unchanged'}; ${result.stdout.trim()}`,
      planted.length === 0 && written.length === 0,
    );
    rmSync(hostDir, { recursive: true, force: true });
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(written, [], 'the program wrote the host folder');
    assert.deepEqual(planted, [], 'the filler made containers for a key that is not its request’s');
  });

  const HOSTILE_READY: [string, (file: string) => void][] = [
    ['a FIFO', (file) => execFileSync('mkfifo', [file])],
    ['a symlink to /dev/zero', (file) => symlinkSync('/dev/zero', file)],
    [
      'a 1 MB record',
      (file) =>
        writeFileSync(file, `{"until":${Date.now() + 3_600_000},"name":"${'a'.repeat(12)}"${' '.repeat(1 << 20)}}`),
    ],
    ['a truncated record', (file) => writeFileSync(file, '{"until":')],
    ['the JSON null', (file) => writeFileSync(file, 'null')],
  ];
  for (const [what, plant] of HOSTILE_READY)
    it(`a ready file that is ${what} neither hangs nor fails a run`, async () => {
      const { key } = await filled('bash');
      plant(join(state, 'warm', key, randomBytes(32).toString('hex')));
      const result = await runGuarded(['run', '--runtime', 'bash', '--code', 'echo fine'], env);
      observe(
        AREA,
        `a ready file that is ${what}`,
        'the run ends by itself with its own output',
        result.hung
          ? 'HUNG (killed by the test)'
          : `exit ${result.code}: ${result.stdout.trim()} ${result.stderr.trim().split('\n')[0] ?? ''}`,
        !result.hung && result.code === 0,
      );
      assert.equal(result.hung, false, 'the run hung on a ready file');
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'fine\n');
    });

  const FOLDERS: [string, (folder: string) => void][] = [
    ['writable by everyone', (folder) => chmodSync(folder, 0o777)],
    // Another user's (this test may run as root, which could read it anyway).
    ['owned by another user', (folder) => chownSync(folder, 54321, 54321)],
    [
      'a symlink to a folder of ours',
      (folder) => {
        const elsewhere = `${folder}-elsewhere`;
        renameSync(folder, elsewhere);
        symlinkSync(elsewhere, folder);
      },
    ],
  ];
  for (const [what, spoil] of FOLDERS)
    it(`a warm folder ${what} is not used: its ready files are not claimed`, async () => {
      const { ids } = await filled('bash');
      spoil(join(state, 'warm'));
      const result = await runGuarded(['run', '--runtime', 'bash', '--code', 'cat /etc/hostname'], env);
      const host = result.stdout.trim();
      const claimed = ids.some((id) => id.startsWith(host));
      observe(
        AREA,
        `the state folder’s warm/ ${what} (someone else could plant a ready file)`,
        'the shared pool is not used: the run is cold',
        `exit ${result.code}; ran in ${claimed ? 'A WARM CONTAINER' : 'its own container'}`,
        !claimed && result.code === 0,
      );
      // The cleanup finds the ready files through the link (or despite the owner): the containers go.
      assert.equal(result.code, 0, result.stderr);
      assert.ok(!claimed, 'a ready file in that folder was claimed');
    });

  it('a warm container whose runner ends as the request comes is not reported as a program that exited 0', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-warm-lib-'));
    const requests: FillRequest[] = [];
    const own = new DockerEngine({
      images: TEST_IMAGES,
      poolSize: 0,
      sharedPool: {
        size: 1,
        stateDir,
        launchFiller: async (request) => {
          requests.push(request);
          return true;
        },
      },
    });
    const spec = resolveSpec({ runtime: 'bash', mode: 'compute' });
    const outcomes: string[] = [];
    const tries = 3;
    try {
      const first = await own.open(spec, { ephemeral: true });
      await first.exec({ command: 'true' });
      await first.close();
      assert.ok(await until(() => requests.length === 1), 'the run asked for a filler');
      for (let attempt = 0; attempt < tries; attempt++) {
        assert.equal(await own.fillSharedPool(requests[0], stateDir), 1, 'one warm container made');
        const sandbox = await own.open(spec, { ephemeral: true });
        const name = (await docker.getContainer(sandbox.info.id).inspect()).Name;
        assert.match(name, /-by-\d+$/, 'the sandbox is a claimed warm container');
        // What the runner's watchdog does at the end of its wait: TERM, forwarded by the init process.
        await docker.getContainer(sandbox.info.id).kill({ signal: 'SIGTERM' });
        const outcome = await sandbox.exec({ command: 'echo ran' }).then(
          (result) => `exit ${result.exitCode}: ${JSON.stringify(result.stdout)}`,
          (error: Error) => `error: ${error.message}`,
        );
        outcomes.push(outcome);
        await sandbox.close();
      }
    } finally {
      await own.dispose();
      rmSync(stateDir, { recursive: true, force: true });
    }
    const wrong = outcomes.filter((outcome) => /^exit 0:/.test(outcome) && !/ran/.test(outcome));
    observe(
      AREA,
      `claimed warm container's runner ended (TERM) before it read the request, ${tries} tries`,
      'an error that says the sandbox ended before the program ran, never exit 0',
      outcomes.join(' | '),
      wrong.length === 0,
    );
    assert.deepEqual(wrong, [], outcomes.join('\n'));
  });

  it('a warm container has exactly the hardening of a process’s own container, apart from the runner’s wait', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-warm-lib-'));
    const requests: FillRequest[] = [];
    const own = new DockerEngine({
      images: TEST_IMAGES,
      poolSize: 0,
      sharedPool: {
        size: 1,
        stateDir,
        launchFiller: async (request) => {
          requests.push(request);
          return true;
        },
      },
    });
    const spec = resolveSpec({ runtime: 'bash', mode: 'compute' });
    try {
      const cold = await own.open(spec, { ephemeral: true });
      const mine = await docker.getContainer(cold.info.id).inspect();
      await cold.exec({ command: 'true' });
      await cold.close();
      assert.ok(await until(() => requests.length === 1), 'the run asked for a filler');
      assert.equal(await own.fillSharedPool(requests[0], stateDir), 1, 'one warm container made');
      const warm = readyFiles(stateDir)[0]!;
      made.push(warm.id);
      const shared = await docker.getContainer(warm.id).inspect();
      const settings = (info: Docker.ContainerInspectInfo) => {
        const {
          Labels: _labels,
          Hostname: _host,
          Entrypoint,
          StdinOnce: _once,
          ...config
        } = info.Config as Docker.ContainerInspectInfo['Config'] & { Entrypoint?: string[] };
        return { config, entrypoint: Entrypoint?.slice(0, -1), host: info.HostConfig };
      };
      const differences = (Object.keys(settings(mine).host) as (keyof Docker.HostConfig)[]).filter(
        (name) => JSON.stringify(mine.HostConfig[name]) !== JSON.stringify(shared.HostConfig[name]),
      );
      observe(
        AREA,
        'inspect a warm container and a process’s own one of the same configuration',
        'the same HostConfig (caps, seccomp, read-only root, user, limits, tmpfs) and Config, apart from the wait',
        differences.length ? `DIFFERENT: ${differences.join(', ')}` : 'identical apart from the wait and labels',
        differences.length === 0,
      );
      assert.deepEqual(settings(shared), settings(mine));
      assert.deepEqual(
        [
          mine.Config.Entrypoint?.at(-1),
          shared.Config.Entrypoint?.at(-1),
          mine.Config.StdinOnce,
          shared.Config.StdinOnce,
        ],
        // A process's own waits the pool's idle time (5 min) and five more (a backstop where the engine
        // keeps stdin open after its owner died, as Podman does); a shared one its AGENT_SANDBOX_WARM_SECONDS.
        ['600', '600', true, false],
      );
    } finally {
      await own.dispose();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('runs of many configurations at once leave no more than 8 warm containers for the user', async () => {
    const memories = ['301m', '302m', '303m', '304m', '305m', '306m'];
    const results = await Promise.all(
      memories.map((memory) =>
        runGuarded(['run', '--runtime', 'bash', '--memory', memory, '--code', 'true'], {
          ...env,
          AGENT_SANDBOX_POOL_SIZE: '2',
        }),
      ),
    );
    for (const result of results) assert.equal(result.code, 0, result.stderr);
    assert.ok(await until(() => fillerOf(state).length === 0), 'the fillers ended');
    const keys = new Set(readyFiles(state).map((ready) => ready.key));
    const waiting = (await docker.listContainers({ all: true, filters: { label: [LABEL.warm] } })).filter(
      (container) => keys.has(container.Labels[LABEL.warm] ?? '') && !container.Names.some((n) => /-by-\d+$/.test(n)),
    );
    made.push(...waiting.map((container) => container.Id));
    observe(
      AREA,
      `${memories.length} runs of different configurations at once, pool size 2 each (${memories.length * 2} wanted)`,
      'at most 8 warm containers wait',
      `${waiting.length} waiting, ${readyFiles(state).length} ready files`,
      waiting.length <= 8,
    );
    assert.ok(waiting.length <= 8, `${waiting.length} warm containers wait`);
    assert.ok(readyFiles(state).length <= 8);
  });

  it('runs of many configurations one after another leave at most 8 waiting and no folder per configuration ever used', async () => {
    const memories = Array.from({ length: 10 }, (_, index) => `${321 + index}m`);
    for (const memory of memories) {
      const result = await runGuarded(['run', '--runtime', 'bash', '--memory', memory, '--code', 'true'], {
        ...env,
        AGENT_SANDBOX_POOL_SIZE: '1',
      });
      assert.equal(result.code, 0, result.stderr);
      assert.ok(await until(() => fillerOf(state).length === 0), 'the filler ended');
    }
    const folders = readdirSync(join(state, 'warm')).filter((name) => /^[0-9a-f]{64}$/.test(name));
    const ready = readyFiles(state);
    const left = await docker.listContainers({ all: true, filters: { label: [LABEL.warm] } });
    const keys = new Set(folders);
    const waiting = left.filter((container) => keys.has(container.Labels[LABEL.warm] ?? ''));
    made.push(...waiting.map((container) => container.Id));
    observe(
      AREA,
      `${memories.length} configurations run one after another, pool size 1`,
      'at most 8 wait; folders only for configurations with one waiting (and the one just evicted)',
      `${waiting.length} waiting, ${ready.length} ready files, ${folders.length} configuration folders`,
      waiting.length <= 8 && folders.length <= 9,
    );
    assert.ok(waiting.length <= 8, `${waiting.length} waiting`);
    assert.ok(folders.length <= 9, `${folders.length} configuration folders for ${ready.length} ready files`);
  });

  it('claims racing each other and a filler that evicts their configuration get one container each, and only their output', async () => {
    const rounds = 3;
    const seen: string[] = [];
    const pool = { ...env, AGENT_SANDBOX_POOL_SIZE: '8' };
    const run = (memory: string, marker: string) =>
      runGuarded(
        ['run', '--runtime', 'bash', '--memory', memory, '--code', `echo ${marker} $(cat /etc/hostname)`],
        pool,
      );
    for (let round = 0; round < rounds; round++) {
      const first = await run('311m', 'fill');
      assert.equal(first.code, 0, first.stderr);
      assert.ok(await until(() => readyFiles(state).length === 8 && fillerOf(state).length === 0), 'eight wait');
      // Four claims of that configuration, and a run of another whose filler makes room by removing theirs.
      const results = await Promise.all([
        ...Array.from({ length: 4 }, (_, index) => run('311m', `claim-${round}-${index}`)),
        run('312m', `other-${round}`),
      ]);
      const hosts = results.map((result, index) => {
        const marker = index < 4 ? `claim-${round}-${index}` : `other-${round}`;
        assert.equal(result.hung, false, `${marker} hung`);
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, new RegExp(`^${marker} \\w+\\n$`), result.stdout);
        return result.stdout.trim().split(' ')[1]!;
      });
      assert.equal(new Set(hosts).size, hosts.length, `one container per run: ${hosts.join(', ')}`);
      seen.push(...hosts);
      assert.ok(await until(() => fillerOf(state).length === 0), 'the fillers ended');
      assert.ok(readyFiles(state).length <= 8, `${readyFiles(state).length} ready files`);
    }
    observe(
      AREA,
      `${rounds} rounds: 4 claims of a configuration with 8 waiting, racing a run of another whose filler evicts them`,
      'every run exits 0 with its own output, in a container of its own; at most 8 wait',
      `${seen.length} runs in ${new Set(seen).size} containers`,
      new Set(seen).size === seen.length,
    );
  });

  it('a tampered V8 code cache does not change what the CLI does', () => {
    const cache = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-cache-'));
    const help = (extra: NodeJS.ProcessEnv = {}) =>
      execFileSync(process.execPath, [CLI, '--help'], { env: { ...process.env, XDG_CACHE_HOME: cache, ...extra } });
    try {
      const clean = help({ AGENT_SANDBOX_CODE_CACHE: '0' }).toString();
      help();
      const dir = join(cache, 'agent-sandbox', 'code-cache');
      const files = readdirSync(dir).filter((name) => name.endsWith('-other.bin'));
      assert.equal(files.length, 1, `the cache was written: ${readdirSync(dir).join(', ')}`);
      const file = join(dir, files[0]!);
      const bytes = readFileSync(file);
      // Every byte past V8's header flipped: data that passes no check V8 makes of its contents.
      for (let index = 32; index < bytes.length; index++) bytes[index] = bytes[index]! ^ 0xff;
      writeFileSync(file, bytes);
      const tampered = help().toString();
      // The folder made writable by others: not used at all.
      chmodSync(dir, 0o777);
      writeFileSync(file, randomBytes(bytes.length));
      const open = help().toString();
      observe(
        AREA,
        'code cache file with its body flipped; then the cache folder made world-writable with random bytes in it',
        'the CLI prints the same help each time',
        `${tampered === clean ? 'same' : 'DIFFERENT'}; ${open === clean ? 'same' : 'DIFFERENT'}`,
        tampered === clean && open === clean,
      );
      assert.equal(tampered, clean);
      assert.equal(open, clean);
      assert.ok(existsSync(file));
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
