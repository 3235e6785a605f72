import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecResult, Sandbox } from '../../src/core/engine/engine';
import { Redactor, redactExecResult } from '../../src/core/secrets/redaction';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { collectSecrets } from '../../src/core/secrets/secrets';
import { openSession } from './namedSession';
import { requireEngine, testEngine } from './harness';

// Long enough for base64 to wrap its output at 76 columns; "/+~" give base64 its rarer characters.
const SECRET = `sk-test-${randomBytes(24).toString('hex')}-Zz/+~`;
const SECOND = `tok_${randomBytes(8).toString('hex')}`;

/** Every way the program below prints the secret, as it would look unredacted. */
function encodings(value: string): string[] {
  const bytes = Buffer.from(value);
  const forms = [value, bytes.toString('hex'), bytes.toString('base64url')];
  for (const prefix of ['', 'x', 'xy']) {
    const encoded = Buffer.concat([Buffer.from(prefix), bytes]).toString('base64');
    // The characters that hold only bits of the value.
    forms.push(encoded.slice(Math.ceil((8 * prefix.length) / 6), Math.floor((8 * (prefix.length + bytes.length)) / 6)));
  }
  return forms;
}

describe('secrets in a sandbox against a real engine', function () {
  let sandbox: Sandbox;
  let secrets: Record<string, string>;
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-secrets-'));
  const saved = { ...process.env };

  before(async function () {
    await requireEngine(this);
    process.env.AGENT_SANDBOX_ENV_API_KEY = SECRET;
    process.env.STN_CODE_SECOND_TOKEN = SECOND;
    process.env.AGENT_SANDBOX_TEST_NOT_INJECTED = 'xyz';
    // As the service does it: the prefixed host variables become the sandbox's environment.
    secrets = collectSecrets(process.env);
    sandbox = (
      await openSession(testEngine(), resolveSpec({ runtime: 'bash', timeoutSeconds: 30, env: secrets }), {
        name: 'engine-test-secrets',
        workspaceFolder: folder,
      })
    ).sandbox;
  });

  after(async () => {
    process.env = saved;
    await sandbox?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('redacts a secret printed plainly, in base64 at every offset, in hex and folded across lines', async () => {
    const program = [
      'echo "plain: $API_KEY and $SECOND_TOKEN."',
      'echo "b64 at 0:"; printf "%s" "$API_KEY" | base64',
      'echo "b64 at 1:"; printf "x%s" "$API_KEY" | base64',
      'echo "b64 at 2:"; printf "xy%s" "$API_KEY" | base64 -w 0; echo',
      'echo "b64url:"; printf "%s" "$API_KEY" | basenc --base64url -w 0; echo',
      'echo "hex:"; printf "%s" "$API_KEY" | od -An -tx1 -v | tr -d " \\n"; echo',
      'echo "od:"; printf "%s" "$API_KEY" | od -An -tx1 -v',
      'echo "fold 5:"; printf "%s\\n" "$API_KEY" | fold -w 5',
      'echo "fold 3 crlf:"; printf "%s\\n" "$API_KEY" | fold -w 3 | sed "s/\\$/\\r/"',
      'echo "env:"; env | sort',
      'echo "to stderr: $API_KEY" >&2',
      'echo done',
    ].join('\n');
    const raw = await sandbox.exec({ command: program });
    assert.equal(raw.outcome, 'ok', raw.stderr);
    // The sandbox really printed the secret in each form: the test would prove nothing otherwise.
    const flatRaw = raw.stdout.replace(/[\r\n ]/g, '');
    for (const form of encodings(SECRET)) assert.ok(flatRaw.includes(form), `the program did not print ${form}`);

    const result: ExecResult = redactExecResult(raw, new Redactor(secrets));
    const flat = result.stdout.replace(/[\r\n ]/g, '');
    for (const form of [...encodings(SECRET), ...encodings(SECOND)]) {
      assert.ok(!flat.includes(form), `"${form}" survived in:\n${result.stdout}`);
      assert.ok(!result.stderr.includes(form), `"${form}" survived in stderr`);
    }

    // The rest of the output is intact.
    const lines = result.stdout.split('\n');
    assert.equal(lines[0], 'plain: [secret:API_KEY] and [secret:SECOND_TOKEN].');
    for (const label of [
      'b64 at 0:',
      'b64 at 1:',
      'b64 at 2:',
      'b64url:',
      'hex:',
      'od:',
      'fold 5:',
      'fold 3 crlf:',
      'env:',
      'done',
    ])
      assert.ok(lines.includes(label), `"${label}" is missing`);
    assert.equal(lines[lines.indexOf('b64 at 0:') + 1], '[secret:API_KEY]');
    assert.equal(lines[lines.indexOf('b64url:') + 1], '[secret:API_KEY]');
    assert.equal(lines[lines.indexOf('hex:') + 1], '[secret:API_KEY]');
    assert.equal(lines[lines.indexOf('fold 5:') + 1], '[secret:API_KEY]');
    assert.equal(lines[lines.indexOf('fold 3 crlf:') + 1], '[secret:API_KEY]\r');
    assert.ok(
      lines.includes('API_KEY=[secret:API_KEY]') && lines.includes('SECOND_TOKEN=[secret:SECOND_TOKEN]'),
      result.stdout,
    );
    assert.ok(lines.includes('HOME=/home/sandbox') || lines.some((line) => line.startsWith('HOME=')));
    assert.equal(result.stderr, 'to stderr: [secret:API_KEY]\n');
  });

  it('passes only prefixed host variables, with the prefix stripped', async () => {
    const { stdout } = await sandbox.exec({ command: 'env' });
    const names = stdout.split('\n').map((line) => line.split('=')[0]);
    assert.ok(names.includes('API_KEY') && names.includes('SECOND_TOKEN'), stdout);
    assert.ok(!stdout.includes('AGENT_SANDBOX_TEST_NOT_INJECTED') && !stdout.includes('=xyz'), stdout);
    assert.ok(!stdout.includes('AGENT_SANDBOX_ENV_') && !stdout.includes('STN_CODE_'), stdout);
    // Nothing else of the host's environment either.
    for (const name of ['PATH', 'HOME', 'USER', 'PWD']) {
      const host = process.env[name];
      if (host && host.length > 6) assert.ok(!stdout.includes(`${name}=${host}\n`), `${name} came from the host`);
    }
  });
});
