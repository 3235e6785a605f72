// Results of every size and shape, as Copilot asks for them: through vscode.lm.invokeTool with
// tokenizationOptions whose countTokens is a real byte-pair tokenizer (o200k_base, bundled into this
// suite) and a token budget, against the real engine. A call that hangs fails through the test's
// timeout; nothing here measures time.
import * as assert from 'node:assert/strict';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import * as vscode from 'vscode';
import { CALL_CHARS, PIECE_CHARS } from '../../../src/core/tools/tokenCount';
import { PART_CHARS } from '../../../src/core/tools/resultParts';
import { invokeResult } from './helpers';
import { GENERATOR, SHAPES, generatorCommand, generatorProgram, type Shape } from './outputShapes';

const SEED = Number(process.env.AGENT_SANDBOX_TEST_SEED) || Date.now() % 2 ** 31;
const MiB = 1024 * 1024;
const BUDGET = 10_000;
const SESSION = 'result-sizes';
/** A generous bound for one call (5 MiB made, moved and formatted on a busy 2-core machine): a hang fails here. */
const CALL_TIMEOUT_MS = 240_000;

type Stream = 'stdout' | 'stderr';
interface Case {
  tool: 'sandbox_run' | 'sandbox_exec';
  shape: Shape;
  size: number;
  stream: Stream;
  code: number;
}

/** Every shape at every size through exec (stdout and stderr alternating), and through run at 100 K and 5 MiB on the other stream. */
function cases(): Case[] {
  const list: Case[] = [
    { tool: 'sandbox_exec', shape: 'run', size: 0, stream: 'stdout', code: 0 },
    { tool: 'sandbox_run', shape: 'run', size: 0, stream: 'stderr', code: 3 },
  ];
  [8_000, 100_000, MiB, 5 * MiB].forEach((size, i) =>
    SHAPES.forEach((shape, j) =>
      list.push({
        tool: 'sandbox_exec',
        shape,
        size,
        stream: (i + j) % 2 ? 'stderr' : 'stdout',
        code: (i + j) % 3 ? 0 : 3,
      }),
    ),
  );
  [100_000, 5 * MiB].forEach((size, i) =>
    SHAPES.forEach((shape, j) =>
      list.push({
        tool: 'sandbox_run',
        shape,
        size,
        stream: (i + j) % 2 ? 'stdout' : 'stderr',
        code: (i + j) % 2 ? 3 : 0,
      }),
    ),
  );
  return list;
}

function sizeLabel(size: number): string {
  return size >= MiB ? `${size / MiB} MiB` : size >= 1000 ? `${size / 1000} K` : String(size);
}

const encoder = new Tiktoken(o200k);
const chunkCounts = new Map<string, number>();

/**
 * An upper bound on the real token count of `text`, from the same tokenizer: the sum over chunks of
 * 500 characters (a cut only removes merges). Whole, a long run would take the tokenizer minutes.
 */
function tokensAtMost(text: string): number {
  let total = 0;
  for (let at = 0; at < text.length; at += 500) {
    const chunk = text.slice(at, at + 500);
    let count = chunkCounts.get(chunk);
    if (count === undefined) chunkCounts.set(chunk, (count = encoder.encode(chunk).length));
    total += count;
  }
  return total;
}

function longestRun(text: string): number {
  let longest = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    run = code === 0x20 || code === 0x0a ? 0 : run + 1;
    if (run > longest) longest = run;
  }
  return longest;
}

/** tokenizationOptions as Copilot passes them, with a real tokenizer that notes what it was handed. */
function countingTokenization(): {
  options: vscode.LanguageModelToolTokenizationOptions;
  calls: { chars: number; longestRun: number }[];
} {
  const calls: { chars: number; longestRun: number }[] = [];
  return {
    calls,
    options: {
      tokenBudget: BUDGET,
      countTokens: async (text: string) => {
        calls.push({ chars: text.length, longestRun: longestRun(text) });
        return encoder.encode(text).length;
      },
    },
  };
}

