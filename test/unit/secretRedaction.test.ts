/**
 * The one redactor of every output path: `[secret:NAME]`, values cut between the chunks of a stream
 * (the terminal), names that share or overlap values, and the secrets a process learns from the
 * sessions it uses (also those another program opened with other secrets).
 */
import assert from 'node:assert/strict';
import type { SessionInfo } from '../../src/core/engine/engine';
import { KnownSecrets, secretsLayer, sessionSecrets } from '../../src/core/secrets/knownSecrets';
import { Redactor } from '../../src/core/secrets/redaction';
import { StreamRedactor } from '../../src/core/secrets/streamRedaction';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { parseSettings } from '../../src/core/spec/settings';
import { sessionSpec } from '../../src/core/sessions/sessionPolicy';
import { cliEnvPrefixes } from '../../src/cli/cliService';

const TOKEN = 'ghp_4fK9xQ2mZ7wR1tY8';

/** Feeds `text` to a stream redactor in the given pieces, then flushes: what the terminal shows. */
function streamed(redactor: Redactor, pieces: readonly string[]): string {
  const stream = new StreamRedactor(() => redactor);
  return pieces.map((piece) => stream.push(piece)).join('') + stream.flush();
}

function sessionWith(id: string, env: Record<string, string>, secretEnv: string[]): SessionInfo {
  const spec = resolveSpec({ mode: 'code', env, secretEnv });
  return { id, spec, env } as unknown as SessionInfo;
}

describe('secret redaction: one redactor for every output path', () => {
  it('shows a value as [secret:NAME], and a value two names hold as [secret:A,B]', () => {
    assert.equal(new Redactor({ TOKEN }).redact(`token=${TOKEN}.`), 'token=[secret:TOKEN].');
    assert.equal(new Redactor({ A: TOKEN, B: TOKEN }).redact(TOKEN), '[secret:A,B]');
  });

  it('names the longer secret when one value holds another, and both when two values overlap', () => {
    const redactor = new Redactor({ SHORT: 'xQ2mZ7wR', LONG: TOKEN });
    assert.equal(redactor.redact(`a ${TOKEN} b xQ2mZ7wR c`), 'a [secret:LONG] b [secret:SHORT] c');
    const overlapping = new Redactor({ LEFT: 'abcd1234', RIGHT: '1234wxyz' });
    assert.equal(overlapping.redact('<abcd1234wxyz>'), '<[secret:LEFT,RIGHT]>');
  });

  it('takes (name, value) pairs: one name with two values (two sessions) redacts both', () => {
    const redactor = new Redactor([
      ['TOKEN', TOKEN],
      ['TOKEN', 'other-session-value'],
    ]);
    assert.equal(redactor.redact(`${TOKEN} other-session-value`), '[secret:TOKEN] [secret:TOKEN]');
  });

  describe('a stream (the terminal)', () => {
    const redactor = new Redactor({ TOKEN });
    const text = `$ echo $TOKEN\r\n${TOKEN}\r\n$ printf %s "$TOKEN" | base64\r\n${Buffer.from(TOKEN).toString('base64')}\r\n$ `;
    const whole = redactor.redact(text);

    it('never shows a value cut between two chunks, wherever the cut is', () => {
      for (let cut = 1; cut < text.length; cut++) {
        const shown = streamed(redactor, [text.slice(0, cut), text.slice(cut)]);
        assert.ok(!shown.includes(TOKEN.slice(0, 8)), `cut at ${cut}: ${JSON.stringify(shown)}`);
        assert.equal(shown, whole, `cut at ${cut}`);
      }
    });

    it('never shows it when it arrives one character at a time', () => {
      assert.equal(streamed(redactor, [...text]), whole);
    });

    it('holds back only the tail, and shows it (redacted) once flushed', () => {
      const stream = new StreamRedactor(() => redactor);
      const long = `${'x'.repeat(1000)}\r\n`;
      const shown = stream.push(long);
      assert.ok(shown.length > 0 && shown.length < long.length, 'the start is shown at once');
      assert.ok(stream.holding);
      assert.equal(shown + stream.flush(), long);
      // A value being typed out when the stream pauses: its start counts as the value.
      stream.push(`>${TOKEN.slice(0, 10)}`);
      assert.equal(stream.flush(), '>[secret:TOKEN]');
    });

    it('passes everything at once when there are no secrets', () => {
      const stream = new StreamRedactor(() => new Redactor());
      assert.equal(stream.push('abc'), 'abc');
      assert.equal(stream.holding, false);
    });
  });

  describe('the secrets a process knows', () => {
    it('injects the host secrets, marked as secrets by name, and redacts them', () => {
      const secrets = new KnownSecrets(() => ({ TOKEN }));
      assert.deepEqual(secrets.env(), { TOKEN });
      assert.deepEqual(secretsLayer(secrets.env()), { env: { TOKEN }, secretEnv: ['TOKEN'] });
      assert.deepEqual(secretsLayer({}), {});
      assert.equal(secrets.redact(`x ${TOKEN}`), 'x [secret:TOKEN]');
    });

    it('learns the secrets of a session another program opened, and no other variable of it', () => {
      const secrets = new KnownSecrets();
      assert.equal(secrets.redact(TOKEN), TOKEN);
      secrets.learn(sessionWith('c1', { TOKEN, LANG_CHOICE: 'plain-value' }, ['TOKEN']));
      assert.equal(secrets.redact(`${TOKEN} plain-value`), '[secret:TOKEN] plain-value');
      // A second session with another TOKEN: both values are redacted.
      secrets.learn(sessionWith('c2', { TOKEN: 'second-token-value' }, ['TOKEN']));
      assert.equal(secrets.redact(`${TOKEN} second-token-value`), '[secret:TOKEN] [secret:TOKEN]');
    });

    it('reads the host secrets on each use', () => {
      let host: Record<string, string> = {};
      const secrets = new KnownSecrets(() => host);
      assert.equal(secrets.redact(TOKEN), TOKEN);
      host = { TOKEN };
      assert.equal(secrets.redact(TOKEN), '[secret:TOKEN]');
    });

    it('a session opened under the policy marks exactly the injected variables as secrets', () => {
      const { spec } = sessionSpec(
        { layer: { env: { MODE: 'fast-mode' } } },
        { settings: parseSettings({}), trusted: true, folder: '/ws', injectedEnv: { TOKEN } },
      );
      assert.deepEqual(spec.env, { MODE: 'fast-mode', TOKEN });
      assert.deepEqual(spec.secretEnv, ['TOKEN']);
      assert.deepEqual(sessionSecrets(spec), [['TOKEN', TOKEN]]);
    });
  });

  it('the CLI reads the prefixes VS Code passes (AGENT_SANDBOX_ENV_PREFIXES), else the default ones', () => {
    assert.deepEqual(cliEnvPrefixes({}), ['AGENT_SANDBOX_ENV_', 'STN_CODE_']);
    assert.deepEqual(cliEnvPrefixes({ AGENT_SANDBOX_ENV_PREFIXES: 'MY_,OTHER_' }), ['MY_', 'OTHER_']);
  });
});
