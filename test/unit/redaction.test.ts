import assert from 'node:assert/strict';
import type { ExecResult, FileContent } from '../../src/core/engine/engine';
import { Redactor, redactExecResult, redactFileContent, redactText } from '../../src/core/secrets/redaction';

const KEY = 'sk-live-7Gq2/+Zx~9Rw';
const SECRETS: Record<string, string> = {
  ascii: KEY,
  // Bytes whose base64 holds "+" and "/" (and "-" and "_" when url-safe).
  symbols: '?>?>~~~\u00ff\u00fe',
  unicode: 'pässwört-€-密码',
  emoji: '🔑key🔑',
};

const base64 = (data: Buffer) => data.toString('base64');
const base64url = (data: Buffer) => data.toString('base64url');

/** `encoded` holds `prefixBytes` bytes, then the value's `valueBytes`: only characters with no bit of the value may be left. */
function assertBase64Redacted(
  encoded: string,
  redacted: string,
  prefixBytes: number,
  valueBytes: number,
  name: string,
): void {
  const flat = redacted.replace(/\r?\n/g, '');
  const original = encoded.replace(/\r?\n/g, '').replace(/=+$/, '');
  const label = `[secret:${name}]`;
  const at = flat.indexOf(label);
  assert.ok(at >= 0, `no label in ${redacted} (from ${encoded})`);
  assert.equal(flat.indexOf(label, at + 1), -1, `two labels in ${redacted}`);
  const before = flat.slice(0, at);
  const after = flat.slice(at + label.length).replace(/=+$/, '');
  // Exactly the characters before the value's first bit and after its last bit are kept: none leaks, nothing else goes.
  assert.equal(before, original.slice(0, Math.floor((8 * prefixBytes) / 6)), `before the label in ${redacted}`);
  assert.equal(
    after,
    original.slice(Math.ceil((8 * (prefixBytes + valueBytes)) / 6)),
    `after the label in ${redacted}`,
  );
}

