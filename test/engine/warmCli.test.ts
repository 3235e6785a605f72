// The warm containers one `agent-sandbox run` leaves for the next (sharedPool.ts): claimed by exactly
// one process each, used once, refilled in the background, gone by themselves when nobody claims them,
// and removed by gc when their claimant died.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, runCliText } from './cliRunner';
import { TEST_IMAGES, fillerRunning, pollUntil as until, readyIds, requireEngine, testEngine } from './harness';
import { LABEL } from '../../src/engines/docker/labels';

describe('warm containers shared between CLI processes', function () {
  this.timeout(180_000);
  const engine = testEngine();
  let state: string;
  let env: NodeJS.ProcessEnv;

  before(async function () {
    await requireEngine(this);
  });
  beforeEach(() => {
    state = mkdtempSync(join(tmpdir(), 'agent-sandbox-warm-'));
    env = { AGENT_SANDBOX_STATE_DIR: state, AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash };
  });
  afterEach(async () => {
    await until(() => !fillerRunning());
    // What these cases left waiting goes now rather than at the end of its wait.
    const docker = engine.docker;
    for (const id of readyIds(state))
      await docker
        .getContainer(id)
        .remove({ force: true })
        .catch(() => undefined);
  });
  after(() => engine.dispose());

  const run = (code: string, extra: NodeJS.ProcessEnv = {}) =>
    runCliText(['run', '--runtime', 'bash', '--code', code], { env: { ...env, ...extra } });

  it('a run leaves warm containers; the next run claims one, uses it once, and the pool is topped up again', async () => {
    const first = await run('echo first');
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, 'first\n');
    assert.ok(await until(() => readyIds(state).length === 2), 'the filler made two warm containers');
    const waiting = readyIds(state);
    for (const id of waiting) {
      const inspected = await engine.docker.getContainer(id).inspect();
      assert.equal(inspected.State.Running, true);
      assert.equal(inspected.Config.Labels[LABEL.warm]?.length, 64);
      // The same hardening as any compute sandbox: no network, read-only root, no capabilities.
      // Docker keeps NetworkDisabled; Podman ignores it, and gets NetworkMode none instead.
      assert.ok(
        (inspected.Config as { NetworkDisabled?: boolean }).NetworkDisabled === true ||
          inspected.HostConfig.NetworkMode === 'none',
        'no network',
      );
      assert.equal(inspected.HostConfig.ReadonlyRootfs, true);
      // Docker says ALL; Podman lists each capability it dropped (every default one).
      const dropped = inspected.HostConfig.CapDrop ?? [];
      assert.ok(
        dropped.includes('ALL') ||
          ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL', 'MKNOD', 'NET_RAW', 'SETGID', 'SETUID', 'SYS_CHROOT'].every(
            (capability) => dropped.includes(capability),
          ),
        `capabilities dropped: ${dropped.join(', ')}`,
      );
      assert.deepEqual(inspected.HostConfig.CapAdd ?? [], []);
    }
    const second = await run('cat /etc/hostname');
    assert.equal(second.code, 0, second.stderr);
    const host = second.stdout.trim();
    const used = waiting.find((id) => id.startsWith(host));
    assert.ok(used, `the second run ran in one of the warm containers (${host} in ${waiting.join(', ')})`);
    // Used once: the container is gone, and a fresh one took its place.
    assert.ok(
      await until(async () =>
        engine.docker
          .getContainer(used)
          .inspect()
          .then(
            () => false,
            () => true,
          ),
      ),
      'the used container is gone',
    );
    assert.ok(await until(() => readyIds(state).length === 2 && !readyIds(state).includes(used)), 'topped up');
  });

  it('runs started together each get a container of their own, and only their own output', async () => {
    const first = await run('true', { AGENT_SANDBOX_POOL_SIZE: '4' });
    assert.equal(first.code, 0, first.stderr);
    assert.ok(await until(() => readyIds(state).length === 4), 'the filler made four warm containers');
    const waiting = new Set(readyIds(state));
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        run(`echo run-${index} $(cat /etc/hostname); ls /tmp/.agent-sandbox`, { AGENT_SANDBOX_POOL_SIZE: '4' }),
      ),
    );
    const hosts = runs.map((result, index) => {
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.trim().split('\n');
      const [marker, host] = lines[0]!.split(' ');
      assert.equal(marker, `run-${index}`, result.stdout);
      // The runner's files are this request's alone: its command and nothing of another run's.
      assert.deepEqual(lines.slice(1), ['run'], result.stdout);
      return host!;
    });
    assert.equal(new Set(hosts).size, 6, `six containers for six runs: ${hosts.join(', ')}`);
    const claimed = hosts.filter((host) => [...waiting].some((id) => id.startsWith(host)));
    assert.ok(claimed.length >= 1 && claimed.length <= 4, `between one and four runs were warm (${claimed.length})`);
  });

  it('a warm container nobody claims ends by itself when its wait is over', async () => {
    const first = await run('true', { AGENT_SANDBOX_WARM_SECONDS: '10' });
    assert.equal(first.code, 0, first.stderr);
    assert.ok(await until(() => readyIds(state).length === 2), 'the filler made two warm containers');
    const waiting = readyIds(state);
    assert.ok(
      await until(async () => {
        const left = await engine.docker.listContainers({ all: true, filters: { id: waiting } });
        return left.length === 0;
      }, 900),
      'both containers ended and were removed by the engine',
    );
    // Their ready files are not claimed afterwards: the next run is cold, and succeeds.
    const next = await run('echo after', { AGENT_SANDBOX_WARM_SECONDS: '10' });
    assert.equal(next.code, 0, next.stderr);
    assert.equal(next.stdout, 'after\n');
  });

  it('gc removes a claimed container whose claimant was killed mid-run', async () => {
    const first = await run('true');
    assert.equal(first.code, 0, first.stderr);
    assert.ok(await until(() => readyIds(state).length === 2), 'the filler made two warm containers');
    const waiting = readyIds(state);
    const child = spawn(process.execPath, [CLI, 'run', '--runtime', 'bash', '--code', 'sleep 300'], {
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    const pid = child.pid!;
    let claimed: string | undefined;
    assert.ok(
      await until(async () => {
        const mine = await engine.list({ includeCompute: true });
        claimed = mine.find((session) => session.owner?.pid === pid)?.id;
        if (!claimed) return false;
        const top = await engine.docker.getContainer(claimed).top();
        return (top.Processes ?? []).some((row: string[]) => row.some((cell) => /\bsleep 300\b/.test(cell)));
      }),
      'the run claimed a warm container and its program runs',
    );
    assert.ok(waiting.includes(claimed!), 'it was one of the warm containers');
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const gc = await runCliText(['gc', '--folder', mkdtempSync(join(tmpdir(), 'agent-sandbox-gc-'))], { env });
    assert.equal(gc.code, 0, gc.stderr);
    assert.match(gc.stdout, new RegExp(`process ${pid}, which is gone`));
    const left = await engine.list({ includeCompute: true });
    assert.ok(!left.some((session) => session.id === claimed), 'the claimed container is gone');
    // The one still waiting is no orphan: gc leaves it for the next run.
    assert.ok(
      left.some((session) => waiting.includes(session.id) && session.id !== claimed),
      'the other warm container still waits',
    );
  });

  it('AGENT_SANDBOX_POOL_SIZE=0 leaves nothing behind', async () => {
    const result = await run('echo cold', { AGENT_SANDBOX_POOL_SIZE: '0' });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'cold\n');
    // A filler, had one started, would have written its ready files before it ended.
    assert.ok(await until(() => !fillerRunning()));
    assert.deepEqual(readyIds(state), []);
  });
});
