import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { openSession } from './namedSession';
import { TEST_IMAGES, requireEngine, testEngine } from './harness';

const run = promisify(execFile);
const CLI = resolve(__dirname, '../../dist/cli.js');

/** A digest of every file's path, mode and bytes under a folder. */
function treeDigest(dir: string): string {
  const hash = createHash('sha256');
  const walk = (path: string) => {
    for (const name of readdirSync(path).sort()) {
      const full = join(path, name);
      const stat = statSync(full);
      hash.update(`${full}\0${stat.mode}\0`);
      if (stat.isDirectory()) walk(full);
      else hash.update(readFileSync(full));
    }
  };
  walk(dir);
  return hash.digest('hex');
}

describe('workspace access against a real engine', function () {
  before(async function () {
    await requireEngine(this);
  });

  it('a read-only workspace refuses every write and stays byte-identical on the host', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-ro-'));
    chmodSync(folder, 0o755); // readable by the sandbox user, as a project folder is
    mkdirSync(join(folder, 'src'));
    writeFileSync(join(folder, 'src', 'main.py'), 'print("host")\n');
    writeFileSync(join(folder, 'data.bin'), Buffer.from([0, 1, 2, 255]));
    const before = treeDigest(folder);
    const { sandbox } = await openSession(testEngine(), resolveSpec({ runtime: 'bash', workspaceAccess: 'ro' }), {
      name: 'ro-digest',
      workspaceFolder: folder,
    });
    try {
      await assert.rejects(
        sandbox.writeFiles([{ path: 'src/main.py', content: 'print("changed")' }]),
        (error: unknown) => SandboxError.is(error, 'read-only'),
      );
      await assert.rejects(sandbox.deletePath('data.bin'), (error: unknown) => SandboxError.is(error, 'read-only'));
      const shell = await sandbox.exec({
        command: 'echo x >> src/main.py; rm -f data.bin; touch new; chmod 777 src; mkdir d',
      });
      assert.equal(shell.outcome, 'error');
      assert.match(shell.stderr, /Read-only file system|Permission denied/);
      assert.equal((await sandbox.readFile('src/main.py')).content, 'print("host")\n');
    } finally {
      await sandbox.close();
    }
    assert.equal(treeDigest(folder), before);
    rmSync(folder, { recursive: true, force: true });
  });

  it('files written in a read-write workspace appear on the host, owned by the host user', async function () {
    // A rootful Podman's socket is root's alone (no group to join, as Docker's docker group): the
    // unprivileged user this case runs as cannot reach it, so the case is Docker's.
    const probe = testEngine();
    const podman = (await probe.info()).product.includes('Podman');
    await probe.dispose();
    if (podman) this.skip();
    // Run the CLI as an unprivileged host user (as a developer would), even when the suite runs as root.
    const uid = process.getuid!() === 0 ? 4242 : process.getuid!();
    const gid = process.getuid!() === 0 ? 4242 : process.getgid!();
    const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-rw-'));
    chownSync(folder, uid, gid);
    let prefix: string[] = [];
    if (process.getuid!() === 0) {
      const dockerGroup = readFileSync('/etc/group', 'utf8')
        .split('\n')
        .find((line) => line.startsWith('docker:'))
        ?.split(':')[2];
      assert.ok(dockerGroup, 'the docker group exists');
      prefix = ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, `--groups=${dockerGroup}`, '--'];
    }
    // The checkout may sit in a folder that user cannot enter (mktemp -d gives 0700): it runs a copy of the built CLI.
    const cliDir = mkdtempSync(join(tmpdir(), 'agent-sandbox-cli-'));
    chmodSync(cliDir, 0o755);
    const cliCopy = join(cliDir, 'cli.js');
    // The launcher and the bundle it loads (dist/cli-main.js, beside it).
    for (const file of ['cli.js', 'cli-main.js']) {
      copyFileSync(join(dirname(CLI), file), join(cliDir, file));
      chmodSync(join(cliDir, file), 0o644);
    }
    const cli = (...args: string[]) =>
      run(
        prefix[0] ?? process.execPath,
        [
          ...prefix.slice(1),
          ...(prefix.length ? [process.execPath] : []),
          cliCopy,
          args[0]!,
          '--folder',
          folder,
          ...args.slice(1),
        ],
        { env: { ...process.env, HOME: folder, AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash } },
      );
    try {
      await cli('open', '--session', 'rw-owner', '--runtime', 'bash', '--workspace', 'rw');
      await cli(
        'exec',
        '--session',
        'rw-owner',
        '--',
        'sh',
        '-c',
        'id -u > written.txt; mkdir -p made/deeper && echo hi > made/deeper/f',
      );
      const written = statSync(join(folder, 'written.txt'));
      assert.equal(
        readFileSync(join(folder, 'written.txt'), 'utf8').trim(),
        String(uid),
        'the sandbox ran as the host user',
      );
      assert.equal(written.uid, uid);
      assert.equal(written.gid, gid);
      assert.equal(statSync(join(folder, 'made', 'deeper', 'f')).uid, uid);
    } finally {
      await cli('close', '--all').catch(() => undefined);
      rmSync(folder, { recursive: true, force: true });
      rmSync(cliDir, { recursive: true, force: true });
    }
  });
});
