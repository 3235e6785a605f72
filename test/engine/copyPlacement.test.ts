/**
 * Workspace access copy, in bulk: many files of every shape placed with their exact bytes and modes,
 * and the listing of changes against what was placed (BLAKE2b of every file, sha256 of the changed
 * ones) agreeing with the listing that hashes every file with sha256, for edits that keep the size,
 * the mtime or even the ctime.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { compareToBaseline } from '../../src/core/files/copyChanges';
import { listSandboxFiles } from '../../src/core/files/copyListing';
import { loadBaseline, sha256, type CopyBaseline } from '../../src/core/files/folderCopy';
import type { Sandbox } from '../../src/core/engine/engine';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { openSession } from './namedSession';
import { requireEngine, testEngine } from './harness';
import { seeded } from '../seed';

/** A git work tree of `count` files: sizes around the 512-byte blocks, modes, long and non-ASCII names. */
function makeFolder(
  count: number,
  seed: number,
): { folder: string; files: Map<string, { data: Buffer; mode: number }> } {
  const random = seeded(seed);
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-copyplace-'));
  execFileSync('git', ['init', '-q', folder]);
  const files = new Map<string, { data: Buffer; mode: number }>();
  const part = () => random.pick(['src', 'a b', 'ünï', 'x'.repeat(70), 'y'.repeat(120), 'deep']);
  while (files.size < count) {
    const path = [
      ...Array.from({ length: random.below(4) }, part),
      `f${files.size}${random.pick(['.txt', '.sh', ''])}`,
    ].join('/');
    if (files.has(path) || [...files.keys()].some((other) => other.startsWith(`${path}/`))) continue;
    const size = random.pick([0, 1, 511, 512, 513, 4096, random.below(200_000)]);
    const data = Buffer.alloc(size);
    for (let index = 0; index < size; index++) data[index] = random.below(256);
    const mode = random.pick([0o644, 0o755, 0o600, 0o664]);
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    writeFileSync(join(folder, path), data);
    execFileSync('chmod', [mode.toString(8), join(folder, path)]);
    files.set(path, { data, mode });
  }
  symlinkSync(files.keys().next().value!, join(folder, 'link-in'));
  return { folder, files };
}

async function run(sandbox: Sandbox, command: string): Promise<string> {
  const result = await sandbox.exec({ command, cwd: '/workspace' });
  assert.equal(result.exitCode, 0, result.stderr);
  return result.stdout;
}

/** Changes by both listings: against what was placed, and with every file hashed with sha256 (no `placed`). */
async function bothListings(sandbox: Sandbox, baseline: CopyBaseline): Promise<[string[], string[]]> {
  const show = (changes: ReturnType<typeof compareToBaseline>) =>
    changes.map((change) => `${change.change} ${change.path}`);
  const { placed: _placed, ...withoutPlaced } = baseline;
  return [
    show(compareToBaseline(baseline, await listSandboxFiles(sandbox, undefined, baseline))),
    show(compareToBaseline(withoutPlaced, await listSandboxFiles(sandbox, undefined, withoutPlaced))),
  ];
}

