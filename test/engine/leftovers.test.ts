// A CLI process killed in the middle of a call leaves its compute sandbox running; `agent-sandbox gc`
// run in any folder finds it (its owner process is gone) and says what it removed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, runCliText } from './cliRunner';
import { TEST_IMAGES, requireEngine, testEngine } from './harness';

describe('leftovers of a killed process', function () {
  this.timeout(120_000);
  before(async function () {
    await requireEngine(this);
  });

  it('gc in an unrelated folder removes the compute sandbox of a CLI killed mid-call, and says why', async () => {
    const engine = testEngine();
    try {
      const child = spawn(process.execPath, [CLI, 'run', '--runtime', 'bash', '--code', 'sleep 300'], {
        env: { ...process.env, AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash, AGENT_SANDBOX_POOL_SIZE: '0' },
        stdio: 'ignore',
      });
      const pid = child.pid!;
      let mine: string | undefined;
      for (let attempt = 0; attempt < 300 && !mine; attempt++) {
        mine = (await engine.list({ includeCompute: true })).find(
          (session) => session.mode === 'compute' && session.owner?.pid === pid,
        )?.id;
        if (!mine) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(mine, 'the CLI started its compute sandbox');
      // Killed before its request reached the runner, the CLI leaves nothing: the runner reads the
      // closed stdin, ends, and the engine removes the container. Only a program already running is left.
      let running = false;
      for (let attempt = 0; attempt < 300 && !running; attempt++) {
        const top = await engine.docker.getContainer(mine).top();
        running = (top.Processes ?? []).some((row: string[]) => row.some((cell) => /\bsleep 300\b/.test(cell)));
        if (!running) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(running, 'the program runs in the compute sandbox');
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const elsewhere = mkdtempSync(join(tmpdir(), 'agent-sandbox-gc-'));
      const gc = await runCliText(['gc', '--folder', elsewhere]);
      assert.equal(gc.code, 0, gc.stderr);
      assert.match(gc.stdout, new RegExp(`process ${pid}, which is gone`));
      assert.ok(
        !(await engine.list({ includeCompute: true })).some((session) => session.id === mine),
        'the container is gone',
      );
    } finally {
      await engine.dispose();
    }
  });
});
