import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { parseCommandLine, specFromFlags } from '../../src/cli/args';
import { describeDiskLimit, diskLimitHint, isDiskFull, placeBytes } from '../../src/core/limits/diskLimit';
import { SandboxError } from '../../src/core/errors';
import { FolderGrowthWatch, type Usage } from '../../src/core/limits/folderGrowth';
import { specFromFrontmatter } from '../../src/core/spec/frontmatterSpec';
import { CappedOutput } from '../../src/core/results/output';
import { buildExecResult } from '../../src/core/results/results';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { parseSettings, specFromSettings } from '../../src/core/spec/settings';
import { DEFAULT_LIMITS, limitsSchema } from '../../src/core/spec/spec';
import { formatExecResult } from '../../src/core/tools/format';
import { GiB, MiB, parseSize } from '../../src/core/spec/units';
import { containerCreateOptions } from '../../src/engines/docker/containerConfig';
import { fileErrorFor } from '../../src/engines/docker/fileScripts';

const ROOT = resolve(__dirname, '../..');

function output(text: string): CappedOutput {
  const captured = new CappedOutput(1024 * 1024);
  captured.push(Buffer.from(text));
  return captured;
}

describe('disk and inode limits: configuration', () => {
  it('defaults to 1 GiB and 100,000 inodes, and takes sizes as people write them', () => {
    const spec = resolveSpec({});
    assert.equal(spec.limits.diskBytes, 1 * GiB);
    assert.equal(spec.limits.inodes, 100_000);
    assert.equal(resolveSpec({ limits: { diskBytes: '256m', inodes: 5000 } }).limits.diskBytes, 256 * MiB);
  });

  it('refuses a disk limit that is no size, too small or too large, and too few inodes', () => {
    assert.throws(
      () => resolveSpec({ limits: { diskBytes: 'lots' } }),
      /"lots" is not a disk size; write it like 256m or 2g/,
    );
    assert.throws(() => resolveSpec({ limits: { diskBytes: '8m' } }), /disk must be at least 16 MiB/);
    assert.throws(() => resolveSpec({ limits: { diskBytes: '2t' } }), /disk must be at most 1024 GiB/);
    assert.throws(() => resolveSpec({ limits: { inodes: 10 } }), /limits\.inodes/);
    assert.throws(
      () => resolveSpec({ limits: { memoryBytes: 'lots' } }),
      /"lots" is not a memory size; write it like 512m or 1g/,
    );
  });

  it('comes from settings, the .prompt sandbox block and the command line', () => {
    const fromSettings = specFromSettings(parseSettings({ limits: { disk: '2g', inodes: 5000 } }));
    assert.equal(resolveSpec(fromSettings).limits.diskBytes, 2 * GiB);
    assert.equal(resolveSpec(fromSettings).limits.inodes, 5000);
    assert.equal(resolveSpec(specFromSettings(parseSettings({}))).limits.diskBytes, DEFAULT_LIMITS.diskBytes);
    const fromBlock = resolveSpec(specFromFrontmatter({ runtime: 'python', limits: { disk: '512m', inodes: 2000 } }));
    assert.deepEqual([fromBlock.limits.diskBytes, fromBlock.limits.inodes], [512 * MiB, 2000]);
    assert.throws(() => specFromFrontmatter({ limits: { disk: 'huge' } }), /Invalid sandbox block/);
    for (const command of ['run', 'open']) {
      const flags = specFromFlags(parseCommandLine([command, '--disk', '128m', '--inodes', '3000']).values);
      assert.deepEqual(
        [resolveSpec(flags).limits.diskBytes, resolveSpec(flags).limits.inodes],
        [128 * MiB, 3000],
        command,
      );
    }
    assert.throws(
      () => specFromFlags(parseCommandLine(['run', '--disk', 'lots']).values),
      /--disk must be a size like 256m or 2g/,
    );
  });

  it("package.json declares the settings with the schema's defaults and bounds", () => {
    const properties = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).contributes.configuration
      .properties;
    const disk = properties['agentSandbox.limits.disk'];
    const inodes = properties['agentSandbox.limits.inodes'];
    assert.equal(parseSize(disk.default), DEFAULT_LIMITS.diskBytes);
    assert.equal(disk.pattern, properties['agentSandbox.limits.memory'].pattern);
    const bounds = z.toJSONSchema(limitsSchema.shape.inodes.unwrap()) as { minimum: number; maximum: number };
    assert.deepEqual(
      [inodes.type, inodes.default, inodes.minimum, inodes.maximum],
      ['integer', DEFAULT_LIMITS.inodes, bounds.minimum, bounds.maximum],
    );
    const nls = JSON.parse(readFileSync(join(ROOT, 'package.nls.json'), 'utf8'));
    for (const key of [disk.markdownDescription, disk.patternErrorMessage, inodes.markdownDescription])
      assert.ok(nls[key.replace(/%/g, '')], key);
  });
});