/** What must hold for every result: parts a model sees, headline first, within the budget, bounded counting. */
function checkResult(
  result: vscode.LanguageModelToolResult,
  calls: { chars: number; longestRun: number }[],
  headline: RegExp,
): string[] {
  const parts = result.content.map((part, index) => {
    assert.ok(part instanceof vscode.LanguageModelTextPart, `part ${index} is a text part`);
    return part.value;
  });
  assert.ok(parts.length > 0, 'the result has a part');
  for (const [index, part] of parts.entries())
    assert.ok(part.length <= PART_CHARS, `part ${index} has ${part.length} characters (at most ${PART_CHARS})`);
  assert.match(parts[0]!.split('\n', 1)[0]!, headline);
  const tokens = tokensAtMost(parts.join(''));
  assert.ok(tokens <= BUDGET, `the result has up to ${tokens} tokens, over the budget of ${BUDGET}`);
  // The tokenizer is handed a few calls of short runs, whatever the output (see src/core/tools/tokenCount.ts).
  assert.ok(calls.length <= 8, `${calls.length} countTokens calls`);
  for (const call of calls) {
    assert.ok(call.chars <= CALL_CHARS, `a countTokens call of ${call.chars} characters`);
    assert.ok(call.longestRun <= PIECE_CHARS, `a run of ${call.longestRun} characters handed to countTokens`);
  }
  const handed = calls.reduce((sum, call) => sum + call.chars, 0);
  assert.ok(handed <= 2 * 4 * BUDGET * 1.1 + 2 * CALL_CHARS, `${handed} characters handed to countTokens`);
  return parts;
}

