import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { runCompute } from '../../src/core/sessions/compute';
import { removeOrphans } from '../../src/core/sessions/orphans';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { LABEL } from '../../src/engines/docker/labels';
import { TEST_IMAGES, requireEngine } from './harness';

const run = promisify(execFile);

/** Containers of the warm pool made by this process (or by `pid`). */
async function pooledOf(docker: Docker, pid = process.pid): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`${LABEL.pool}=1`, `${LABEL.ownerPid}=${pid}`] } });
}

/**
 * The warm containers of this process that wait to be taken. A used one stopped at the end of its run
 * and the engine removes it (AutoRemove) a moment later: Podman's cleanup runs in a process of its own,
 * so such a container may still be listed, stopped, once the pool has settled.
 */
async function waitingOf(docker: Docker): Promise<Docker.ContainerInfo[]> {
  return (await pooledOf(docker)).filter((container) => container.State === 'running');
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the warm pool for compute mode against a real engine', function () {
  const engines: DockerEngine[] = [];
  const spec = resolveSpec({ runtime: 'python' });
  const pooled = (size: number, idleMs?: number) => {
    const engine = new DockerEngine({ images: TEST_IMAGES, poolSize: size, poolIdleMs: idleMs });
    engines.push(engine);
    return engine;
  };

  before(async function () {
    await requireEngine(this);
  });

  afterEach(async () => {
    await Promise.all(engines.splice(0).map((engine) => engine.dispose()));
  });

  it('gives every run a fresh container: a file one run writes is absent in the next', async () => {
    const engine = pooled(2);
    const code =
      'import os\nprint(os.path.exists("left.txt"), open("/etc/hostname").read().strip())\nopen("left.txt", "w").write("x")';
    const hosts = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const result = await runCompute(engine, spec, { code });
      assert.equal(result.outcome, 'ok', JSON.stringify(result));
      const [exists, host] = result.stdout.trim().split(' ');
      assert.equal(exists, 'False', `run ${i} saw a file an earlier run wrote`);
      hosts.add(host!);
      await engine.computeRuns.pool.settled();
    }
    assert.equal(hosts.size, 4, 'each run had a container of its own');
    assert.ok(engine.computeRuns.pool.snapshot().hits >= 3, JSON.stringify(engine.computeRuns.pool.snapshot()));
  });

  it('refills after each run, up to its size, and keeps the sandbox hardened', async () => {
    const engine = pooled(2);
    const first = await runCompute(engine, resolveSpec({ runtime: 'bash' }), {
      code: 'id -u; grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; ls /sys/class/net',
    });
    await engine.computeRuns.pool.settled();
    const firstWarm = await waitingOf(engine.docker);
    assert.equal(firstWarm.length, 2, 'two warm containers wait');
    assert.equal(engine.computeRuns.pool.snapshot().ready, 2);
    const second = await runCompute(engine, resolveSpec({ runtime: 'bash' }), {
      code: 'id -u; grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; ls /sys/class/net',
    });
    assert.equal(engine.computeRuns.pool.snapshot().hits, 1, 'the second run took a warm container');
    for (const result of [first, second])
      assert.deepEqual(
        result.stdout
          .trim()
          .split('\n')
          .map((line) => line.replace(/\s+/g, ' ')),
        ['1000', 'CapEff: 0000000000000000', 'NoNewPrivs: 1', 'lo'],
      );
    await engine.computeRuns.pool.settled();
    const warm = await waitingOf(engine.docker);
    assert.equal(warm.length, 2, 'refilled to two again');
    assert.equal(warm.filter((container) => firstWarm.some((first) => first.Id === container.Id)).length, 1);
    // The one the second run took is gone once the engine has removed it.
    await until('the used warm container is removed', async () => (await pooledOf(engine.docker)).length === 2);
  });

  it('keeps nothing warm with size 0, and runs all the same', async () => {
    const engine = pooled(0);
    const result = await runCompute(engine, spec, {
      code: 'print(6 * 7)',
      files: [{ path: 'in.txt', content: 'data' }],
      stdin: 'x',
    });
    assert.equal(result.stdout, '42\n');
    await engine.computeRuns.pool.settled();
    assert.deepEqual(await pooledOf(engine.docker), []);
    assert.deepEqual(engine.computeRuns.pool.snapshot(), { ready: 0, filling: 0, keys: 0, hits: 0, misses: 0 });
  });

  it('drains on dispose and after a quiet spell, leaving no container', async () => {
    const engine = pooled(2);
    await runCompute(engine, spec, { code: 'print(1)' });
    await engine.computeRuns.pool.settled();
    assert.equal((await waitingOf(engine.docker)).length, 2);
    await engine.dispose();
    assert.deepEqual(await pooledOf(engine.docker), [], 'dispose removed the warm containers');
    // A used one that ran to its end stopped by itself, and the engine removes it (AutoRemove; Podman
    // takes a moment longer than Docker).
    await until(
      'the used ones are gone',
      async () =>
        (
          await engine
            .list({ includeCompute: true })
            .then((all) => all.filter((session) => session.owner?.pid === process.pid))
        ).length === 0,
    );

    const idle = pooled(1, 300);
    await runCompute(idle, spec, { code: 'print(1)' });
    await until(
      'the idle pool drained',
      async () => (await pooledOf(idle.docker)).length === 0 && idle.computeRuns.pool.snapshot().ready === 0,
    );
  });

  it('gives $HOME and /workspace to the sandbox user as capped tmpfs mounts, with nothing placed before start', async () => {
    const engine = pooled(0);
    const bash = resolveSpec({ runtime: 'bash', limits: { diskBytes: '64m', inodes: 5000 } });
    const result = await runCompute(engine, bash, {
      code: 'stat -c "%u %a" /workspace $HOME; stat -f -c "%T %b %S %c" /workspace $HOME /tmp',
      files: [{ path: 'in.txt', content: 'data' }],
    });
    const [workspace, home, ...places] = result.stdout.trim().split('\n');
    assert.deepEqual([workspace, home], ['1000 755', '1000 755'], result.stdout + result.stderr);
    // Podman refuses nr_inodes: there the count of files is not capped, and the engine says so.
    const inodesCapped = !(await engine.info()).differences?.some((difference) => difference.includes('limits.inodes'));
    for (const place of places) {
      const [type, blocks, blockSize, files] = place.split(' ');
      assert.deepEqual([type, Number(blocks) * Number(blockSize)], ['tmpfs', 64 * 1024 * 1024], place);
      if (inodesCapped) assert.equal(Number(files), 5000, place);
    }
  });

  it("ends with its owner process: a dead process's warm containers remove themselves, and gc leaves a live owner's pool alone", async () => {
    const live = pooled(1);
    await runCompute(live, spec, { code: 'print(1)' });
    await live.computeRuns.pool.settled();

    // Another process fills a pool and exits without cleaning up, as a crashed extension host would.
    const script = [
      "const { DockerEngine } = require('./src/engines/docker/dockerEngine');",
      "const { runCompute } = require('./src/core/sessions/compute');",
      "const { resolveSpec } = require('./src/core/spec/resolveSpec');",
      `const engine = new DockerEngine({ images: ${JSON.stringify(TEST_IMAGES)}, poolSize: 2 });`,
      "runCompute(engine, resolveSpec({ runtime: 'python' }), { code: 'print(1)' }).then(() => engine.computeRuns.pool.settled()).then(() => { console.log(process.pid); process.exit(0); });",
    ].join('\n');
    const child = await run(process.execPath, ['--import', 'tsx', '-e', script], { cwd: process.cwd() });
    const deadPid = Number(child.stdout.trim());
    assert.ok(deadPid > 0, child.stdout + child.stderr);

    // A warm container's runner waits on the stream its owner held: with the owner gone it ends, and
    // the engine removes it (AutoRemove), with no gc and no window left to do it.
    await until(
      'the dead process left no warm container',
      async () => (await pooledOf(live.docker, deadPid)).length === 0,
      60_000,
    );

    // Every session counts as leased and its folder as present, so that only compute sandboxes are judged (other runs may share the engine).
    const removed = await removeOrphans(live, {
      now: Date.now(),
      graceMs: 60_000,
      lease: (folder) => ({ folder, pid: process.pid, seen: Date.now(), released: false, keep: true }),
      folderExists: () => true,
    });
    const livePool = new Set((await pooledOf(live.docker)).map((container) => container.Id));
    assert.equal(livePool.size, 1, 'the live pool is kept');
    assert.ok(
      removed.every((orphan) => !livePool.has(orphan.session.id)),
      'gc took nothing of a live owner',
    );
  });
});
