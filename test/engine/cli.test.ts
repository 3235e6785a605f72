import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCliText } from './cliRunner';
import { TEST_IMAGES, requireEngine } from './harness';

function cli(args: string[], options: { stdin?: string; cwd?: string } = {}) {
  return runCliText(args, {
    cwd: options.cwd,
    stdin: options.stdin ?? '',
    env: {
      AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
      AGENT_SANDBOX_IMAGE_NODE: TEST_IMAGES.node,
      AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash,
      AGENT_SANDBOX_IMAGE_LINUX: TEST_IMAGES.linux,
    },
  });
}

describe('the agent-sandbox CLI against a real engine', function () {
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-cli-'));
  before(async function () {
    await requireEngine(this);
  });
  after(async () => {
    await cli(['close', '--all', '--folder', folder]);
    rmSync(folder, { recursive: true, force: true });
  });

  it('prints 42 from a real container', async () => {
    const result = await cli(['run', '--code', 'print(6*7)']);
    assert.equal(result.stdout, '42\n', result.stderr);
    assert.equal(result.code, 0);
  });

  it('reads the code from a file or standard input', async () => {
    const fromStdin = await cli(['run', '--runtime', 'node', '-'], { stdin: 'console.log("from stdin")' });
    assert.equal(fromStdin.stdout, 'from stdin\n', fromStdin.stderr);
  });

  it("exits with the program's exit code, and 124 on timeout", async () => {
    const failed = await cli(['run', '--runtime', 'bash', '--code', 'echo bad >&2; exit 7']);
    assert.equal(failed.code, 7);
    assert.equal(failed.stderr, 'bad\n');
    const slow = await cli(['run', '--runtime', 'bash', '--timeout', '1', '--code', 'sleep 30']);
    assert.equal(slow.code, 124);
    assert.match(slow.stderr, /timeout: The command was killed after 1 s/);
  });

  it('prints one JSON object with --json', async () => {
    const result = await cli(['run', '--json', '--runtime', 'python', '--code', 'print("hi")']);
    const parsed = JSON.parse(result.stdout);
    assert.equal(parsed.outcome, 'ok');
    assert.equal(parsed.stdout, 'hi\n');
    assert.equal(parsed.exitCode, 0);
    assert.equal(parsed.engine, 'docker');
    assert.equal(typeof parsed.durationMs, 'number');
  });

  it('keeps a session between processes: open, exec, ls, close', async () => {
    const opened = await cli(['open', '--session', 'cli-test', '--runtime', 'python', '--folder', folder]);
    assert.equal(opened.code, 0, opened.stderr);
    assert.match(
      opened.stdout,
      /Opened session cli-test \(python, .*\)\n {2}limits: 512 MiB memory, 1 CPU, 256 processes, 120 s per call, 256 MiB disk and 100000 files per writable place\n {2}workspace: none, network: off/,
    );
    const reused = await cli(['open', '--session', 'cli-test', '--folder', folder]);
    assert.match(reused.stdout, /Reusing session cli-test/);

    const wrote = await cli([
      'exec',
      '--session',
      'cli-test',
      '--folder',
      folder,
      '--',
      'sh',
      '-c',
      'echo kept > note.txt',
    ]);
    assert.equal(wrote.code, 0, wrote.stderr);
    const read = await cli(['exec', '--session', 'cli-test', '--folder', folder, '--', 'cat', 'note.txt']);
    assert.equal(read.stdout, 'kept\n');
    const exitCode = await cli([
      'exec',
      '--session',
      'cli-test',
      '--folder',
      folder,
      '--',
      'python3 -c "raise SystemExit(5)"',
    ]);
    assert.equal(exitCode.code, 5);
    const piped = await cli(['exec', '-i', '--session', 'cli-test', '--folder', folder, '--', 'wc', '-c'], {
      stdin: 'four',
    });
    assert.equal(piped.stdout.trim(), '4');

    const listed = JSON.parse((await cli(['ls', '--json', '--folder', folder])).stdout);
    assert.deepEqual(
      listed.sessions.map((session: { name: string }) => session.name),
      ['cli-test'],
    );

    const closed = await cli(['close', '--session', 'cli-test', '--folder', folder]);
    assert.equal(closed.stdout, 'Closed cli-test.\n');
    const gone = await cli(['exec', '--session', 'cli-test', '--folder', folder, '--', 'true']);
    assert.equal(gone.code, 125);
    assert.match(
      gone.stderr,
      /No session named "cli-test" is open for .*\nOpen it first \(agent-sandbox open --session cli-test\)/,
    );
  });

  it('explains a missing engine and bad usage', async () => {
    // With --engine docker: auto would fall back to the virtual engine (cliVirtual.test.ts).
    const noEngine = await cli([
      'run',
      '--engine',
      'docker',
      '--engine-host',
      'unix:///tmp/agent-sandbox-no-such.sock',
      '--code',
      'print(1)',
    ]);
    assert.equal(noEngine.code, 125);
    assert.match(
      noEngine.stderr,
      /No Docker Engine answers at unix:\/\/\/tmp\/agent-sandbox-no-such\.sock.*\nStart Docker/,
    );
    const usage = await cli(['run', '--runtime', 'cobol', '--code', 'x']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--runtime must be one of python, node, bash, linux/);
  });
});