describe('redaction', () => {
  const redactor = new Redactor(SECRETS);

  it('replaces the plain value and changes nothing else', () => {
    const text = `config: key=${KEY}\nagain:${KEY}${KEY}\nnear misses: sk-live-7Gq2 ${KEY.slice(1)} ${KEY.toUpperCase()}\n`;
    assert.equal(
      redactor.redact(text),
      `config: key=[secret:ascii]\nagain:[secret:ascii][secret:ascii]\nnear misses: sk-live-7Gq2 ${KEY.slice(1)} ${KEY.toUpperCase()}\n`,
    );
    for (const [name, value] of Object.entries(SECRETS))
      assert.equal(redactText(`<${value}>`, redactor), `<[secret:${name}]>`);
    const untouched = 'nothing secret here: sk-live, 7Gq2, ?>?>, pässwört, 🔑\r\n\t\u0000 end';
    assert.equal(redactor.redact(untouched), untouched);
  });

  it('finds base64 at each of the three offsets, standard and url-safe, padded or not', () => {
    for (const [name, value] of Object.entries(SECRETS)) {
      const bytes = Buffer.from(value, 'utf8');
      for (const prefix of ['', 'x', 'xy', 'xyz', 'wxyz', 'vwxyz']) {
        for (const suffix of ['', '!', '!?', '!?.', ' and more text after it']) {
          const data = Buffer.concat([Buffer.from(prefix), bytes, Buffer.from(suffix)]);
          for (const encoded of [base64(data), base64url(data), base64(data).replace(/=+$/, '')]) {
            assertBase64Redacted(encoded, redactor.redact(encoded), prefix.length, bytes.length, name);
          }
        }
      }
    }
  });

  it('finds base64 wrapped at 76 columns, as base64 and PEM print it', () => {
    const long = `-----${'k3Y'.repeat(40)}-----`;
    const wrapped = new Redactor({ LONG: long });
    for (const prefix of ['', 'a', 'ab']) {
      const data = Buffer.from(`${prefix}${long}\n`);
      for (const breakWith of ['\n', '\r\n']) {
        const encoded = base64(data)
          .match(/.{1,76}/g)!
          .join(breakWith);
        assertBase64Redacted(encoded, wrapped.redact(encoded), prefix.length, Buffer.byteLength(long), 'LONG');
      }
    }
  });

  it('finds hex in either case, run together or with separators', () => {
    for (const [name, value] of Object.entries(SECRETS)) {
      const hex = Buffer.from(value, 'utf8').toString('hex');
      const pairs = hex.match(/../g)!;
      const forms = [
        hex,
        hex.toUpperCase(),
        pairs.join(' '),
        pairs.join(':'),
        pairs.map((pair) => `\\x${pair}`).join(''),
        pairs.map((pair) => `%${pair.toUpperCase()}`).join(''),
        // od -An -tx1: 16 bytes a line, each line indented.
        pairs.reduce((out, pair, i) => out + (i % 16 === 0 && i ? '\n ' : ' ') + pair, ''),
        // xxd -p: 30 bytes (60 digits) a line.
        hex.match(/.{1,60}/g)!.join('\n'),
      ];
      for (const form of forms) {
        const redacted = redactor.redact(`hex: ${form} (end)`);
        assert.match(
          redacted,
          new RegExp(`^hex: \\s?(\\\\x|%)?\\[secret:${name}\\] \\(end\\)$`),
          `${form} -> ${redacted}`,
        );
      }
    }
  });

  it('finds the value split across lines every 1 to 10 characters, with \\n or \\r\\n', () => {
    for (const [name, value] of Object.entries(SECRETS)) {
      const chars = [...value];
      for (let every = 1; every <= 10; every++) {
        for (const breakWith of ['\n', '\r\n']) {
          const lines: string[] = [];
          for (let i = 0; i < chars.length; i += every) lines.push(chars.slice(i, i + every).join(''));
          const text = `before ${lines.join(breakWith)} after${breakWith}`;
          assert.equal(redactor.redact(text), `before [secret:${name}] after${breakWith}`, JSON.stringify(text));
        }
      }
    }
  });

  it('finds the JSON-escaped and the percent-encoded value', () => {
    const value = 'p@ss "quoted" \\ / ü';
    const special = new Redactor({ PASSWORD: value });
    assert.equal(special.redact(JSON.stringify({ password: value })), '{"password":"[secret:PASSWORD]"}');
    assert.equal(
      special.redact(`postgres://me:${encodeURIComponent(value)}@db/x`),
      'postgres://me:[secret:PASSWORD]@db/x',
    );
    assert.equal(
      special.redact(`postgres://me:${encodeURIComponent(value).toLowerCase()}@db/x`),
      'postgres://me:[secret:PASSWORD]@db/x',
    );
  });

  it('covers overlapping and nested secrets whole', () => {
    const both = new Redactor({
      A: 'abcdef12',
      B: 'ef12ghij',
      LONG: 'password123',
      SHORT: 'password',
      SAME1: 'same-value',
      SAME2: 'same-value',
    });
    assert.equal(both.redact('x abcdef12ghij y'), 'x [secret:A,B] y');
    assert.equal(both.redact('password123 and password'), '[secret:LONG] and [secret:SHORT]');
    assert.equal(both.redact('is same-value'), 'is [secret:SAME1,SAME2]');
    const periodic = new Redactor({ P: 'abcabc' });
    assert.equal(periodic.redact('-abcabcabc-'), '-[secret:P]-');
  });

  it('ignores values shorter than 4 characters', () => {
    const short = new Redactor({ A: 'a', PIN: '123', EMPTY: '', OK: '1234' });
    assert.equal(short.redact('a 123 and 1234 and YQ== 313233'), 'a 123 and [secret:OK] and YQ== 313233');
    assert.equal(new Redactor({ A: 'abc' }).isEmpty, true);
  });

  it('handles a long value (a 32 KiB key) quickly and exactly', () => {
    const long = Array.from({ length: 4096 }, (_, i) => `k${(i * 7919) % 10007}`)
      .join('')
      .slice(0, 32 * 1024);
    const big = new Redactor({ KEY: long });
    assert.equal(big.redact(`a${long}b`), 'a[secret:KEY]b');
    assert.equal(big.redact(`a${long.slice(0, -1)}b`), `a${long.slice(0, -1)}b`);
    const encoded = base64(Buffer.from(`xy${long}`));
    assertBase64Redacted(encoded, big.redact(encoded), 2, long.length, 'KEY');
  });

  it('redacts a result: stdout and stderr, including a value cut at the output cap, and hint and notices', () => {
    const marker =
      '\n[stdout truncated: showing the first 1.0 KiB of 2.0 KiB. Write large output to a file and read the part you need.]';
    const result: ExecResult = {
      outcome: 'error',
      exitCode: 1,
      stdout: `ok ${KEY}\nlast: ${KEY.slice(0, 9)}${marker}`,
      stderr: `Error: bad key ${KEY} (ends sk-l)`,
      stdoutBytes: 2048,
      stderrBytes: 40,
      stdoutTruncated: true,
      stderrTruncated: false,
      durationMs: 12,
      hint: `The command exited with code 1; ${KEY}`,
      notices: [`note ${KEY}`],
    };
    assert.deepEqual(redactExecResult(result, redactor), {
      ...result,
      stdout: `ok [secret:ascii]\nlast: [secret:ascii]${marker}`,
      stderr: 'Error: bad key [secret:ascii] (ends sk-l)',
      hint: 'The command exited with code 1; [secret:ascii]',
      notices: ['note [secret:ascii]'],
    });
    // Output that was not cut keeps a start of the value at its end: it is not the value.
    assert.equal(
      redactExecResult({ ...result, stdout: 'ends sk-live-7', stdoutTruncated: false }, redactor).stdout,
      'ends sk-live-7',
    );
    assert.equal(redactExecResult(result, new Redactor({})), result);
  });

  it('redacts file content: text, base64 text, and binary in place', () => {
    const file = (content: string, encoding: FileContent['encoding'], truncated = false): FileContent => ({
      path: '/workspace/f',
      content,
      encoding,
      size: 100,
      truncated,
    });
    assert.deepEqual(redactFileContent(file(`KEY=${KEY}\n`, 'utf8'), redactor), file('KEY=[secret:ascii]\n', 'utf8'));
    assert.deepEqual(
      redactFileContent(file(`head ${KEY.slice(0, 6)}`, 'utf8', true), redactor),
      file('head [secret:ascii]', 'utf8', true),
    );

    const asBase64 = redactFileContent(file(base64(Buffer.from(`é ${KEY}`)), 'base64'), redactor);
    assert.equal(Buffer.from(asBase64.content, 'base64').toString(), 'é [secret:ascii]');
    assert.equal(asBase64.encoding, 'base64');

    const binary = Buffer.concat([
      Buffer.from([0xff, 0x00, 0xfe]),
      Buffer.from(KEY),
      Buffer.from([0x80]),
      Buffer.from(Buffer.from(KEY).toString('hex')),
    ]);
    const masked = Buffer.from(redactFileContent(file(base64(binary), 'base64'), redactor).content, 'base64');
    assert.equal(masked.length, binary.length);
    assert.deepEqual([...masked.subarray(0, 3)], [0xff, 0x00, 0xfe]);
    assert.equal(masked.subarray(3, 3 + KEY.length).toString(), '*'.repeat(KEY.length));
    assert.equal(masked[3 + KEY.length], 0x80);
    assert.ok(!masked.includes(Buffer.from(KEY)) && !masked.includes(Buffer.from(Buffer.from(KEY).toString('hex'))));
    const unicodeBinary = Buffer.concat([Buffer.from([0xff]), Buffer.from(SECRETS.unicode!, 'utf8')]);
    assert.ok(
      !Buffer.from(redactFileContent(file(base64(unicodeBinary), 'base64'), redactor).content, 'base64').includes(
        Buffer.from(SECRETS.unicode!, 'utf8'),
      ),
    );

    const clean = file(base64(Buffer.from([0xff, 1, 2, 3])), 'base64');
    assert.equal(redactFileContent(clean, redactor), clean);
  });
});

