// Filling the disk and the inode table from inside a sandbox, through the tools, against the real
// engine: every writable place is capped at limits.disk / limits.inodes, the answer says "disk limit
// reached", and the host side is measured: the container's writable layer on the engine's disk, and
// the bytes and files of a folder mounted read-write.
import assert from 'node:assert/strict';
import { chownSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireEngine } from '../engine/harness';
import { observe } from './report';
import { firstLine, toolbox } from './toolbox';

type Box = ReturnType<typeof toolbox>;

const MiB = 1024 * 1024;
const DISK = 64 * MiB;
const INODES = 5000;
const LIMITS = { limits: { disk: '64m', inodes: INODES } };
/** What a session's writable layer may grow by on the engine's disk while the sandbox fills its places: folders, nothing more. */
const LAYER_MARGIN = 1 * MiB;
const LAYER_INODE_MARGIN = 20;

interface Usage {
  bytes: number;
  inodes: number;
}

/** Bytes and entries under a host folder, without following links. */
function usageOf(dir: string): Usage {
  let bytes = 0;
  let inodes = 0;
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      const stat = lstatSync(full);
      inodes++;
      if (stat.isDirectory()) walk(full);
      else bytes += stat.size;
    }
  };
  walk(dir);
  return { bytes, inodes };
}

/** What the container holds on the engine's disk: its writable layer (the overlay upper folder; SizeRw when it cannot be read here). */
async function layerOf(box: Box, sandboxId: string): Promise<Usage> {
  const id = box.service.known(sandboxId)!.id;
  const container = box.engine.docker.getContainer(id);
  const upper = ((await container.inspect()).GraphDriver?.Data as Record<string, string> | undefined)?.UpperDir;
  try {
    if (upper) return usageOf(upper);
  } catch {
    // An engine on another machine, or no permission: fall back to the engine's own count of bytes.
  }
  const sized = (await container.inspect({ size: true } as object)) as { SizeRw?: number };
  return { bytes: sized.SizeRw ?? 0, inodes: 0 };
}

/** After an attack the session is either usable or reported dead with the reason; says which. */
async function afterwards(box: Box, id: string): Promise<{ usable: boolean; text: string }> {
  const probe = await box.call('sandbox_exec', { sandbox_id: id, command: 'echo alive' });
  if (probe.ok && /alive/.test(probe.text)) return { usable: true, text: 'session usable' };
  assert.match(
    probe.text,
    /no longer running: .+|no longer exists: .+/,
    `neither usable nor reported dead: ${probe.text}`,
  );
  const why = /because (disk limit reached)/.exec(probe.text)?.[1] ?? firstLine(probe.text);
  return { usable: false, text: `session reported dead: ${why}` };
}

function growth(before: Usage, after: Usage): Usage {
  return { bytes: after.bytes - before.bytes, inodes: after.inodes - before.inodes };
}

function mib(bytes: number): string {
  return `${(bytes / MiB).toFixed(1)} MiB`;
}