describe('disk and inode limits: what a sandbox gets', () => {
  const plan = (layer: object, workspaceFolder?: string) => ({
    name: 'agent-sandbox-test',
    image: 'python:3.12-slim',
    spec: resolveSpec(layer),
    user: { uid: 1000, gid: 1000 },
    createdAt: '2026-01-01T00:00:00.000Z',
    notices: [],
    workspaceFolder,
  });

  it('holds each place under half the memory, since files are kept in memory', () => {
    assert.equal(placeBytes(resolveSpec({}).limits), 256 * MiB);
    assert.equal(placeBytes(resolveSpec({ limits: { diskBytes: '64m' } }).limits), 64 * MiB);
    assert.equal(placeBytes(resolveSpec({ limits: { memoryBytes: '4g' } }).limits), 1 * GiB);
    assert.match(
      describeDiskLimit(resolveSpec({}).limits),
      /^256 MiB and 100,000 files per writable place \(limits\.disk is 1 GiB, but files are kept in memory/,
    );
    assert.equal(
      describeDiskLimit(resolveSpec({ limits: { diskBytes: '64m', inodes: 5000 } }).limits),
      '64 MiB and 5,000 files per writable place',
    );
  });

  it('makes the root file system read-only and every writable place a capped tmpfs', () => {
    const host = containerCreateOptions(plan({ limits: { diskBytes: '64m', inodes: 5000 } })).HostConfig!;
    assert.equal(host.ReadonlyRootfs, true);
    const tmpfs = host.Tmpfs!;
    assert.deepEqual(Object.keys(tmpfs).sort(), [
      '/dev/shm',
      '/home/sandbox',
      '/run/lock',
      '/tmp',
      '/var/tmp',
      '/workspace',
    ]);
    const size = 64 * MiB;
    assert.equal(tmpfs['/tmp'], `rw,exec,nosuid,nodev,size=${size},nr_inodes=5000,mode=1777`);
    assert.equal(tmpfs['/var/tmp'], `rw,exec,nosuid,nodev,size=${size},nr_inodes=5000,mode=1777`);
    assert.equal(tmpfs['/home/sandbox'], `rw,exec,nosuid,nodev,size=${size},nr_inodes=5000,mode=755,uid=1000,gid=1000`);
    assert.equal(tmpfs['/workspace'], `rw,exec,nosuid,nodev,size=${size},nr_inodes=5000,mode=755,uid=1000,gid=1000`);
    assert.equal(tmpfs['/dev/shm'], `rw,noexec,nosuid,nodev,size=${size},nr_inodes=5000,mode=1777`);
    assert.equal(tmpfs['/run/lock'], `rw,noexec,nosuid,nodev,size=${MiB},nr_inodes=1000,mode=1777`);
    for (const options of Object.values(tmpfs)) assert.match(options, /nosuid,nodev,size=\d+,nr_inodes=\d+/);
  });

  it('on Podman: the bytes cap, the same owner through U, no nr_inodes (refused there), no copy-up, and no network by NetworkMode', () => {
    const options = containerCreateOptions({
      ...plan({ limits: { diskBytes: '64m', inodes: 5000 } }),
      dialect: 'podman',
    });
    const tmpfs = options.HostConfig!.Tmpfs!;
    const size = 64 * MiB;
    assert.equal(tmpfs['/tmp'], `rw,exec,nosuid,nodev,size=${size},mode=1777,notmpcopyup`);
    assert.equal(tmpfs['/home/sandbox'], `rw,exec,nosuid,nodev,size=${size},mode=755,U,notmpcopyup`);
    assert.equal(tmpfs['/workspace'], `rw,exec,nosuid,nodev,size=${size},mode=755,U,notmpcopyup`);
    assert.equal(tmpfs['/run/lock'], `rw,noexec,nosuid,nodev,size=${MiB},mode=1777,notmpcopyup`);
    // U hands a place to the container's user: the sandbox user is that user.
    assert.equal(options.User, '1000:1000');
    for (const value of Object.values(tmpfs)) assert.doesNotMatch(value, /nr_inodes|uid=|gid=/);
    // Podman's API ignores NetworkDisabled.
    assert.equal(options.HostConfig!.NetworkMode, 'none');
    const withNetwork = containerCreateOptions({ ...plan({ network: true }), dialect: 'podman' });
    assert.equal(withNetwork.HostConfig!.NetworkMode, undefined);
    assert.equal(containerCreateOptions(plan({})).HostConfig!.NetworkMode, undefined, 'Docker keeps NetworkDisabled');
  });

  it("leaves a mounted workspace folder to the folder watch, and caps /dev/shm at Docker's 64 MiB", () => {
    const tmpfs = containerCreateOptions(plan({ workspaceAccess: 'rw' }, '/home/me/project')).HostConfig!.Tmpfs!;
    assert.equal(tmpfs['/workspace'], undefined);
    assert.match(tmpfs['/tmp']!, /size=268435456,nr_inodes=100000/);
    assert.match(tmpfs['/dev/shm']!, /size=67108864,/);
  });
});

describe('disk and inode limits: reporting', () => {
  const spec = resolveSpec({ limits: { diskBytes: '64m', inodes: 5000 } });
  const raw = (stdout: string, stderr: string, exitCode: number, oomKilled = false) => ({
    exitCode,
    timedOut: false,
    cancelled: false,
    oomKilled,
    durationMs: 12,
    stdout: output(stdout),
    stderr: output(stderr),
    timeoutSeconds: 120,
  });

  it('knows a full place by what programs, tar and the virtual engine print', () => {
    for (const text of [
      "dd: error writing '/tmp/fill': No space left on device",
      'OSError: [Errno 28] No space left on device',
      'tar: x: Cannot write: Disk quota exceeded',
      'bash: f: ENOSPC: in-memory filesystem byte limit exceeded (1024 bytes)',
    ]) {
      assert.ok(isDiskFull(text), text);
    }
    assert.ok(!isDiskFull('all good; space left: plenty'));
  });

  it('says "disk limit reached" with the limits and what to do, whatever the exit code', async () => {
    for (const result of [
      buildExecResult(raw('', "dd: error writing '/tmp/fill': No space left on device\n", 1), spec),
      buildExecResult(raw("dd: error writing '/tmp/fill': No space left on device\n", '', 0), spec),
    ]) {
      assert.equal(result.diskLimitReached, true);
      assert.match(
        result.hint!,
        /^disk limit reached: .*64 MiB and 5,000 files per writable place.*Delete files you no longer need.*limits\.disk/,
      );
      const text = await formatExecResult(result, { engine: 'docker', sandboxId: 'default' });
      assert.match(text.split('\n')[0]!, /(^| · )disk limit reached · exit code \d/);
    }
    const quiet = buildExecResult(raw('ok\n', '', 0), spec);
    assert.equal(quiet.diskLimitReached, undefined);
    const oom = buildExecResult(raw('', 'No space left on device\n', 137, true), spec);
    assert.equal(oom.outcome, 'oom');
    assert.equal(oom.diskLimitReached, undefined, 'an OOM kill is reported as such');
    assert.match(oom.hint!, /Files in \/tmp, \$HOME and a private \/workspace are kept in memory and count toward it/);
    assert.match(diskLimitHint(spec.limits), /--disk and --inodes/);
  });

  it("turns a file tool's ENOSPC into a disk-limit error", () => {
    const error = fileErrorFor(
      '/workspace/big.bin',
      2,
      'tar: big.bin: Cannot write: No space left on device',
      'write',
      spec.limits,
    );
    assert.ok(SandboxError.is(error, 'disk-limit'));
    assert.match(
      error.message,
      /Cannot write \/workspace\/big\.bin: disk limit reached \(64 MiB and 5,000 files per writable place\)/,
    );
    assert.match(error.hint!, /Delete files you no longer need/);
  });
});

describe('the watch on a read-write workspace folder', () => {
  // A tmpfs of its own when the machine has one, so that other programs' writes do not move the numbers.
  const parent = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  let folder: string;
  const watches: FolderGrowthWatch[] = [];
  const watch = (limits: Usage, exceeded: Usage[]) => {
    const made = new FolderGrowthWatch({
      folder,
      limits,
      intervalMs: 3_600_000,
      onExceeded: (growth) => void exceeded.push(growth),
    });
    watches.push(made);
    return made;
  };

  beforeEach(() => {
    folder = mkdtempSync(join(parent, 'agent-sandbox-growth-'));
  });
  afterEach(() => {
    for (const made of watches.splice(0)) made.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('stops past the byte limit, counting only what was written since it began', async () => {
    writeFileSync(join(folder, 'before.bin'), Buffer.alloc(3 * MiB, 1));
    const exceeded: Usage[] = [];
    const watched = watch({ bytes: 1 * MiB, inodes: 1000 }, exceeded);
    assert.equal(await watched.started, true);
    writeFileSync(join(folder, 'small.bin'), Buffer.alloc(MiB / 2, 1));
    await watched.check();
    assert.equal(exceeded.length, 0, 'half the limit is no reason to stop');
    mkdirSync(join(folder, 'deeper'));
    writeFileSync(join(folder, 'deeper', 'big.bin'), Buffer.alloc(2 * MiB, 1));
    await watched.check();
    assert.equal(exceeded.length, 1);
    assert.ok(exceeded[0]!.bytes > 1 * MiB && exceeded[0]!.bytes < 3 * MiB, JSON.stringify(exceeded));
    await watched.check();
    assert.equal(exceeded.length, 1, 'it stops after the first time');
  });

  it('stops past the inode limit', async () => {
    const exceeded: Usage[] = [];
    const watched = watch({ bytes: 1 * GiB, inodes: 50 }, exceeded);
    assert.equal(await watched.started, true);
    for (let i = 0; i < 80; i++) writeFileSync(join(folder, `f${i}`), '');
    await watched.check();
    assert.equal(exceeded.length, 1);
    assert.ok(exceeded[0]!.inodes > 50, JSON.stringify(exceeded));
  });

  it('does not start on a folder that does not exist', async () => {
    const watched = new FolderGrowthWatch({
      folder: join(folder, 'missing'),
      limits: { bytes: MiB, inodes: 10 },
      onExceeded: () => assert.fail('no folder, no growth'),
    });
    watches.push(watched);
    assert.equal(await watched.started, false);
  });
});
