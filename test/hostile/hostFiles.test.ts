// The host's own reads and writes of a workspace folder that a read-write sandbox changes under it
// (issue 14, items 1 and 2). A real container swaps a path component between two kinds of file as
// fast as it can (renameat2 RENAME_EXCHANGE) while the tools read and write through that path on the
// host. Every case asserts on the host: the canary folder outside the workspace keeps its bytes,
// modes and owners, nothing lands beside the workspace, and no secret or oversized file is staged.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { openSession } from '../engine/namedSession';
import { VirtualEngine } from '../../src/engines/virtual/virtualEngine';
import { requireEngine } from '../engine/harness';
import { chooseSeed, seededRandom } from '../seed';
import { hostSnapshot, snapshotDiff } from './hostSnapshot';
import { observe } from './report';
import { firstLine, toolbox, type ToolAnswer, type ToolPath } from './toolbox';

const AREA_NAME = 'host files';
const RACE_TRIES = Number(process.env.AGENT_SANDBOX_RACE_TRIES ?? 200);
const SEED = chooseSeed();
const SECRET = 'canary secret: the host file no sandbox may read\n';
const STORE_MAX = 1024 * 1024;
/** Far longer than any call takes; only a call blocked for good (a FIFO opened for reading) reaches it. */
const HANG_MS = 60_000;

/** Swaps two names atomically in a loop until killed, then prints how many swaps it made. */
const SWAPPER = `import ctypes, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
count = 0
def stop(*_):
    open('/tmp/swap.count', 'w').write(str(count))
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
while True:
    for _ in range(1000):
        libc.renameat2(-100, a, -100, b, 2)
    count += 1000
`;

const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

