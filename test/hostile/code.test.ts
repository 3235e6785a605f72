// Hostile code through the tools against the real engine. Each case checks that the attack is
// contained, that the answer says precisely what happened, and what state the session is in after.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Docker from 'dockerode';
import { pack } from 'tar-stream';
import { requireEngine, TEST_IMAGES, testEngine } from '../engine/harness';
import { observe } from './report';
import { firstLine, toolbox } from './toolbox';

type Box = ReturnType<typeof toolbox>;

/** After an attack the session is either usable or reported dead with the reason; says which. */
async function afterwards(box: Box, id: string): Promise<string> {
  const probe = await box.call('sandbox_exec', { sandbox_id: id, command: 'echo alive' });
  if (probe.ok && /alive/.test(probe.text)) return 'session usable';
  assert.match(
    probe.text,
    /no longer running: .+|no longer exists: .+/,
    `neither usable nor reported dead: ${probe.text}`,
  );
  return `session reported dead: ${probe.text.split(':').slice(1, 2).join('').trim()}`;
}

function digest(dir: string): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).sort()) hash.update(name).update(readFileSync(join(dir, name)));
  return hash.digest('hex');
}

describe('hostile code, through the tools', function () {
  let box: Box;
  const canary = join(mkdtempSync(join(tmpdir(), 'agent-sandbox-canary-')), 'canary.txt');

  before(async function () {
    await requireEngine(this);
    writeFileSync(canary, 'the host file nobody may touch\n');
    box = toolbox({
      settings: { limits: { maxProcessFileBytes: 64 * 1024 * 1024 } },
      secrets: { API_TOKEN: 'tok-5f2b9e8c7d1a4e60' },
    });
  });

  after(async () => {
    await box?.dispose();
    assert.equal(
      readFileSync(canary, 'utf8'),
      'the host file nobody may touch\n',
      'the canary on the host is untouched',
    );
    observe(
      'host',
      'canary file outside any mount, checked before and after',
      'untouched',
      `untouched (${statSync(canary).size} bytes)`,
    );
  });

  it('fork bomb', async () => {
    await box.call('sandbox_open', { session: 'bomb', runtime: 'bash' });
    const answer = await box.call('sandbox_exec', {
      sandbox_id: 'bomb',
      command: 'bomb() { bomb | bomb & }; bomb; sleep 3; echo survived',
      timeout_seconds: 6,
    });
    const status = await afterwards(box, 'bomb');
    observe(
      'code',
      'fork bomb (bash)',
      'stopped by the 256-process limit and the time limit; the host unaffected',
      `${firstLine(answer.text)}; ${status}`,
    );
    await box.call('sandbox_close', { sandbox_id: 'bomb' });
  });

  it('memory bomb', async () => {
    const answer = await box.call('sandbox_run', {
      code: 'blocks = []\nwhile True:\n    blocks.append(bytearray(64 * 1024 * 1024))',
    });
    assert.match(answer.text, /memory limit/);
    observe(
      'code',
      'memory bomb (python)',
      'killed at the 512 MiB memory limit, reported as out of memory',
      firstLine(answer.text) + ' · ' + (/Next: .*/.exec(answer.text)?.[0] ?? ''),
    );
  });

  it('CPU spin past the timeout, and a process that ignores SIGTERM', async () => {
    const spin = await box.call('sandbox_run', { code: 'while True:\n    pass', timeout_seconds: 2 });
    assert.match(spin.text, /killed after 2 s/);
    observe('code', 'CPU spin (python while True)', 'killed at the time limit, said so', firstLine(spin.text));
    await box.call('sandbox_open', { session: 'stubborn', runtime: 'bash' });
    const stubborn = await box.call('sandbox_exec', {
      sandbox_id: 'stubborn',
      command: "trap '' TERM INT HUP; while :; do :; done",
      timeout_seconds: 2,
    });
    assert.match(stubborn.text, /killed after 2 s/);
    const left = await box.call('sandbox_exec', {
      sandbox_id: 'stubborn',
      command: 'ps -eo args | grep -c "[w]hile" || true',
    });
    assert.match(left.text, /\b0\b/);
    observe(
      'code',
      'process that ignores SIGTERM',
      'killed (SIGKILL) at the time limit; nothing left running',
      `${firstLine(stubborn.text)}; ${await afterwards(box, 'stubborn')}`,
    );
  });

  it('1 GiB of stdout', async () => {
    const answer = await box.call('sandbox_run', {
      runtime: 'bash',
      code: 'head -c 1073741824 /dev/zero | tr "\\0" x',
    });
    assert.match(answer.text, /truncated/);
    assert.ok(answer.text.length < 60_000, `${answer.text.length} characters reached the model`);
    observe(
      'code',
      '1 GiB of stdout',
      'first 1 MiB kept, the rest counted and dropped with a marker, the model gets a bounded answer',
      `${firstLine(answer.text)} (${answer.text.length} characters returned)`,
    );
  });

  it('binary and invalid UTF-8 output', async () => {
    const answer = await box.call('sandbox_run', {
      runtime: 'bash',
      code: 'head -c 4096 /dev/urandom; printf "\\xff\\xfe\\xc3\\x28 end\\n"',
    });
    assert.ok(answer.ok);
    assert.match(answer.text, /\ufffd/);
    assert.match(answer.text, / end/);
    observe(
      'code',
      'binary and invalid UTF-8 on stdout',
      'shown with replacement characters, nothing breaks',
      firstLine(answer.text),
    );
  });

  it('a sleep that outlives its exec in the background', async () => {
    await box.call('sandbox_open', { session: 'background', runtime: 'bash' });
    const answer = await box.call('sandbox_exec', { sandbox_id: 'background', command: 'sleep 600 & echo started' });
    assert.match(answer.text, /exit code 0/);
    assert.match(answer.text, /started/);
    // The call returned while its sleep still runs: it did not wait for the background process.
    const still = await box.call('sandbox_exec', {
      sandbox_id: 'background',
      command: 'pgrep -x sleep >/dev/null && echo running',
    });
    assert.match(still.text, /running/);
    observe(
      'code',
      'sleep 600 & (outlives its exec)',
      'the call returns; the process stays in the session until it closes',
      `${firstLine(answer.text)}, its sleep still running after; ${await afterwards(box, 'background')}`,
    );
    await box.call('sandbox_close', { sandbox_id: 'background' });
  });

  it('writing past the file-size and file-count caps, and filling the disk', async () => {
    const big = await box.call('sandbox_fs_write', {
      files: [{ path: 'big.bin', content: 'x'.repeat(11 * 1024 * 1024) }],
    });
    assert.equal(big.ok, false);
    assert.match(big.text, /file size limit is 10 MiB/);
    const many = await box.call('sandbox_fs_write', {
      files: Array.from({ length: 1001 }, (_, i) => ({ path: `f/${i}.txt`, content: '' })),
    });
    assert.equal(many.ok, false);
    assert.match(many.text, /files: Too big: expected array to have <=1000 items|the limit is 1000/);
    const listed = await box.call('sandbox_fs_list', {});
    assert.doesNotMatch(listed.text, /big\.bin|\bf\b/, 'nothing was written');
    observe(
      'input',
      'fs_write of an 11 MiB file / of 1001 files',
      'refused before anything is written',
      `${big.text.split('\n')[0]} / ${many.text.split('\n')[0]}`,
    );
    const fill = await box.call('sandbox_exec', {
      command:
        'dd if=/dev/zero of=/workspace/fill bs=1M count=4096 2>&1 | tail -1; ls -l /workspace/fill | cut -d" " -f5',
    });
    assert.match(fill.text, /File size limit exceeded|File too large/);
    assert.match(fill.text, /\b67108864\b/);
    await box.call('sandbox_fs_delete', { path: 'fill' });
    observe(
      'code',
      'filling the disk of /workspace (dd 4 GiB)',
      'stopped at the per-file cap (limits.maxProcessFileBytes)',
      'dd stopped: File size limit exceeded at 64 MiB',
    );
  });

  it('path traversal in every file tool', async () => {
    const paths = [
      '../etc/passwd',
      '/etc/passwd',
      '/workspace/../etc/shadow',
      'a/../../etc/hosts',
      '..\\..\\etc\\passwd',
      '%2e%2e/%2e%2e/etc/passwd',
      '\uff0e\uff0e/\uff0e\uff0e/etc/passwd',
      'a\u0000b',
      'x/'.repeat(3000),
      '....//....//etc/passwd',
      '/proc/self/environ',
    ];
    const refusedOrInside: string[] = [];
    for (const path of paths) {
      for (const [tool, input] of [
        ['sandbox_fs_read', { path }],
        ['sandbox_fs_write', { files: [{ path, content: 'pwned' }] }],
        ['sandbox_fs_list', { path }],
        ['sandbox_fs_delete', { path }],
        ['sandbox_publish_file', { path }],
        ['sandbox_stage_file', { key: 'files/f_0000000000000000', path }],
      ] as const) {
        const answer = await box.call(tool, input);
        if (!answer.ok) {
          refusedOrInside.push(`${tool}`);
          assert.match(
            answer.text,
            /outside \/workspace|NUL|longer than|does not exist|Invalid input|not a|no file|No file|is not|invalid/i,
            `${tool} ${JSON.stringify(path.slice(0, 40))}: ${answer.text}`,
          );
        } else {
          // Accepted only when the path is a plain name inside /workspace (an encoded or look-alike dot is a character).
          assert.match(
            answer.text,
            /\/workspace\//,
            `${tool} ${JSON.stringify(path.slice(0, 40))} answered outside /workspace: ${answer.text}`,
          );
        }
      }
    }
    const outside = await box.call('sandbox_exec', {
      command: 'grep -rl pwned /etc /tmp /root 2>/dev/null | head -3; echo checked',
    });
    assert.doesNotMatch(outside.text, /etc|tmp\/|root/);
    observe(
      'input',
      `path traversal: ${paths.length} hostile paths × 6 file tools`,
      'refused or kept inside /workspace; nothing written outside',
      `${refusedOrInside.length} of ${paths.length * 6} refused, the rest stayed inside /workspace`,
    );
  });

  it('a symbolic link in /workspace pointing outside it', async () => {
    await box.call('sandbox_exec', {
      command: 'ln -sfn /etc /workspace/etc-link && ln -sfn /etc/passwd /workspace/passwd-link',
    });
    const read = await box.call('sandbox_fs_read', { path: 'passwd-link' });
    const write = await box.call('sandbox_fs_write', { files: [{ path: 'etc-link/pwned', content: 'x' }] });
    const list = await box.call('sandbox_fs_list', { path: 'etc-link' });
    for (const answer of [read, write, list]) {
      assert.equal(answer.ok, false);
      assert.match(answer.text, /leads outside \/workspace/);
    }
    observe(
      'input',
      'symlink /workspace/etc-link → /etc, read / write / list through it',
      'refused: the link leads outside /workspace',
      read.text.split('\n')[0]!,
    );
  });

  it('writing under a read-only workspace mount leaves the host folder byte-identical', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-ro-'));
    writeFileSync(join(folder, 'notes.txt'), 'mine\n');
    const before = digest(folder);
    const ro = toolbox({ folder, settings: { workspaceAccess: 'ro' } });
    try {
      await ro.call('sandbox_open', { session: 'ro', runtime: 'bash', workspace_access: 'ro' });
      const tool = await ro.call('sandbox_fs_write', {
        sandbox_id: 'ro',
        files: [{ path: 'notes.txt', content: 'changed' }],
      });
      assert.match(tool.text, /mounted read-only/);
      assert.match(tool.text, /read-write workspace access/);
      const shell = await ro.call('sandbox_exec', {
        sandbox_id: 'ro',
        command: 'echo x > notes.txt; rm -f notes.txt; touch new',
      });
      assert.match(shell.text, /Read-only file system|Permission denied/);
      assert.equal(digest(folder), before);
      observe(
        'input',
        'writes under a read-only workspace (tool and shell)',
        'refused with how to get write access; host folder byte-identical',
        tool.text.split('\n')[0]!,
      );
    } finally {
      await ro.dispose();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('reaching the network with the network off', async () => {
    const docker = new Docker(testEngine().endpoint.options);
    // A test server on the engine's bridge network (not one of ours): the sandbox must not reach it.
    const server = await docker.createContainer({
      Image: TEST_IMAGES.python,
      Cmd: ['python3', '-m', 'http.server', '8000'],
      HostConfig: { AutoRemove: false },
    });
    try {
      await server.start();
      const ip = (await server.inspect()).NetworkSettings.Networks.bridge!.IPAddress;
      const answer = await box.call('sandbox_run', {
        code: `import os, socket\nprint(sorted(os.listdir("/sys/class/net")))\ntry:\n    socket.create_connection(("${ip}", 8000), timeout=3)\n    print("CONNECTED")\nexcept OSError as error:\n    print("refused:", error)`,
      });
      assert.match(answer.text, /\['lo'\]/);
      assert.match(answer.text, /refused: .*(unreachable|Network)/i);
      assert.doesNotMatch(answer.text, /CONNECTED/);
      observe(
        'code',
        `connect to a test server on the engine's bridge (${ip}:8000)`,
        'only loopback exists; the connect fails',
        /refused: .*/.exec(answer.text)?.[0] ?? '',
      );
    } finally {
      await server.remove({ force: true });
    }
  });

  it('gaining root or capabilities', async () => {
    const script = [
      'id -u',
      'grep CapEff /proc/self/status',
      'python3 -c "import os; os.setuid(0)" 2>&1 | tail -1',
      'su -c id root </dev/null 2>&1 | tail -1',
      'sudo id 2>&1 | tail -1',
      'unshare -r id 2>&1 | tail -1',
      'mkdir -p /tmp/m && mount -t tmpfs none /tmp/m 2>&1 | tail -1',
      'python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)" 2>&1 | tail -1',
      '(echo b > /proc/sysrq-trigger) 2>&1 | tail -1',
      'modprobe dummy 2>&1 | tail -1; insmod /nonexistent.ko 2>&1 | tail -1',
      'for f in $(find / -xdev -perm -4000 -type f 2>/dev/null | head -5); do $f --version >/dev/null 2>&1; done; id -u',
    ].join('; echo ---; ');
    const answer = await box.call('sandbox_run', { runtime: 'bash', code: script });
    const parts = answer.text.split('---').map((part) => part.trim());
    assert.doesNotMatch(answer.text, /^uid=0|\n0\n/);
    assert.match(answer.text, /CapEff:\s+0000000000000000/);
    assert.match(answer.text, /Operation not permitted|PermissionError/);
    assert.match(answer.text, /not found|Authentication failure|must be run from a terminal|su:/);
    assert.doesNotMatch(answer.text, /uid=0\(root\)/);
    observe(
      'code',
      'setuid(0), su, sudo, unshare -r, mount, raw socket, sysrq, modprobe, setuid binaries',
      'all refused: non-root, no capabilities, no new privileges',
      parts
        .slice(2, 8)
        .map((part) => part.split('\n').pop())
        .join(' / ')
        .slice(0, 160),
    );
  });

  it('finding the Docker socket, and host variables that were not injected', async () => {
    process.env.AGENT_SANDBOX_HOSTILE_CANARY = 'host-only-canary-93e1';
    const answer = await box.call('sandbox_run', {
      runtime: 'bash',
      code: 'ls -la /var/run/docker.sock /run/docker.sock 2>&1; find / -xdev -name "*.sock" 2>/dev/null | head; env; cat /proc/1/environ 2>&1 | tr "\\0" "\\n"',
    });
    delete process.env.AGENT_SANDBOX_HOSTILE_CANARY;
    assert.match(answer.text, /No such file or directory/);
    assert.doesNotMatch(answer.text, /docker\.sock\s*$/m);
    assert.doesNotMatch(answer.text, /host-only-canary|DOCKER_HOST/);
    observe(
      'code',
      'look for the Docker socket; read host variables not injected',
      'no socket anywhere; only injected variables visible',
      'no docker.sock; canary variable absent',
    );
  });

  it('a secret printed back plainly, base64-encoded and split across lines', async () => {
    const answer = await box.call('sandbox_run', {
      code: 'import os, base64\ns = os.environ["API_TOKEN"]\nprint(s)\nprint(base64.b64encode(s.encode()).decode())\nprint("\\n".join(s[i:i + 3] for i in range(0, len(s), 3)))',
    });
    for (const form of [
      'tok-5f2b9e8c7d1a4e60',
      Buffer.from('tok-5f2b9e8c7d1a4e60').toString('base64'),
      'tok\n-5f\n2b9',
    ])
      assert.ok(!answer.text.includes(form), JSON.stringify(form));
    assert.match(answer.text, /\[secret:API_TOKEN\]/);
    observe(
      'code',
      'print an injected secret plainly, in base64, split every 3 characters',
      'every form replaced by [secret:API_TOKEN]',
      answer.text.split('\n').slice(2, 5).join(' '),
    );
  });

  it('a tar bomb through staging', async () => {
    const archive = pack();
    const chunks: Buffer[] = [];
    archive.on('data', (chunk: unknown) => void chunks.push(chunk as Buffer));
    const done = new Promise<void>((resolve) => archive.on('end', () => resolve()));
    archive.entry({ name: 'bomb.bin', size: 200 * 1024 * 1024 }, Buffer.alloc(200 * 1024 * 1024));
    archive.finalize();
    await done;
    const gz = gzipSync(Buffer.concat(chunks), { level: 9 });
    const stored = await box.store.put(gz, { name: 'bomb.tar.gz' });
    const staged = await box.call('sandbox_stage_file', { key: stored.key, path: 'bomb.tar.gz' });
    assert.ok(staged.ok, staged.text);
    const unpack = await box.call('sandbox_exec', {
      command: 'tar xzf bomb.tar.gz; echo tar=$?; ls -l bomb.bin | cut -d" " -f5',
    });
    // GNU tar stops writing at the limit (sometimes without saying so): the file never grows past it.
    assert.match(unpack.text, /\b67108864\b/);
    observe(
      'input',
      `tar bomb: ${Math.round(gz.length / 1024)} KiB gzip of 200 MiB, staged then unpacked`,
      'staged as the small file it is; unpacking stops at the per-file cap',
      unpack.text.split('\n').slice(1, 3).join(' '),
    );
  });
});
