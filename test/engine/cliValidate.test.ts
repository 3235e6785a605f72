// `agent-sandbox validate` as CI runs it: the built CLI on real files, with no engine in reach.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CLI, runCliText } from './cliRunner';

const FIXTURES = resolve(__dirname, '../fixtures/prompts');

function validate(args: string[], cwd: string) {
  // An engine address where nothing answers: validating must not need one.
  return runCliText(['validate', ...args], { cwd, env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock' } });
}

describe('agent-sandbox validate (the built CLI)', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-validate-'));
  after(() => rmSync(folder, { recursive: true, force: true }));

  it("passes the design's examples (exit 0), printing their one warning", async () => {
    const result = await validate(['seed-examples'], FIXTURES);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      result.stdout,
      'seed-examples/full-configuration.prompt:14:3: warning: npm_packages need Node.js: make sure the image python:3.11-slim has npm, or use runtime: node\n',
    );
    assert.equal(result.stderr, 'agent-sandbox: checked 12 file(s): 0 error(s), 1 warning(s)\n');
  });

  it('passes every .prompt file of Station, found by a glob', async () => {
    const result = await validate(['station-prompts/**/*.prompt'], FIXTURES);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stderr, /checked 133 file\(s\): 0 error\(s\)/);
  });

  it('fails a broken file with exit 1 and file:line:col: error: message', async () => {
    writeFileSync(
      join(folder, 'broken.prompt'),
      '---\nmodel: openai/gpt-4o\nsandbox:\n  runtime: pyhton\n  alow_network: true\n---\nHello\n',
    );
    writeFileSync(join(folder, 'fine.prompt'), '---\nsandbox: python\n---\nHello\n');
    const result = await validate(['broken.prompt', 'fine.prompt'], folder);
    assert.equal(result.code, 1);
    assert.equal(
      result.stdout,
      'broken.prompt:4:12: error: sandbox.runtime "pyhton" is not one of python, node, bash, linux; did you mean python?\n' +
        'broken.prompt:5:3: warning: Unknown key "alow_network" in the sandbox block; did you mean allow_network?\n',
    );
    assert.equal(result.stderr, 'agent-sandbox: checked 2 file(s): 1 error(s), 1 warning(s)\n');
    const json = await validate(['--json', '.'], folder);
    assert.equal(json.code, 1);
    const rows = JSON.parse(json.stdout) as { file: string; line: number; column: number; severity: string }[];
    assert.deepEqual(
      rows.map((row) => `${row.file}:${row.line}:${row.column}:${row.severity}`),
      ['broken.prompt:4:12:error', 'broken.prompt:5:3:warning'],
    );
  });

  it('skips a FIFO named on the command line, saying so, instead of blocking on it', async () => {
    execFileSync('mkfifo', [join(folder, 'pipe.prompt')]);
    writeFileSync(join(folder, 'real.prompt'), '---\nsandbox: python\n---\nHello\n');
    // Killed only if it blocks for good (the old behaviour): not a timing assertion.
    const run = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
      (resolveRun, fail) => {
        const child = spawn(process.execPath, [CLI, 'validate', 'pipe.prompt', 'real.prompt'], {
          cwd: folder,
          stdio: ['ignore', 'pipe', 'pipe'],
          timeout: 30_000,
          killSignal: 'SIGKILL',
        });
        let stderr = '';
        child.stderr.on('data', (chunk) => (stderr += chunk));
        child.on('error', fail);
        child.on('close', (code, signal) => resolveRun({ code, signal, stderr }));
      },
    );
    assert.equal(run.signal, null, `validate blocked on the FIFO and was killed: ${run.stderr}`);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      run.stderr,
      'agent-sandbox: skipped "pipe.prompt": it is not a regular file (a FIFO)\nagent-sandbox: checked 1 file(s): 0 error(s), 0 warning(s)\n',
    );
    const only = await validate(['pipe.prompt'], folder);
    assert.equal(only.code, 2, 'nothing was checked');
    assert.match(only.stderr, /skipped "pipe\.prompt"/);
    rmSync(join(folder, 'pipe.prompt'));
  });

  it('exits 0 with only warnings, and 2 when an argument names nothing', async () => {
    writeFileSync(join(folder, 'warned.prompt'), '---\nsandbox:\n  colour: blue\n---\n');
    assert.equal((await validate(['warned.prompt'], folder)).code, 0);
    const missing = await validate(['agents/**/*.prompt'], folder);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /No file matches agents\/\*\*\/\*\.prompt/);
  });
});