// Both ways a client reaches the host code: the tools in this process, and the CLI's tool command
// (a process per call, so fewer tries: the race is the same code).
for (const via of ['tools', 'cli'] as ToolPath[])
  describe(`host files: the host reads and writes a folder that a read-write sandbox races (${via})`, function () {
    const AREA = `${AREA_NAME} (${via})`;
    const TRIES = via === 'cli' ? Math.min(RACE_TRIES, 25) : RACE_TRIES;
    this.timeout(900_000);
    let box: ReturnType<typeof toolbox>;
    let root: string;
    let folder: string;
    let canary: string;
    let canaryBefore: string;
    const random = seededRandom(SEED);

    before(async function () {
      await requireEngine(this);
      process.stdout.write(
        `      host files: seed ${SEED} (AGENT_SANDBOX_SEED=${SEED} repeats it), ${TRIES} tries per race\n`,
      );
      root = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostfiles-'));
      folder = join(root, 'workspace');
      canary = join(root, 'canary');
      mkdirSync(folder);
      // The sandbox user is not the host user here: it needs to write the folder.
      chmodSync(folder, 0o777);
      mkdirSync(join(canary, 'notes'), { recursive: true });
      writeFileSync(join(canary, 'secret.txt'), SECRET, { mode: 0o600 });
      writeFileSync(join(canary, 'notes', 'keep.txt'), 'keep\n');
      canaryBefore = hostSnapshot(canary);
      box = toolbox({ folder, via, settings: { workspaceAccess: 'rw' }, storeMaxBytes: STORE_MAX });
      const opened = await box.call('sandbox_open', { session: 'racer', runtime: 'python', workspace_access: 'rw' });
      assert.ok(opened.ok, opened.text);
      const setup = await exec(
        [
          `cat > /tmp/swap.py <<'EOF'\n${SWAPPER}EOF`,
          'cd /workspace',
          'mkdir d && printf decoy > d/secret.txt',
          `ln -s ${canary} d.alt`,
          'printf small > f && mkfifo f.alt',
          'printf small > big && truncate -s 4M big.alt',
          "printf 'payload from the sandbox\\n' > payload.txt",
          'echo ready',
        ].join('\n'),
      );
      assert.match(setup.text, /ready/, setup.text);
    });

    after(async () => {
      await box?.dispose();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    async function exec(command: string): Promise<ToolAnswer> {
      return box.call('sandbox_exec', { sandbox_id: 'racer', command });
    }

    /** How each swapped name looks when it is the folder's own, harmless file (a shell test). */
    const HARMLESS: Record<string, string> = {
      d: '[ -d d ] && [ ! -L d ]',
      f: '[ -f f ]',
      big: '[ "$(stat -c %s big)" -lt 100 ]',
    };

    /**
     * Starts swapping /workspace/a and /workspace/b in the sandbox; the returned function stops it, puts
     * the harmless file back under `a` for the next case, and tells how many swaps were made.
     */
    async function swapping(a: string, b: string): Promise<() => Promise<string>> {
      const started = await exec(
        `cd /workspace && rm -f /tmp/swap.count && (nohup python3 /tmp/swap.py ${a} ${b} >/tmp/swap.log 2>&1 & echo "pid=$!")`,
      );
      const pid = /pid=(\d+)/.exec(started.text)?.[1];
      assert.ok(pid, started.text);
      return async () => {
        const swapBack = `python3 -c "import ctypes; ctypes.CDLL(None).renameat2(-100, b'${a}', -100, b'${b}', 2)"`;
        const stopped = await exec(
          `cd /workspace; kill ${pid}; for i in $(seq 100); do [ -s /tmp/swap.count ] && break; sleep 0.1; done; ${HARMLESS[a]} || ${swapBack}; ${HARMLESS[a]} && echo "swaps=$(cat /tmp/swap.count)"`,
        );
        return /swaps=(\d+)/.exec(stopped.text)?.[1] ?? `unknown (${firstLine(stopped.text)})`;
      };
    }

    /** The canary outside the folder and the folder's parent, compared with how they were. */
    function hostUntouched(): { ok: boolean; detail: string } {
      const now = hostSnapshot(canary);
      const beside = readdirSync(root).sort();
      const ok = now === canaryBefore && beside.join(',') === 'canary,workspace';
      return {
        ok,
        detail: ok
          ? "canary folder and the folder's parent unchanged"
          : `host changed outside the folder: ${snapshotDiff(canaryBefore, now)} beside: ${beside.join(',')}`,
      };
    }

    function tally(answers: ToolAnswer[]): string {
      const counts = new Map<string, number>();
      for (const answer of answers) {
        const key = answer.ok
          ? 'done'
          : firstLine(answer.text)
              .replace(/"[^"]*"/g, '"…"')
              .slice(0, 70);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      return [...counts].map(([key, count]) => `${count}× ${key}`).join('; ');
    }

    it('publish with save_to_workspace while d swaps between a folder and a link to a host folder outside', async () => {
      // Unraced first: the same call works while d is a plain folder.
      const calm = await box.call('sandbox_publish_file', {
        sandbox_id: 'racer',
        path: 'payload.txt',
        save_to_workspace: 'd/calm.txt',
      });
      assert.ok(calm.ok && existsSync(join(folder, 'd', 'calm.txt')), calm.text);
      const stop = await swapping('d', 'd.alt');
      const answers: ToolAnswer[] = [];
      let swaps = 'unknown';
      try {
        for (let i = 0; i < TRIES; i++) {
          answers.push(
            await box.call('sandbox_publish_file', {
              sandbox_id: 'racer',
              path: 'payload.txt',
              save_to_workspace: 'd/out.txt',
              overwrite: random() < 0.5,
            }),
          );
        }
      } finally {
        swaps = await stop();
      }
      const host = hostUntouched();
      observe(
        AREA,
        `publish save_to_workspace d/out.txt × ${TRIES} while the sandbox swaps d ↔ link to a host folder (${swaps} swaps, seed ${SEED})`,
        'nothing written outside the folder; the canary folder unchanged',
        `${host.detail}; ${tally(answers)}`,
        host.ok,
      );
      assert.ok(host.ok, host.detail);
    });

    it('stage from workspace_path while d swaps between a folder and a link to a host folder holding a secret', async () => {
      const calm = await box.call('sandbox_stage_file', {
        sandbox_id: 'racer',
        workspace_path: 'd/secret.txt',
        path: 'staged/secret.txt',
      });
      assert.ok(calm.ok && calm.text.includes(sha('decoy')), calm.text);
      const stop = await swapping('d', 'd.alt');
      const answers: ToolAnswer[] = [];
      let swaps = 'unknown';
      try {
        for (let i = 0; i < TRIES; i++)
          answers.push(
            await box.call('sandbox_stage_file', {
              sandbox_id: 'racer',
              workspace_path: 'd/secret.txt',
              path: 'staged/secret.txt',
            }),
          );
      } finally {
        swaps = await stop();
      }
      const leaked = answers.filter((answer) => answer.ok && answer.text.includes(sha(SECRET))).length;
      const host = hostUntouched();
      const contained = leaked === 0 && host.ok;
      observe(
        AREA,
        `stage workspace_path d/secret.txt × ${TRIES} while the sandbox swaps d ↔ link to a host folder with a secret (${swaps} swaps, seed ${SEED})`,
        "the secret is never staged; only the folder's own file or a refusal",
        `${leaked} staged the host secret; ${host.detail}; ${tally(answers)}`,
        contained,
      );
      assert.equal(leaked, 0, `the host secret was staged ${leaked} times`);
      assert.ok(host.ok, host.detail);
    });

    it('stage from workspace_path while f swaps between a regular file and a FIFO', async () => {
      const calm = await box.call('sandbox_stage_file', { sandbox_id: 'racer', workspace_path: 'f', path: 'staged/f' });
      assert.ok(calm.ok && calm.text.includes(sha('small')), calm.text);
      const stop = await swapping('f', 'f.alt');
      const answers: ToolAnswer[] = [];
      let hung = false;
      let swaps = 'stopped early';
      try {
        for (let i = 0; i < TRIES && !hung; i++) {
          const call = box.call('sandbox_stage_file', { sandbox_id: 'racer', workspace_path: 'f', path: 'staged/f' });
          let timer: NodeJS.Timeout | undefined;
          const answer = await Promise.race([
            call,
            new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), HANG_MS))),
          ]);
          clearTimeout(timer);
          if (answer === 'hung') {
            hung = true;
            swaps = await stop();
            // A writer that opens and closes releases the host's blocked reader, so that the run can end.
            for (const name of ['f', 'f.alt']) {
              const path = join(folder, name);
              if (existsSync(path) && lstatSync(path).isFIFO())
                closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
            }
            answers.push(await call);
          } else answers.push(answer);
        }
      } finally {
        if (!hung) swaps = await stop();
      }
      const foreign = answers.filter((answer) => answer.ok && !answer.text.includes(sha('small'))).length;
      observe(
        AREA,
        `stage workspace_path f × ${answers.length} while the sandbox swaps f ↔ FIFO (${swaps} swaps, seed ${SEED})`,
        'every call returns: the file, or "not a regular file"; none blocks on the FIFO',
        `${hung ? `a call HUNG on the FIFO (over ${HANG_MS / 1000} s) after ${answers.length - 1} calls` : 'every call returned'}; ${tally(answers)}`,
        !hung && foreign === 0,
      );
      assert.equal(hung, false, 'a stage call blocked on a FIFO');
      assert.equal(foreign, 0);
    });

    it('stage from workspace_path while big swaps between a small file and one over the size limit', async () => {
      const calm = await box.call('sandbox_stage_file', {
        sandbox_id: 'racer',
        workspace_path: 'big',
        path: 'staged/big',
      });
      assert.ok(calm.ok && calm.text.includes(sha('small')), calm.text);
      const stop = await swapping('big', 'big.alt');
      const answers: ToolAnswer[] = [];
      let swaps = 'unknown';
      try {
        for (let i = 0; i < TRIES; i++)
          answers.push(
            await box.call('sandbox_stage_file', { sandbox_id: 'racer', workspace_path: 'big', path: 'staged/big' }),
          );
      } finally {
        swaps = await stop();
      }
      const oversized = answers.filter((answer) => answer.ok && !answer.text.includes(sha('small'))).length;
      const refusals = answers.filter((answer) => !answer.ok);
      const wrongRefusal = refusals.filter(
        (answer) => !/file-too-large|is 4 MiB|limit is 1 MiB/.test(answer.text),
      ).length;
      observe(
        AREA,
        `stage workspace_path big × ${TRIES} while the sandbox swaps big (5 B) ↔ 4 MiB file, store limit 1 MiB (${swaps} swaps, seed ${SEED})`,
        'the size check holds for the file actually read: nothing over 1 MiB staged',
        `${oversized} staged a file over the limit; ${tally(answers)}`,
        oversized === 0 && wrongRefusal === 0,
      );
      assert.equal(oversized, 0, `${oversized} calls staged a file over the 1 MiB limit`);
      assert.equal(wrongRefusal, 0, tally(refusals));
    });

    it("a read-write virtual session on the same folder, while d swaps between a folder and a link to the secret's folder", async () => {
      // The virtual engine works on the host folder in this process: the container races it the same way.
      const engine = new VirtualEngine();
      const { sandbox } = await openSession(engine, resolveSpec({ runtime: 'bash', workspaceAccess: 'rw' }), {
        name: 'virtual-racer',
        workspaceFolder: folder,
      });
      assert.equal(
        (await sandbox.exec({ command: 'cat d/secret.txt' })).stdout,
        'decoy',
        "unraced, the virtual session reads the folder's own file",
      );
      const stop = await swapping('d', 'd.alt');
      let output = '';
      let swaps = 'unknown';
      try {
        const result = await sandbox.exec({
          command: `for i in $(seq 1 ${TRIES}); do cat d/secret.txt; echo; echo pwned > d/virtual-$i.txt; done 2>/dev/null; echo finished`,
          timeoutSeconds: 600,
        });
        output = result.stdout;
      } finally {
        swaps = await stop();
        await engine.dispose();
      }
      const leaked = output.includes(SECRET.trim());
      const host = hostUntouched();
      const reads = output.split('\n').filter((line) => line === 'decoy').length;
      observe(
        AREA,
        `rw virtual session: cat d/secret.txt and echo > d/virtual-N.txt × ${TRIES} while a container swaps d ↔ link to a host folder (${swaps} swaps, seed ${SEED})`,
        'the secret never read, nothing written outside the folder',
        `${leaked ? 'the host secret was READ' : 'secret never read'}; ${reads} reads of the folder's own file; ${host.detail}`,
        !leaked && host.ok,
      );
      assert.equal(leaked, false, 'the virtual session read the host secret');
      assert.ok(host.ok, host.detail);
      assert.match(output, /finished/);
    });

    it('a hard link to a host file outside the mount cannot be made from inside the container', async () => {
      const answer = await exec(
        'ln /etc/hostname /workspace/hardlink 2>&1; ln /tmp/swap.py /workspace/hardlink2 2>&1; echo done',
      );
      const exdev = /Invalid cross-device link/.test(answer.text);
      const landed = existsSync(join(folder, 'hardlink')) || existsSync(join(folder, 'hardlink2'));
      observe(
        AREA,
        "hard link from the container's own files into the rw mount (ln /etc/hostname /workspace/…)",
        'refused by the kernel (EXDEV): host files are not visible and mounts are separate',
        (/ln: .*/.exec(answer.text)?.[0] ?? firstLine(answer.text)) + (landed ? '; a link LANDED' : ''),
        exdev && !landed,
      );
      assert.ok(exdev, answer.text);
      assert.equal(landed, false);
    });

    it('the canary folder is byte-identical, with the same modes and owners, after all races', () => {
      const host = hostUntouched();
      assert.equal(readFileSync(join(canary, 'secret.txt'), 'utf8'), SECRET);
      observe(
        AREA,
        'canary folder outside the workspace, checked before and after every race',
        'untouched',
        host.detail,
        host.ok,
      );
      assert.ok(host.ok, host.detail);
    });
  });