describe('workspace access copy: many files placed, and their changes listed', function () {
  this.timeout(180_000);
  let stateDir: string;
  let savedStateDir: string | undefined;

  before(async function () {
    await requireEngine(this);
    savedStateDir = process.env.AGENT_SANDBOX_STATE_DIR;
    stateDir = mkdtempSync(join(tmpdir(), 'agent-sandbox-copyplace-state-'));
    process.env.AGENT_SANDBOX_STATE_DIR = stateDir;
  });

  after(() => {
    if (savedStateDir === undefined) delete process.env.AGENT_SANDBOX_STATE_DIR;
    else process.env.AGENT_SANDBOX_STATE_DIR = savedStateDir;
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  it('places every file with its exact bytes and mode; the listing sees edits that keep size and times', async () => {
    const seed = seeded().seed;
    const { folder, files } = makeFolder(400, seed);
    const { sandbox } = await openSession(testEngine(), resolveSpec({ runtime: 'python', workspaceAccess: 'copy' }), {
      name: 'copy-placement',
      workspaceFolder: folder,
    });
    try {
      const message = `seed ${seed} (AGENT_SANDBOX_SEED=${seed} replays it)`;
      // Bytes and modes, file by file.
      const hashes = await run(sandbox, "find . -type f -print0 | sort -z | xargs -0 sha256sum -z | tr '\\0' '\\n'");
      const placedHashes = new Map(
        hashes
          .trim()
          .split('\n')
          .map((line) => [line.slice(66).replace(/^\.\//, ''), line.slice(0, 64)] as const),
      );
      const modes = await run(sandbox, "find . -type f -printf '%m %P\\n'");
      const placedModes = new Map(
        modes
          .trim()
          .split('\n')
          .map((line) => [line.slice(line.indexOf(' ') + 1), parseInt(line.slice(0, line.indexOf(' ')), 8)] as const),
      );
      assert.equal(placedHashes.size, files.size, message);
      for (const [path, file] of files) {
        assert.equal(placedHashes.get(path), sha256(file.data), `${path}: ${message}`);
        assert.equal(placedModes.get(path), file.mode, `${path}: ${message}`);
      }
      assert.equal((await run(sandbox, 'readlink link-in')).trim(), files.keys().next().value);

      const baseline = (await loadBaseline(stateDir, sandbox.info.id))!;
      assert.equal(Object.keys(baseline.placed ?? {}).length, files.size, 'every file placed is kept');
      assert.deepEqual(await bothListings(sandbox, baseline), [[], []], message);

      // Edits that keep the size: a byte flipped then touch -r back to the mtime; a byte read, then changed,
      // through a shared mapping (on tmpfs that sets neither mtime nor ctime); two same-size files swapped
      // by rename; a file rewritten with the same bytes and a chmod (neither is a change of content).
      const sameSize = [...files].filter(([, file]) => file.data.length >= 2).map(([path]) => path);
      const [flipped, mapped, removed, rewritten, chmodded] = sameSize;
      const size = (path: string) => files.get(path)!.data.length;
      const rest = sameSize.slice(5);
      const swapA = rest.find((a) => rest.some((b) => b !== a && size(b) === size(a)))!;
      const swapB = rest.find((b) => b !== swapA && size(b) === size(swapA))!;
      assert.ok(swapA && swapB, `two files of the same size to swap: ${message}`);
      const q = (path: string) => `'${path.replace(/'/g, "'\\''")}'`;
      await run(
        sandbox,
        [
          `cp -p ${q(flipped!)} /tmp/ref`,
          `python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[0]^=1; open(p,"r+b").write(b)' ${q(flipped!)}`,
          `touch -r /tmp/ref ${q(flipped!)}`,
          `python3 -c 'import mmap,os,sys; fd=os.open(sys.argv[1],os.O_RDWR); m=mmap.mmap(fd,0); m[1]^=1; m.flush(); m.close()' ${q(mapped!)}`,
          `mv ${q(swapA)} /tmp/swap && mv ${q(swapB)} ${q(swapA)} && mv /tmp/swap ${q(swapB)}`,
          `cp ${q(rewritten!)} /tmp/same && cat /tmp/same > ${q(rewritten!)}`,
          `chmod 700 ${q(chmodded!)}`,
          `rm ${q(removed!)}`,
          'echo new > added.txt',
        ].join(' && '),
      );
      const differs = !files.get(swapA)!.data.equals(files.get(swapB)!.data);
      const expected = [
        `modified ${flipped}`,
        `modified ${mapped}`,
        ...(differs ? [`modified ${swapA}`, `modified ${swapB}`] : []),
        `deleted ${removed}`,
        'added added.txt',
      ].sort((a, b) => (a.slice(a.indexOf(' ') + 1) < b.slice(b.indexOf(' ') + 1) ? -1 : 1));
      const [fromPlaced, fromHashes] = await bothListings(sandbox, baseline);
      assert.deepEqual(fromPlaced, expected, message);
      assert.deepEqual(fromHashes, expected, message);
    } finally {
      await testEngine().remove(sandbox.info.id);
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
