import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { CappedOutput } from '../../src/core/results/output';
import { HelperReply, helperRequest, shellQuote } from '../../src/engines/docker/fileHelperProtocol';
import { FILE_HELPER_SCRIPT } from '../../src/engines/docker/fileScripts';
import { withSeed } from '../seed';

const NONCE = '0123456789abcdef'.repeat(2);

function reply(stdoutCap = 1 << 20, stderrCap = 1 << 16): HelperReply {
  return new HelperReply(NONCE, new CappedOutput(stdoutCap), new CappedOutput(stderrCap));
}

/** Every way to cut `bytes` in two, one-byte pieces, and random cuts. */
function cuts(bytes: Buffer, next: () => number): Buffer[][] {
  const out: Buffer[][] = [[...bytes].map((byte) => Buffer.from([byte]))];
  for (let at = 0; at <= bytes.length; at++) out.push([bytes.subarray(0, at), bytes.subarray(at)]);
  for (let round = 0; round < 50; round++) {
    const pieces: Buffer[] = [];
    for (let at = 0; at < bytes.length;) {
      const size = 1 + Math.floor(next() * 40);
      pieces.push(bytes.subarray(at, at + size));
      at += size;
    }
    out.push(pieces);
  }
  return out;
}

describe("the file helper's replies", () => {
  it('splits stdout, stderr and the exit code however the chunks fall, with marker look-alikes as output', () =>
    withSeed(({ random: next }) => {
      const stdout = `size\n${NONCE.slice(0, 20)}o${NONCE}x\u00ff${NONCE.slice(0, 31)}`;
      const stderr = `tar: ${NONCE}: Cannot open\n${'f'.repeat(40)}`;
      const wire = Buffer.concat([
        Buffer.from(stdout, 'latin1'),
        Buffer.from(`${NONCE}o${stderr}${NONCE}e7\n`, 'latin1'),
      ]);
      for (const pieces of cuts(wire, next)) {
        const parsed = reply();
        for (const piece of pieces) parsed.push(piece);
        assert.equal(parsed.done, true, parsed.error);
        assert.equal(Buffer.from(parsed.stdout.bytes()).toString('latin1'), stdout);
        assert.equal(Buffer.from(parsed.stderr.bytes()).toString('latin1'), stderr);
        assert.equal(parsed.exitCode, 7);
      }
    }));

  it('calls an endless reply broken as soon as it passes a cap, keeping no more than the cap', () => {
    const parsed = reply(1024, 16);
    const megabyte = Buffer.alloc(1 << 20, 0x61);
    for (let index = 0; index < 64 && !parsed.broken; index++) parsed.push(megabyte);
    assert.equal(parsed.broken, true);
    assert.match(parsed.error!, /stdout passed its cap of 1024 bytes/);
    assert.equal(parsed.stdout.bytes().length, 1024);
    const noisy = reply(1024, 16);
    noisy.push(Buffer.from(`${'x'.repeat(1024)}${NONCE}o${'e'.repeat(100)}`));
    assert.match(noisy.error!, /stderr passed its cap of 16 bytes/);
    const fits = reply(1024, 16);
    fits.push(Buffer.from(`${'x'.repeat(1024)}${NONCE}o${'e'.repeat(16)}${NONCE}e0\n`));
    assert.equal(fits.done, true);
  });

  for (const [what, tail] of [
    ['a huge number', '99999999999999999999\n'],
    ['a code above 255', '256\n'],
    ['letters', 'x1\n'],
    ['a negative code', '-1\n'],
    ['no digits', '\n'],
    ['digits that never end', '0000'],
  ] as const) {
    it(`calls a reply broken whose exit code is ${what}`, () => {
      const parsed = reply();
      parsed.push(Buffer.from(`out${NONCE}oerr${NONCE}e${tail}`));
      assert.equal(parsed.broken, true);
      assert.equal(parsed.done, false);
      assert.match(parsed.error!, /malformed exit code/);
    });
  }

  it('calls a reply broken when bytes follow it, in the same chunk or a later one', () => {
    const same = reply();
    same.push(Buffer.from(`${NONCE}o${NONCE}e0\nforged`));
    assert.equal(same.broken, true);
    const later = reply();
    later.push(Buffer.from(`${NONCE}o${NONCE}e0\n`));
    assert.equal(later.done, true);
    later.push(Buffer.from(`${NONCE}o${NONCE}e1\n`));
    assert.equal(later.broken, true);
    assert.match(later.error!, /after its reply/);
  });

  it("takes another nonce's markers for output", () => {
    const other = 'f'.repeat(32);
    const parsed = reply();
    parsed.push(Buffer.from(`${other}o${other}e0\n`));
    assert.equal(parsed.done, false);
    parsed.push(Buffer.from(`${NONCE}o${NONCE}e3\n`));
    assert.equal(parsed.done, true);
    assert.equal(Buffer.from(parsed.stdout.bytes()).toString(), `${other}o${other}e0\n`);
  });
});