describe('redaction of a value hidden between invisible characters or encoded differently', () => {
  const SECRET = 'hunter2-Pa55word';
  const redactor = new Redactor({ API_KEY: SECRET });
  const interleave = (value: string, junk: string) => [...value].join(junk);

  for (const [label, junk] of [
    ['ANSI colour escapes', '\x1b[31m'],
    ['ANSI escapes with parameters', '\x1b[1;38;5;208m'],
    ['carriage returns', '\r'],
    ['zero-width spaces', '\u200b'],
    ['zero-width joiners and BOMs', '\u200d\ufeff'],
    ['OSC title sequences', '\x1b]0;x\x07'],
    ['backspaces', '\b'],
  ] as const) {
    it(`finds it with ${label} between its characters`, () => {
      const text = `token: ${interleave(SECRET, junk)} done`;
      const redacted = redactor.redact(text);
      assert.match(redacted, /^token: \[secret:API_KEY\] done$/, JSON.stringify(redacted));
    });
  }

  it('finds its hex form with escapes between the bytes', () => {
    const hex = Buffer.from(SECRET).toString('hex');
    const text = `hex ${interleave(hex, '\x1b[0m')} end`;
    assert.equal(redactor.redact(text), 'hex [secret:API_KEY] end');
  });

  it('finds it fully percent-encoded, and with a mix of encoded and plain characters', () => {
    const all = [...Buffer.from(SECRET)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
    assert.equal(redactor.redact(`q=${all}&x=1`), 'q=[secret:API_KEY]&x=1');
    const mixed = [...SECRET].map((char, i) => (i % 2 ? `%${char.charCodeAt(0).toString(16)}` : char)).join('');
    assert.equal(redactor.redact(`q=${mixed}`), 'q=[secret:API_KEY]');
  });

  it('leaves text with escapes but no secret exactly as it was', () => {
    const text = '\x1b[32mok\x1b[0m\r\nnext\u200b line';
    assert.equal(redactor.redact(text), text);
  });
});