suite(`Result sizes through invokeTool with a real tokenizer (seed ${SEED})`, function () {
  this.timeout(CALL_TIMEOUT_MS);
  const config = () => vscode.workspace.getConfiguration('agentSandbox');

  suiteSetup(async () => {
    await vscode.extensions.getExtension('agent-sandbox.agent-sandbox')!.activate();
    // A user who wants whole 5 MiB outputs raises the per-call caps (1 MiB by default) in their settings.
    await config().update('limits.maxStdoutBytes', 8 * MiB, vscode.ConfigurationTarget.Global);
    await config().update('limits.maxStderrBytes', 8 * MiB, vscode.ConfigurationTarget.Global);
    await invokeResult('sandbox_open', { session: SESSION, runtime: 'python' });
    await invokeResult('sandbox_fs_write', { sandbox_id: SESSION, files: [{ path: 'gen.py', content: GENERATOR }] });
  });

  suiteTeardown(async () => {
    await invokeResult('sandbox_close', { sandbox_id: SESSION }).catch(() => undefined);
    await config().update('limits.maxStdoutBytes', undefined, vscode.ConfigurationTarget.Global);
    await config().update('limits.maxStderrBytes', undefined, vscode.ConfigurationTarget.Global);
  });

  for (const c of cases()) {
    test(`${c.tool}: ${sizeLabel(c.size)} of ${c.shape} on ${c.stream}, exit ${c.code}`, async () => {
      const { options, calls } = countingTokenization();
      const input =
        c.tool === 'sandbox_run'
          ? { runtime: 'python', code: generatorProgram(c.shape, c.size, c.stream, c.code, SEED) }
          : { sandbox_id: SESSION, command: generatorCommand('gen.py', c.shape, c.size, c.stream, c.code, SEED) };
      const result = await invokeResult(c.tool, input, { tokenizationOptions: options });
      const parts = checkResult(result, calls, new RegExp(`^${c.code ? 'failed · ' : ''}exit code ${c.code} · `));
      const text = parts.join('');
      if (c.code) assert.match(parts[0]!, /\nNext: /, 'what to do next is in the first part');
      if (c.size === 0) assert.match(text, /\(no output\)/);
      else assert.match(text, new RegExp(`\\n${c.stream}:\\n`), `the ${c.stream} section is there`);
      assert.doesNotMatch(parts[0]!.split('\n', 1)[0]!, /truncated/, 'the whole output reached the tool');
      if (c.size > 4 * BUDGET) {
        assert.match(parts[0]!.split('\n', 1)[0]!, /output shortened to fit the context/);
        const cut = new RegExp(
          `\\[… ([\\d,]+) characters \\([\\d,]+ lines?\\) of ${c.stream} cut to fit the context`,
        ).exec(text);
        assert.ok(cut, `a cut marker for ${c.stream}`);
        const removed = Number(cut[1]!.replace(/,/g, ''));
        assert.ok(removed > c.size - 4 * BUDGET - 1000 && removed < c.size, `${removed} of ${c.size} characters cut`);
      } else {
        assert.doesNotMatch(text, /cut to fit the context/);
      }
    });
  }

  test('sandbox_exec: 5 MiB on stdout and 5 MiB on stderr at once, each keeps a share', async () => {
    const { options, calls } = countingTokenization();
    const command = `${generatorCommand('gen.py', 'base64', 5 * MiB, 'stdout', 0, SEED)} && ${generatorCommand('gen.py', 'run', 5 * MiB, 'stderr', 3, SEED)}`;
    const result = await invokeResult(
      'sandbox_exec',
      { sandbox_id: SESSION, command },
      { tokenizationOptions: options },
    );
    const text = checkResult(result, calls, /^failed · exit code 3 · .*output shortened to fit the context/).join('');
    assert.match(text, /of stdout cut to fit the context/);
    assert.match(text, /of stderr cut to fit the context/);
  });

  test('sandbox_fs_list: 1,000 entries with long names fit the budget, headline first, with a count of what is not shown', async () => {
    await invokeResult('sandbox_exec', {
      sandbox_id: SESSION,
      command: `mkdir -p many && cd many && python3 -c "[open(f'{i:04d}-' + 'n' * 120 + '.txt', 'w') for i in range(1000)]"`,
    });
    const { options, calls } = countingTokenization();
    const result = await invokeResult(
      'sandbox_fs_list',
      { sandbox_id: SESSION, path: 'many' },
      { tokenizationOptions: options },
    );
    const [first] = checkResult(result, calls, /^\/workspace\/many: 1,000 entries/);
    assert.match(first!, /\nOnly the first [\d,]+ of 1,000 entries are shown, to fit the context/);
    assert.match(first!, /\nfile {2}0 bytes .*0000-n+\.txt\n/);
  });

  for (const [file, shape, size] of [
    ['oneline.txt', 'base64', 5 * MiB],
    ['lines.txt', 'lines', 5 * MiB],
  ] as const) {
    test(`sandbox_fs_read: a ${sizeLabel(size)} file of ${shape}`, async () => {
      await invokeResult('sandbox_exec', {
        sandbox_id: SESSION,
        command: `${generatorCommand('gen.py', shape, size, 'stdout', 0, SEED)} > ${file}`,
      });
      for (const max_bytes of [undefined, 6 * MiB]) {
        const { options, calls } = countingTokenization();
        const result = await invokeResult(
          'sandbox_fs_read',
          { sandbox_id: SESSION, path: file, ...(max_bytes ? { max_bytes } : {}) },
          { tokenizationOptions: options },
        );
        const [first] = checkResult(result, calls, new RegExp(`${file.replace('.', '\\.')} · 5(\\.0)? MiB · utf8`));
        assert.match(
          first!,
          /\nShown: [\d.]+ KiB \(bytes 0 to [\d,]+\) of 5(\.0)? MiB, cut to fit the context\. Read the next part with sandbox_fs_read offset \d+/,
        );
      }
    });
  }

  test('sandbox_fs_read: a 1 MiB binary file is described (type, size, hex preview), its bytes on request', async () => {
    await invokeResult('sandbox_exec', {
      sandbox_id: SESSION,
      command: `python3 -c "import random, sys; sys.stdout.buffer.write(random.Random(${SEED}).randbytes(${MiB}))" > blob.bin`,
    });
    const { options, calls } = countingTokenization();
    const result = await invokeResult(
      'sandbox_fs_read',
      { sandbox_id: SESSION, path: 'blob.bin', max_bytes: 2 * MiB },
      { tokenizationOptions: options },
    );
    const [first] = checkResult(result, calls, /blob\.bin · 1(\.0)? MiB · binary data, not text/);
    assert.match(first!, /\n00000000 {2}([0-9a-f]{2} ){16} /);
    assert.ok(first!.length < 3_000, `${first!.length} characters for a preview`);
    const counting = countingTokenization();
    const bytes = await invokeResult(
      'sandbox_fs_read',
      { sandbox_id: SESSION, path: 'blob.bin', max_bytes: 2 * MiB, encoding: 'base64' },
      { tokenizationOptions: counting.options },
    );
    const [head] = checkResult(bytes, counting.calls, /blob\.bin · 1(\.0)? MiB · binary, base64/);
    assert.match(head!, /\nShown: [\d.]+ KiB \(bytes 0 to [\d,]+\) of 1(\.0)? MiB, cut to fit the context\./);
  });
});