describe("the file helper's requests", () => {
  it('quotes any argument so that sh gets it back byte for byte', () =>
    withSeed(({ random: next }) => {
      const alphabet = [...'\'"\\$`!*?[]{}~#&;|<>() \t\n\r=-_./aZ09é€𝄞'];
      const args = Array.from({ length: 40 }, () =>
        Array.from({ length: Math.floor(next() * 30) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''),
      );
      args.push('', "'", "''", '--', '-e');
      const quoted = args.map(shellQuote).join(' ');
      const echoed = spawnSync('sh', ['-c', 'set -f; eval "set -- $1"; printf "%s\\0" "$@"', 'sh', quoted]);
      assert.equal(echoed.status, 0, echoed.stderr.toString());
      assert.deepEqual(echoed.stdout.toString('utf8').split('\0').slice(0, -1), args);
    }));

  it('refuses a NUL byte in an argument and a nonce that is not hex', () => {
    assert.throws(() => shellQuote('a\0b'), /NUL/);
    assert.throws(() => helperRequest('not hex!', 'read', [], 0), /nonce/);
    assert.equal(
      helperRequest(NONCE, 'read', ['/workspace/a b', '10', '0'], 0).toString(),
      `${NONCE} 2 25 0\n'/workspace/a b' '10' '0'`,
    );
  });
});

describe('the file helper script with its parser', () => {
  /** The real helper in the host's sh, with stand-in scripts for the four operations. */
  function startHelper(scripts: [string, string, string, string]) {
    const child = spawn('sh', ['-c', FILE_HELPER_SCRIPT, 'agent-sandbox-files', ...scripts], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let current: HelperReply | undefined;
    let waiting: (() => void) | undefined;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      current?.push(chunk);
      if (current?.done || current?.broken) waiting?.();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    return {
      child,
      exited,
      stderr: () => stderr,
      ask(op: 'write' | 'read' | 'list' | 'delete', args: string[], input = Buffer.alloc(0)): Promise<HelperReply> {
        const nonce = [...Array(32)].map((_, index) => 'abcdef0123456789'[(index * 7 + args.length) % 16]).join('');
        current = new HelperReply(nonce, new CappedOutput(1 << 24), new CappedOutput(1 << 16));
        const asked = current;
        const answered = new Promise<HelperReply>((resolve) => (waiting = () => resolve(asked)));
        child.stdin.write(helperRequest(nonce, op, args, input.length));
        child.stdin.write(input);
        return answered;
      },
    };
  }

  it('runs each operation with its arguments and exact input, answers in order, and ends with its stdin', async () => {
    const helper = startHelper([
      'wc -c; printf "%s|" "$@"; echo to-stderr >&2; exit 3',
      'exit 0', // reads nothing: the helper must still consume its input
      'printf "%s\\n" "$@"',
      'cat',
    ]);
    const input = Buffer.alloc(300_000, 0x41);
    const first = await helper.ask('write', ["it's", 'a\nb', '$HOME'], input);
    assert.equal(Buffer.from(first.stdout.bytes()).toString(), "300000\nit's|a\nb|$HOME|");
    assert.equal(first.stderr.text('stderr'), 'to-stderr');
    assert.equal(first.exitCode, 3);
    const skipped = await helper.ask('read', [], Buffer.from('not read by the script'));
    assert.equal(skipped.exitCode, 0);
    const binary = Buffer.from([0, 1, 2, 255, 10, 0]);
    const echoed = await helper.ask('delete', [], binary);
    assert.deepEqual(Buffer.from(echoed.stdout.bytes()), binary);
    const listed = await helper.ask('list', ['one']);
    assert.equal(Buffer.from(listed.stdout.bytes()).toString(), 'one\n');
    helper.child.stdin.end();
    assert.equal(await helper.exited, 0);
    assert.equal(helper.stderr(), '');
  });

  it('ends on a request it cannot parse rather than run it', async () => {
    for (const line of ['0123abcd 9 0 0\n', 'zz 1 0 0\n', `${NONCE} 1 -1 0\n`, `${NONCE} 1 0 0 extra\n`, '\n']) {
      const helper = startHelper(['touch /dev/null/never; exit 9', 'exit 9', 'exit 9', 'exit 9']);
      helper.child.stdin.write(line);
      assert.equal(await helper.exited, 2, line);
    }
  });
});
