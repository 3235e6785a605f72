// Faults under the sandbox: containers killed from outside, services rebuilt, many open/close
// cycles with random kills, and (when this run owns the engine) the engine stopped mid-call.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { LABEL } from '../../src/engines/docker/labels';
import { RUN_STARTED, requireEngine, testEngine } from '../engine/harness';
import { observe } from './report';
import { firstLine, toolbox } from './toolbox';
import { withSeed } from '../seed';

const run = promisify(execFile);

async function oursSince(since: string): Promise<Docker.ContainerInfo[]> {
  const all = await new Docker(testEngine().endpoint.options).listContainers({
    all: true,
    filters: { label: [`${LABEL.managed}=1`] },
  });
  return all.filter((container) => (container.Labels[LABEL.created] ?? '') >= since);
}

describe('faults', function () {
  before(async function () {
    await requireEngine(this);
  });

  it('a session container killed from outside is reported dead with the reason, never replaced silently', async () => {
    const box = toolbox();
    try {
      await box.call('sandbox_open', { session: 'victim', runtime: 'bash' });
      await box.call('sandbox_exec', { sandbox_id: 'victim', command: 'echo data > keep.txt' });
      const id = (await box.service.list()).find((session) => session.name === 'victim')!.id;
      await box.engine.docker.getContainer(id).kill({ signal: 'SIGKILL' });
      const next = await box.call('sandbox_exec', { sandbox_id: 'victim', command: 'cat keep.txt' });
      assert.match(next.text, /no longer running: it was killed \(SIGKILL\) from outside/);
      const again = await box.call('sandbox_fs_read', { sandbox_id: 'victim', path: 'keep.txt' });
      assert.match(again.text, /no longer running/);
      observe(
        'fault',
        'docker kill of a session container',
        'the next calls say it died and why; no silent fresh session',
        firstLine(next.text),
      );
    } finally {
      await box.dispose();
    }
  });

  it('the services disposed and rebuilt (an extension host restart) find the same session and its files', async () => {
    const first = toolbox();
    await first.call('sandbox_exec', { command: 'echo survives > /workspace/state.txt' });
    const id = (await first.service.list()).find((session) => session.name === 'default')!.id;
    await first.engine.dispose();
    const second = toolbox({ folder: first.folder });
    try {
      const read = await second.call('sandbox_fs_read', { path: 'state.txt' });
      assert.match(read.text, /survives/);
      assert.equal((await second.service.list()).find((session) => session.name === 'default')!.id, id);
      observe(
        'fault',
        'every service disposed and rebuilt (extension host restart)',
        'the same session and its files are found again',
        'same container, state.txt intact',
      );
    } finally {
      await second.dispose();
    }
  });

  it('100 open/close cycles with random kills end with nothing of ours left', () =>
    withSeed(async (seeded) => {
      const since = new Date().toISOString();
      const box = toolbox({ settings: { sessions: { maxSessions: 10 } } });
      const docker = box.engine.docker;
      let killed = 0;
      let reported = 0;
      try {
        for (let cycle = 0; cycle < 100; cycle++) {
          const name = `cycle-${cycle % 7}`;
          const opened = await box.call('sandbox_open', { session: name, runtime: 'bash' });
          if (!opened.ok) {
            // A killed session is reported until it is closed: close it and go on, as an agent would.
            assert.match(opened.text, /no longer running/);
            reported++;
            await box.call('sandbox_close', { sandbox_id: name });
            continue;
          }
          if (seeded.random() < 0.3) {
            const id = (await box.service.list()).find((session) => session.name === name)?.id;
            if (id) {
              await docker
                .getContainer(id)
                .kill({ signal: 'SIGKILL' })
                .catch(() => undefined);
              killed++;
            }
          }
          if (seeded.random() < 0.5) await box.call('sandbox_close', { sandbox_id: name });
        }
        await box.service.closeAll();
        const left = await oursSince(since);
        assert.deepEqual(
          left.map((container) => container.Names[0]),
          [],
        );
        const volumes = (await docker.listVolumes({ filters: { dangling: ['true'] } })).Volumes ?? [];
        assert.equal(volumes.filter((volume) => volume.Labels?.[LABEL.managed] === '1').length, 0);
        observe(
          'fault',
          '100 open/close cycles, 30% killed from outside at random',
          'zero containers and volumes of ours left',
          `${killed} killed, ${reported} reported dead on reuse, 0 containers left (${seeded.hint})`,
        );
      } finally {
        await box.dispose();
      }
    }));

  it('the engine stopped during a call and started again', async function () {
    if (process.env.AGENT_SANDBOX_HOSTILE_ENGINE_RESTART !== '1') {
      // Stopping the engine would break anyone else's work on it: only a run that owns the engine does it.
      observe(
        'fault',
        'engine stopped during an exec, then started',
        'fail fast with engine-down; afterwards the session reported lost',
        'set AGENT_SANDBOX_HOSTILE_ENGINE_RESTART=1 to run it (npm test does when it started the engine)',
        'not run',
      );
      this.skip();
    }
    const box = toolbox();
    const provision = resolve(__dirname, '../../scripts/provision-engine.sh');
    try {
      await box.call('sandbox_open', { session: 'through-restart', runtime: 'bash' });
      const running = box.call('sandbox_exec', { sandbox_id: 'through-restart', command: 'sleep 60; echo done' });
      await new Promise((done) => setTimeout(done, 1000));
      const stopping = run('bash', [provision, '--stop']);
      const during = await running;
      await stopping;
      // It ended with the engine, not with its 60 s sleep.
      assert.doesNotMatch(during.text, /^done$/m);
      assert.doesNotMatch(firstLine(during.text), /exit code 0/);
      const down = await box.call('sandbox_exec', { sandbox_id: 'through-restart', command: 'true' });
      assert.match(down.text, /Docker Engine|engine/i);
      await run('bash', [provision], { timeout: 180_000 });
      const after = await box.call('sandbox_exec', { sandbox_id: 'through-restart', command: 'true' });
      assert.match(after.text, /no longer running|no longer exists|No sandbox/);
      observe(
        'fault',
        'engine stopped during a 60 s exec, then started again',
        'the call fails fast; calls say the engine is down; afterwards the session is reported lost',
        `call ended before its sleep: ${firstLine(during.text)}; while down: ${firstLine(down.text)}; after: ${firstLine(after.text)}`,
      );
    } finally {
      await box.dispose();
    }
  });

  after(async () => {
    const left = await oursSince(RUN_STARTED).catch(() => []);
    assert.equal(left.length, 0, `left: ${left.map((container) => container.Names[0]).join(', ')}`);
  });
});