describe('disk and inode limits, through the tools', function () {
  let box: Box;

  before(async function () {
    await requireEngine(this);
    box = toolbox({ settings: LIMITS });
    const opened = await box.call('sandbox_open', { session: 'fill', runtime: 'bash' });
    assert.ok(opened.ok, opened.text);
  });

  after(async () => {
    await box?.dispose();
  });

  it('leaves nothing on the root file system writable: every writable place is a capped file system', async () => {
    const answer = await box.call('sandbox_exec', {
      sandbox_id: 'fill',
      // Each writable path on the root file system, with the type of the file system it really is on (a mount point is the root of its own).
      command:
        'echo rootfs:; find / -xdev -writable 2>/dev/null | while read -r p; do echo "$(readlink -f "$p") $(stat -f -c %T "$p")"; done; echo places:; for d in /tmp /var/tmp /run/lock "$HOME" /workspace /dev/shm; do [ -w "$d" ] && echo "$d $(stat -f -c "%T %b %S %c" "$d")"; done',
    });
    const [rootfs = '', places = ''] = answer.text.split(/rootfs:|places:/).slice(1);
    const capped = places
      .trim()
      .split('\n')
      .filter((line) => /^\//.test(line))
      .map((line) => {
        const [dir, type, blocks, blockSize, files] = line.trim().split(' ');
        return { dir, type, bytes: Number(blocks) * Number(blockSize), files: Number(files) };
      });
    // Writable on the root file system: anything that is not the mount point of one of the capped places.
    const writableOnRoot = rootfs
      .trim()
      .split('\n')
      .filter(Boolean)
      .filter((line) => {
        const [path, type] = line.split(' ');
        return !(type === 'tmpfs' && capped.some((place) => place.dir === path));
      });
    const uncapped = capped.filter((place) => place.type !== 'tmpfs' || place.bytes > DISK || place.files > INODES);
    const passed = writableOnRoot.length === 0 && capped.length > 0 && uncapped.length === 0;
    observe(
      'disk',
      'find / -xdev -writable as the sandbox user; the size and inode count of each writable place',
      'nothing writable on the root file system; each writable place a tmpfs within 64 MiB and 5,000 inodes',
      `writable on the root: ${writableOnRoot.join(' ') || 'none'}; uncapped places: ${uncapped.map((place) => `${place.dir} (${place.type})`).join(' ') || 'none'}`,
      passed,
    );
    assert.deepEqual(writableOnRoot, [], 'nothing on the root file system is writable');
    assert.deepEqual(uncapped, [], 'every writable place is a tmpfs within the limits');
  });

  for (const place of ['/tmp', '/home/sandbox', '/workspace', '/var/tmp', '/dev/shm']) {
    it(`writing 100 MiB into ${place} stops at the disk limit, and the session stays usable`, async () => {
      const before = await layerOf(box, 'fill');
      const answer = await box.call('sandbox_exec', {
        sandbox_id: 'fill',
        command: `dd if=/dev/zero of=${place}/fill bs=1M count=100; ls -l ${place}/fill | cut -d" " -f5`,
      });
      const after = await layerOf(box, 'fill');
      const grew = growth(before, after);
      const status = await afterwards(box, 'fill');
      await box.call('sandbox_exec', { sandbox_id: 'fill', command: `rm -f ${place}/fill` });
      const reported = /disk limit reached/.test(answer.text);
      const hostOk = grew.bytes <= LAYER_MARGIN;
      observe(
        'disk',
        `dd 100 MiB into ${place} (limit 64 MiB)`,
        'stopped at 64 MiB with "disk limit reached"; the engine\'s disk did not grow; the session usable',
        `${reported ? 'disk limit reached' : 'NOT reported'}; writable layer grew ${mib(grew.bytes)}; ${status.text}`,
        reported && hostOk && status.usable,
      );
      assert.ok(reported, `the answer says disk limit reached: ${answer.text}`);
      assert.ok(hostOk, `the container's writable layer grew by ${grew.bytes} bytes`);
      assert.ok(status.usable, status.text);
    });
  }

  it('creating files past the inode limit stops at it, and the session stays usable', async () => {
    const before = await layerOf(box, 'fill');
    const answer = await box.call('sandbox_exec', {
      sandbox_id: 'fill',
      command:
        'mkdir -p /tmp/many && cd /tmp/many && seq 1 6000 | xargs touch 2>&1 | tail -1; echo files=$(ls | wc -l)',
    });
    const after = await layerOf(box, 'fill');
    const grew = growth(before, after);
    const made = Number(/files=(\d+)/.exec(answer.text)?.[1] ?? NaN);
    const status = await afterwards(box, 'fill');
    await box.call('sandbox_exec', { sandbox_id: 'fill', command: 'rm -rf /tmp/many' });
    const reported = /disk limit reached/.test(answer.text);
    const hostOk = grew.inodes <= LAYER_INODE_MARGIN && made <= INODES;
    observe(
      'disk',
      'touch 6,000 files in /tmp (limit 5,000 inodes)',
      'stopped at the inode limit with "disk limit reached"; no file reached the engine\'s disk; the session usable',
      `${reported ? 'disk limit reached' : 'NOT reported'}; ${made} files made; writable layer grew ${grew.inodes} entries; ${status.text}`,
      reported && hostOk && status.usable,
    );
    assert.ok(reported, `the answer says disk limit reached: ${answer.text}`);
    assert.ok(hostOk, `${made} files were made; the writable layer grew by ${grew.inodes} entries`);
    assert.ok(status.usable, status.text);
  });

  it('the file tools writing past the disk limit say so, and the session stays usable', async () => {
    const before = await layerOf(box, 'fill');
    const tenMiB = 'x'.repeat(10 * MiB);
    const first = await box.call('sandbox_fs_write', {
      sandbox_id: 'fill',
      files: Array.from({ length: 6 }, (_, i) => ({ path: `big/${i}.txt`, content: tenMiB })),
    });
    const second = await box.call('sandbox_fs_write', {
      sandbox_id: 'fill',
      files: [
        { path: 'big/6.txt', content: tenMiB },
        { path: 'big/7.txt', content: tenMiB },
      ],
    });
    const after = await layerOf(box, 'fill');
    const grew = growth(before, after);
    const status = await afterwards(box, 'fill');
    await box.call('sandbox_fs_delete', { sandbox_id: 'fill', path: 'big', recursive: true });
    const reported = !second.ok && /disk limit reached/.test(second.text);
    const hostOk = grew.bytes <= LAYER_MARGIN;
    observe(
      'disk',
      'sandbox_fs_write 60 MiB, then 20 MiB more into /workspace (limit 64 MiB)',
      'the second write fails with "disk limit reached"; the engine\'s disk did not grow; the session usable',
      `${first.ok ? 'first written' : 'first failed'}; ${reported ? 'disk limit reached' : `second: ${firstLine(second.text)}`}; writable layer grew ${mib(grew.bytes)}; ${status.text}`,
      reported && hostOk && status.usable,
    );
    assert.ok(first.ok, first.text);
    assert.ok(reported, `the answer says disk limit reached: ${second.text}`);
    assert.ok(hostOk, `the container's writable layer grew by ${grew.bytes} bytes`);
    assert.ok(status.usable, status.text);
  });

  it('files in two places that fill the memory (each place holds half of it): the session is usable or reported dead with the reason', async () => {
    const small = toolbox({ settings: { limits: { disk: '64m', inodes: INODES, memory: '64m' } } });
    try {
      await small.call('sandbox_open', { session: 'full', runtime: 'bash' });
      const before = await layerOf(small, 'full');
      const answer = await small.call('sandbox_exec', {
        sandbox_id: 'full',
        command: 'dd if=/dev/zero of=/tmp/a bs=1M count=40; dd if=/dev/zero of=$HOME/b bs=1M count=40',
      });
      const grew = small.service.known('full') ? growth(before, await layerOf(small, 'full')) : { bytes: 0, inodes: 0 };
      const status = await afterwards(small, 'full');
      const handled = status.usable || /disk limit reached/.test(status.text);
      const hostOk = grew.bytes <= LAYER_MARGIN;
      observe(
        'disk',
        'dd 40 MiB into /tmp and into $HOME with a 64 MiB memory limit (each place holds 32 MiB)',
        'the session usable, or stopped and reported dead with "disk limit reached"; the engine\'s disk did not grow',
        `${firstLine(answer.text)}; writable layer grew ${mib(grew.bytes)}; ${status.text}`,
        handled && hostOk,
      );
      assert.ok(hostOk, `the container's writable layer grew by ${grew.bytes} bytes`);
      assert.ok(handled, status.text);
    } finally {
      await small.dispose();
    }
  });

  it('a compute-mode run writing past the disk limit says so', async () => {
    const answer = await box.call('sandbox_run', {
      runtime: 'bash',
      code: 'dd if=/dev/zero of=/tmp/fill bs=1M count=100',
    });
    const reported = /disk limit reached/.test(answer.text);
    observe(
      'disk',
      'sandbox_run: dd 100 MiB into /tmp (limit 64 MiB)',
      'stopped at 64 MiB with "disk limit reached"',
      reported ? firstLine(answer.text) : `NOT reported: ${firstLine(answer.text)}`,
      reported,
    );
    assert.ok(reported, answer.text);
  });
});

describe('disk and inode limits on a folder mounted read-write', function () {
  /** Writes slower than the watcher looks (about 20 MiB or 2,000 files a second), so its overshoot is bounded by about a second of writing. */
  const BYTES_WRITER =
    'mkdir -p grow && i=0; while [ $i -lt 256 ]; do head -c 1048576 /dev/zero > grow/f$i || break; i=$((i+1)); sleep 0.05; done; echo wrote=$i';
  const FILES_WRITER =
    'mkdir -p many && i=0; while [ $i -lt 400 ]; do (cd many && touch $(seq -f "$i-%g" 1 100)) || break; i=$((i+1)); sleep 0.05; done; echo batches=$i';
  const FOLDER_BYTES_MARGIN = 64 * MiB;
  const FOLDER_INODE_MARGIN = INODES;

  before(async function () {
    await requireEngine(this);
  });

  for (const [what, writer, limit, margin, key] of [
    ['256 MiB, 1 MiB at a time', BYTES_WRITER, DISK, FOLDER_BYTES_MARGIN, 'bytes'],
    ['40,000 files, 100 at a time', FILES_WRITER, INODES, FOLDER_INODE_MARGIN, 'inodes'],
  ] as const) {
    it(`a sandbox writing ${what} into the mounted folder is stopped past the limit and reported dead with the reason`, async () => {
      const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-rw-'));
      // The sandbox user (the host user's ids, or 1000 when the suite runs as root) owns the folder, as a developer's project.
      if (process.getuid?.() === 0) chownSync(folder, 1000, 1000);
      const rw = toolbox({ folder, settings: { ...LIMITS, workspaceAccess: 'rw' } });
      try {
        const opened = await rw.call('sandbox_open', { session: 'rw-fill', runtime: 'bash', workspace_access: 'rw' });
        assert.ok(opened.ok, opened.text);
        const before = usageOf(folder);
        const answer = await rw.call('sandbox_exec', { sandbox_id: 'rw-fill', command: writer, timeout_seconds: 60 });
        const grew = growth(before, usageOf(folder));
        const status = await afterwards(rw, 'rw-fill');
        const stopped = !status.usable && /disk limit reached/.test(status.text);
        const hostOk = grew[key] <= limit + margin;
        const shown = key === 'bytes' ? `${mib(grew.bytes)}` : `${grew.inodes} files`;
        observe(
          'disk',
          `rw mount: ${what} into the host folder (limit ${key === 'bytes' ? '64 MiB' : '5,000 files'})`,
          'the session is stopped and reported dead with "disk limit reached"; the folder grew by at most the limit and about a second of writing',
          `folder grew ${shown}; ${stopped ? status.text : `NOT stopped: ${status.text}; ${firstLine(answer.text)}`}`,
          stopped && hostOk,
        );
        assert.ok(hostOk, `the folder grew by ${grew[key]} ${key}, more than ${limit} + ${margin}`);
        assert.ok(stopped, `the session is reported dead with the reason: ${status.text}`);
      } finally {
        await rw.dispose();
        rmSync(folder, { recursive: true, force: true });
      }
    });
  }
});

describe('disk limits on a folder mounted read-write, through the CLI (a process per call, none in between)', function () {
  const LIMIT = 40 * MiB;
  /** What the sandbox may write before a look sees it: one call's 30 MiB, or about a second of writing. */
  const MARGIN = 40 * MiB;
  let folder: string;
  let cli: Box;

  before(async function () {
    await requireEngine(this);
  });

  beforeEach(async () => {
    folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-rwcli-'));
    if (process.getuid?.() === 0) chownSync(folder, 1000, 1000);
    cli = toolbox({ folder, via: 'cli', settings: { workspaceAccess: 'rw', limits: { disk: '40m' } } });
    const opened = await cli.call('sandbox_open', { session: 'split', runtime: 'python', workspace_access: 'rw' });
    assert.ok(opened.ok, opened.text);
  });

  afterEach(async () => {
    await cli?.dispose();
    rmSync(folder, { recursive: true, force: true });
  });

  /** Whether the session's container still runs, asked of the engine itself (no CLI call, which would watch too). */
  async function running(): Promise<boolean> {
    const [container] = await cli.engine.docker.listContainers({
      all: true,
      filters: { label: ['org.agent-sandbox.session=split', `org.agent-sandbox.workspace=${folder}`] },
    });
    return container?.State === 'running' || container?.State === 'paused';
  }

  /** Waits for the engine to report the session stopped; a generous bound, not a timing assertion. */
  async function stoppedWithin(seconds: number): Promise<boolean> {
    for (let waited = 0; waited < seconds * 2; waited++) {
      if (!(await running())) return true;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return false;
  }

  function report(what: string, grew: number, stopped: boolean, said: string): void {
    const hostOk = grew <= LIMIT + MARGIN;
    observe(
      'disk',
      `rw mount via the CLI: ${what} (limit 40 MiB)`,
      'the session is stopped with "disk limit reached" and says so; the folder grew by at most the limit and one burst',
      `folder grew ${mib(grew)}; ${stopped ? 'stopped' : 'NOT stopped'}; ${firstLine(said)}`,
      hostOk && stopped && /disk limit reached/.test(said),
    );
    assert.ok(hostOk, `the folder grew by ${mib(grew)}`);
    assert.ok(stopped, 'the session was stopped');
    assert.match(said, /disk limit reached/);
  }

  /** Runs a Python program that holds space no walk of the folder sees (the folder grows by nothing visible). */
  async function holdSpace(program: string, what: string): Promise<void> {
    const written = await cli.call('sandbox_fs_write', {
      sandbox_id: 'split',
      files: [{ path: 'hold.py', content: program }],
    });
    assert.ok(written.ok, written.text);
    const answer = await cli.call('sandbox_exec', {
      sandbox_id: 'split',
      command: 'python3 hold.py',
      timeout_seconds: 60,
    });
    const stopped = await stoppedWithin(30);
    const said = /disk limit reached/.test(answer.text)
      ? answer.text
      : (await cli.call('sandbox_exec', { sandbox_id: 'split', command: 'echo alive' })).text;
    report(what, 0, stopped, said);
  }

  it("30 MiB in each of three commands: the limit counts from the session's opening, not from each command", async () => {
    const before = usageOf(folder).bytes;
    for (let i = 1; i <= 3; i++) {
      const answer = await cli.call('sandbox_exec', {
        sandbox_id: 'split',
        command: `head -c 31457280 /dev/zero > a${i}; sync; sleep 2`,
      });
      if (!answer.ok) break;
    }
    const stopped = await stoppedWithin(30);
    const said = (await cli.call('sandbox_exec', { sandbox_id: 'split', command: 'echo alive' })).text;
    report('30 MiB per command, three commands', usageOf(folder).bytes - before, stopped, said);
  });

  it('a background writer that starts after its command returned is stopped while no command runs', async () => {
    const before = usageOf(folder).bytes;
    const answer = await cli.call('sandbox_exec', {
      sandbox_id: 'split',
      command:
        'nohup sh -c "sleep 3; for i in 1 2 3 4; do head -c 31457280 /dev/zero > b\\$i; sync; sleep 1; done" >/dev/null 2>&1 & echo started',
    });
    assert.ok(answer.ok, answer.text);
    const stopped = await stoppedWithin(60);
    const grew = usageOf(folder).bytes - before;
    const said = (await cli.call('sandbox_exec', { sandbox_id: 'split', command: 'echo alive' })).text;
    report('a background writer after the command returned', grew, stopped, said);
  });

  it('files deleted while only mapped count: 90 MiB held by mappings of unlinked files is stopped', async () => {
    const holder = [
      // libc's mmap, not Python's (which keeps a duplicate descriptor): only the mapping holds the file.
      'import ctypes, os, time',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'libc.mmap.restype = ctypes.c_void_p',
      'libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]',
      'for i in range(9):',
      '    fd = os.open(f"m{i}", os.O_CREAT | os.O_RDWR, 0o644)',
      '    os.write(fd, b"\\1" * 10_000_000); os.fsync(fd)',
      '    assert libc.mmap(None, 4096, 1, 1, fd, 0) not in (None, 2**64 - 1)',
      '    os.close(fd); os.unlink(f"m{i}"); time.sleep(0.3)',
      'time.sleep(30)',
    ].join('\n');
    await holdSpace(holder, '90 MiB in files deleted while mapped (no descriptor open)');
  });

  it("descriptors opened to hide held files behind the watcher's cap do not hide them", async () => {
    const holder = [
      // 17 processes with 4,000 descriptors each come first in the process list; the files are held after them.
      'import os, time',
      'for _ in range(17):',
      '    if os.fork() == 0:',
      '        junk = [os.open("/dev/null", os.O_RDONLY) for _ in range(4000)]',
      '        time.sleep(40); os._exit(0)',
      'time.sleep(2)',
      'if os.fork() == 0:',
      '    fds = []',
      '    for i in range(9):',
      '        fd = os.open(f"h{i}", os.O_CREAT | os.O_WRONLY, 0o644)',
      '        os.unlink(f"h{i}")',
      '        os.write(fd, b"\\0" * 10_000_000); os.fsync(fd)',
      '        fds.append(fd); time.sleep(0.3)',
      '    time.sleep(30); os._exit(0)',
      'time.sleep(35)',
    ].join('\n');
    await holdSpace(holder, '90 MiB in unlinked files held behind 68,000 open descriptors');
  });

  it('files deleted while held open count: 90 MiB held in unlinked files is stopped', async () => {
    const holder = [
      'import os, time',
      'fds = []',
      'for i in range(9):',
      '    fd = os.open(f"u{i}", os.O_CREAT | os.O_WRONLY, 0o644)',
      '    os.unlink(f"u{i}")',
      '    os.write(fd, b"\\0" * 10_000_000); os.fsync(fd)',
      '    fds.append(fd); time.sleep(0.3)',
      'time.sleep(30)',
    ].join('\n');
    await holdSpace(holder, '90 MiB in files deleted while open');
  });
});
