/**
 * One path for secrets, and one redactor on every output path, through the built CLI and MCP server
 * against a real engine: a canary secret (a host variable with the prefix, a fresh random value,
 * printed below so that a failure can be searched for it) enters every sandbox the same way, from
 * `open`, `run`, `tool` and `mcp`, and is printed as [secret:TOKEN] everywhere, also by a process
 * that does not have the variable, unless a person asks with --show-secrets.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCliText } from './cliRunner';
import { TEST_IMAGES, requireEngine } from './harness';
import { resultText, startMcp } from './mcpHarness';

const CANARY = `canary-${randomBytes(12).toString('hex')}`;
const LABEL = '[secret:TOKEN]';

describe('secrets on every output path of the CLI and the MCP server (real engine)', function () {
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-cli-secrets-'));
  const state = mkdtempSync(join(tmpdir(), 'agent-sandbox-cli-secrets-state-'));
  const base = {
    AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
    AGENT_SANDBOX_IMAGE_NODE: TEST_IMAGES.node,
    AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash,
    AGENT_SANDBOX_IMAGE_LINUX: TEST_IMAGES.linux,
    AGENT_SANDBOX_POOL_SIZE: '0',
    // Its own activity files, to read back whole.
    AGENT_SANDBOX_STATE_DIR: state,
  };
  /** A shell that has the secret (the variable with the prefix). */
  const withSecret = { ...base, AGENT_SANDBOX_ENV_TOKEN: CANARY };
  /** Another shell, without it: the session's own secrets are still known. */
  const without = { ...base, AGENT_SANDBOX_ENV_TOKEN: undefined };
  const cli = (args: string[], env: NodeJS.ProcessEnv = withSecret) =>
    runCliText([args[0]!, '--folder', folder, ...args.slice(1)], { env, stdin: '' });

  before(async function () {
    await requireEngine(this);
    process.stdout.write(`      canary secret: AGENT_SANDBOX_ENV_TOKEN=${CANARY}\n`);
  });
  after(async () => {
    await cli(['close', '--all']);
    rmSync(folder, { recursive: true, force: true });
    rmSync(state, { recursive: true, force: true });
  });

  it('open injects the secret; exec prints [secret:TOKEN], from a shell with or without it; --show-secrets prints it', async () => {
    const opened = await cli(['open', '--json', '--session', 'opened', '--runtime', 'bash']);
    assert.equal(opened.code, 0, opened.stderr);
    assert.ok(!opened.stdout.includes(CANARY), `open --json printed the value: ${opened.stdout}`);
    for (const env of [withSecret, without]) {
      const exec = await cli(['exec', '--session', 'opened', '--', 'sh', '-c', 'echo $TOKEN; echo "$TOKEN" >&2'], env);
      assert.equal(exec.code, 0, exec.stderr);
      assert.equal(exec.stdout, `${LABEL}\n`);
      assert.equal(exec.stderr, `${LABEL}\n`);
      const json = await cli(['exec', '--json', '--session', 'opened', '--', 'sh', '-c', 'echo $TOKEN'], env);
      assert.equal(JSON.parse(json.stdout).stdout, `${LABEL}\n`);
    }
    const shown = await cli(
      ['exec', '--show-secrets', '--session', 'opened', '--', 'sh', '-c', 'echo $TOKEN'],
      without,
    );
    assert.equal(shown.stdout, `${CANARY}\n`, 'the value is in the session, and shown to a person who asks');
  });

  it('exec into a session the tools opened prints [secret:TOKEN]', async () => {
    const opened = await cli(['tool', 'sandbox_open', '{"session":"by-tools","runtime":"bash"}']);
    assert.equal(opened.code, 0, opened.stderr + opened.stdout);
    const exec = await cli(['exec', '--session', 'by-tools', '--', 'sh', '-c', 'echo $TOKEN'], without);
    assert.equal(exec.stdout, `${LABEL}\n`, exec.stderr);
    const shown = await cli(['exec', '--show-secrets', '--session', 'by-tools', '--', 'sh', '-c', 'echo $TOKEN']);
    assert.equal(shown.stdout, `${CANARY}\n`);
  });

  it('run injects the secret and redacts it; --show-secrets prints it', async () => {
    const run = await cli(['run', '--runtime', 'bash', '--code', 'echo "[$TOKEN]"; printf %s "$TOKEN" | base64']);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(
      !run.stdout.includes(CANARY) && !run.stdout.includes(Buffer.from(CANARY).toString('base64').slice(0, 12)),
    );
    assert.equal(run.stdout.split('\n')[0], `[${LABEL}]`);
    const shown = await cli(['run', '--show-secrets', '--runtime', 'bash', '--code', 'echo "$TOKEN"']);
    assert.equal(shown.stdout, `${CANARY}\n`);
  });

  it('tool results are redacted, and --show-secrets shows them', async () => {
    const exec = await cli(['tool', 'sandbox_exec', '{"sandbox_id":"by-tools","command":"echo $TOKEN"}'], without);
    assert.equal(exec.code, 0, exec.stderr + exec.stdout);
    assert.match(exec.stdout, /\[secret:TOKEN\]/);
    assert.ok(!exec.stdout.includes(CANARY));
    const shown = await cli([
      'tool',
      '--show-secrets',
      'sandbox_exec',
      '{"sandbox_id":"by-tools","command":"echo $TOKEN"}',
    ]);
    assert.ok(shown.stdout.includes(CANARY), shown.stdout);
  });

  it('the MCP server injects the secret and its results are redacted', async () => {
    const server = await startMcp(folder, ['--runtime', 'bash'], { env: { ...base, AGENT_SANDBOX_ENV_TOKEN: CANARY } });
    try {
      const exec = resultText(
        await server.client.callTool({ name: 'sandbox_exec', arguments: { command: 'echo "<$TOKEN>"' } }),
      );
      assert.match(exec, /<\[secret:TOKEN\]>/);
      const run = resultText(
        await server.client.callTool({ name: 'sandbox_run', arguments: { runtime: 'bash', code: 'echo "<$TOKEN>"' } }),
      );
      assert.match(run, /<\[secret:TOKEN\]>/);
      // A named session opened elsewhere (by the CLI, above) is the workspace's: its secret is redacted too.
      const shared = resultText(
        await server.client.callTool({
          name: 'sandbox_exec',
          arguments: { sandbox_id: 'opened', command: 'echo "<$TOKEN>"' },
        }),
      );
      assert.match(shared, /<\[secret:TOKEN\]>/);
      for (const text of [exec, run, shared, server.stderr()]) assert.ok(!text.includes(CANARY), text);
    } finally {
      await server.close();
      await server.exited;
    }
  });

  it('the activity file and the audit log export hold no value, even of a call whose input held it', async () => {
    const typed = await cli([
      'tool',
      'sandbox_exec',
      JSON.stringify({ sandbox_id: 'by-tools', command: `echo ${CANARY}` }),
    ]);
    assert.equal(typed.code, 0, typed.stderr + typed.stdout);
    const log = await cli(['log'], without);
    assert.equal(log.code, 0, log.stderr);
    assert.match(log.stdout, /"summary":"echo \[secret:TOKEN\]"/);
    const files = readdirSync(join(state, 'activity')).map((name) =>
      readFileSync(join(state, 'activity', name), 'utf8'),
    );
    assert.ok(files.join('').includes(LABEL));
    for (const text of [log.stdout, ...files]) assert.ok(!text.includes(CANARY), text);
  });
});
