// Counting a result's tokens costs bounded work whatever the output: no long run reaches the
// tokenizer, few calls, and the count bounds the real one from above. Uses a real byte-pair tokenizer
// (o200k_base, as Copilot's models use) for the bound.
import assert from 'node:assert/strict';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { formatExecResult } from '../../src/core/tools/format';
import { CALL_CHARS, RUN_PIECE_CHARS, countTokensBounded } from '../../src/core/tools/tokenCount';
import { PART_CHARS, resultParts } from '../../src/core/tools/resultParts';
import type { ExecResult } from '../../src/core/engine/engine';

const encoder = new Tiktoken(o200k);
const realCount = (text: string) => encoder.encode(text).length;

/** Seeded, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

function longestRun(text: string): number {
  let longest = 0;
  let run = 0;
  for (const char of text) {
    run = char === ' ' || char === '\n' ? 0 : run + 1;
    longest = Math.max(longest, run);
  }
  return longest;
}

function execResult(stdout: string, stderr = ''): ExecResult {
  return {
    outcome: 'error',
    exitCode: 3,
    stdout,
    stderr,
    stdoutBytes: stdout.length,
    stderrBytes: stderr.length,
    stdoutTruncated: false,
    stderrTruncated: false,
    durationMs: 300,
    notices: [],
    hint: 'Read stderr, fix the cause and run it again.',
  };
}

describe('counting tokens in bounded time', () => {
  const SEED = 20261123;
  const next = random(SEED);
  const base64 = Buffer.from(Array.from({ length: 60_000 }, () => Math.floor(next() * 256))).toString('base64');
  const shapes: [string, string][] = [
    ['one run of one character', 'x'.repeat(100_000)],
    ['base64 on one line', base64],
    [
      'minified JSON',
      JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ id: i, name: `item-${i}`, tags: ['a', 'b'] }))),
    ],
    ['many lines', Array.from({ length: 3000 }, (_, i) => `line ${i}: ${'word '.repeat(6)}`).join('\n')],
    ['ANSI escapes and carriage returns', Array.from({ length: 4000 }, (_, i) => `\x1b[32m${i}%\x1b[0m\r`).join('')],
    ['long words between spaces', Array.from({ length: 300 }, (_, i) => `${i}${'w'.repeat(290)}`).join(' ')],
  ];

  for (const [shape, text] of shapes) {
    it(`${shape}: short runs and few calls (seed ${SEED})`, async () => {
      const calls: string[] = [];
      await countTokensBounded(text, async (piece) => (calls.push(piece), Math.ceil(piece.length / 4)));
      assert.ok(
        calls.every((piece) => piece.length <= CALL_CHARS),
        'no call is longer than CALL_CHARS',
      );
      // Byte-pair merging is quadratic in a run's length: no run longer than RUN_PIECE_CHARS, at the text's end too.
      const longest = Math.max(...calls.map(longestRun));
      assert.ok(longest <= RUN_PIECE_CHARS, `a run of ${longest} characters reached the tokenizer`);
      assert.ok(calls.length <= Math.ceil((text.length * 1.01) / CALL_CHARS) + 1, `${calls.length} calls`);
    });

    // The real tokenizer on the whole text is the quadratic cost this avoids: compare on a short sample.
    it(`${shape}: the count is at least the real tokenizer's`, async () => {
      const sample = text.slice(0, 3000);
      const bound = await countTokensBounded(sample, async (piece) => realCount(piece));
      assert.ok(bound >= realCount(sample), `${bound} < ${realCount(sample)}`);
    });
  }

  it('a 5 MiB one-line result fits the budget with at most a handful of small calls, headline first', async () => {
    const stdout = 'x'.repeat(5 * 1024 * 1024);
    const calls: number[] = [];
    const text = await formatExecResult(
      execResult(stdout),
      { engine: 'docker' },
      {
        maxChars: 48_000,
        tokenBudget: 4_000,
        countTokens: async (piece) => (calls.push(piece.length), realCount(piece)),
      },
    );
    assert.ok(calls.length <= 8, `${calls.length} countTokens calls`);
    assert.ok(
      calls.reduce((sum, n) => sum + n, 0) <= 2 * 4 * 4_000 * 1.1 + 2 * CALL_CHARS,
      `${calls.reduce((sum, n) => sum + n, 0)} characters counted`,
    );
    assert.ok((await countTokensBounded(text, async (piece) => realCount(piece))) <= 4_000, 'within the budget');
    const [first] = resultParts(text);
    assert.ok(first!.length <= PART_CHARS);
    assert.match(first!, /^failed · exit code 3 · .*output shortened to fit the context\nNext: Read stderr/);
  });

  it('counts a piece that repeats once, times its repeats: a run of one character costs a few short calls', async function () {
    this.timeout(20_000); // the real tokenizer's own count of the runs, to compare with
    const text = `headline · exit code 0\nstdout:\n${'x'.repeat(3_000)}\n[… marker …]\n${'x'.repeat(3_000)}`;
    const calls: string[] = [];
    const bound = await countTokensBounded(text, async (piece) => (calls.push(piece), realCount(piece)));
    assert.ok(calls.length <= 3, `${calls.length} calls`);
    const handed = calls.reduce((sum, piece) => sum + piece.length, 0);
    assert.ok(handed < 1_000, `${handed} characters handed to the tokenizer`);
    assert.ok(bound >= realCount(text), `${bound} is not an upper bound of ${realCount(text)}`);
  });

  it('splits a long result into parts of at most 8,000 characters, at line breaks, losing nothing', () => {
    const text = Array.from({ length: 2000 }, (_, i) => `row ${i} ${'y'.repeat(i % 90)}`).join('\n');
    const parts = resultParts(text);
    assert.ok(parts.every((part) => part.length <= PART_CHARS));
    assert.equal(parts.join(''), text);
    assert.ok(parts.slice(0, -1).every((part) => part.endsWith('\n')));
  });
});
