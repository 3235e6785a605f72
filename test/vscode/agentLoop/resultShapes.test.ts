// Results of the shapes that hung or got hidden (#24, #15) as Copilot's agent loop hands them to
// the model: the call returns, and the first part the model reads holds the headline, short enough
// that Copilot does not swap it for a pointer to a file. A hang fails through the case's timeout.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { GENERATOR, generatorCommand, generatorProgram, type Shape } from '../suite/outputShapes';
import { runCase, scriptedModelReady } from './chat';
import { PROBE_TOOL, type ReceivedResult, type ScriptedCall, type Transcript } from './script';

const SEED = Number(process.env.AGENT_SANDBOX_TEST_SEED) || Date.now() % 2 ** 31;
const MiB = 1024 * 1024;
const SESSION = 'loop-shapes';
/** Generous for one case on a busy 2-core machine (5 MiB made, moved, formatted and counted twice): a hang fails here. */
const CASE_TIMEOUT_MS = 240_000;
/** Our cap on a whole result without a smaller token budget (registerTools.ts). */
const RESULT_CHARS = 48_000;
/** What Copilot's agent loop writes to a file instead of showing a text part longer than 8 KiB. */
const MOVED_TO_FILE = /^Large tool result \(\d+KB\) written to file/;
/** What Copilot puts in when it cut a result itself. */
const CUT_BY_COPILOT = /Tool response was too long and was truncated/;

type Stream = 'stdout' | 'stderr';
interface Output {
  tool: 'sandbox_run' | 'sandbox_exec';
  shape: Shape;
  size: number;
  stream: Stream;
  code: number;
}

function call(o: Output): ScriptedCall {
  return o.tool === 'sandbox_run'
    ? {
        name: 'sandbox_run',
        input: { runtime: 'python', code: generatorProgram(o.shape, o.size, o.stream, o.code, SEED) },
      }
    : {
        name: 'sandbox_exec',
        input: { sandbox_id: SESSION, command: generatorCommand('gen.py', o.shape, o.size, o.stream, o.code, SEED) },
      };
}

function label(o: Output): string {
  const size = o.size >= MiB ? `${o.size / MiB} MiB` : `${o.size / 1000} K`;
  return `${o.tool} ${size} of ${o.shape} on ${o.stream}, exit ${o.code}`;
}

/** The result of the call `${case}-t${turn}-c${index}`, which must have come back. */
function resultOf(transcript: Transcript, turn: number, index: number): ReceivedResult {
  const id = `${transcript.id}-t${turn}-c${index}`;
  const result = transcript.results.find((candidate) => candidate.callId === id);
  assert.ok(
    result,
    `the model never received the result of ${id}; it received ${JSON.stringify(transcript.results.map((r) => r.callId))}`,
  );
  return result;
}

/**
 * What the model must see of every result: text, the headline first, nothing moved to a file or cut
 * by Copilot, within our 48,000 characters. Copilot shows the model each of our parts (or, for a part
 * over 8 KiB, a pointer to a file instead) and joins them into one text: a pointer would show here.
 */
function checkSeen(result: ReceivedResult, headline: RegExp): string {
  const texts = result.parts.map((part, index) => {
    assert.equal(part.type, 'text', `part ${index} of ${result.callId} is ${JSON.stringify(part).slice(0, 200)}`);
    return part.type === 'text' ? part.value : '';
  });
  assert.ok(texts.length > 0, `${result.callId} came back without a part`);
  const text = texts.join('');
  assert.doesNotMatch(text, MOVED_TO_FILE, `Copilot moved a part of ${result.callId} to a file: ${text.slice(0, 300)}`);
  assert.doesNotMatch(text, CUT_BY_COPILOT, `Copilot cut ${result.callId}`);
  assert.match(texts[0]!.split('\n', 1)[0]!, headline);
  assert.ok(text.length <= RESULT_CHARS, `the model received ${text.length} characters (at most ${RESULT_CHARS})`);
  assert.equal(result.isError, false);
  return text;
}

suite(`Result shapes in Copilot's agent loop (seed ${SEED})`, function () {
  this.timeout(CASE_TIMEOUT_MS + 30_000);
  const config = () => vscode.workspace.getConfiguration('agentSandbox');

  suiteSetup(async () => {
    await vscode.extensions.getExtension('agent-sandbox.agent-sandbox')!.activate();
    await scriptedModelReady();
    // A user who wants whole 5 MiB outputs raises the per-call caps (1 MiB by default) in their settings.
    await config().update('limits.maxStdoutBytes', 8 * MiB, vscode.ConfigurationTarget.Global);
    await config().update('limits.maxStderrBytes', 8 * MiB, vscode.ConfigurationTarget.Global);
    const { transcript } = await runCase(
      {
        id: 'shapes-setup',
        turns: [
          { calls: [{ name: 'sandbox_open', input: { session: SESSION, runtime: 'python' } }] },
          {
            calls: [
              {
                name: 'sandbox_fs_write',
                input: { sandbox_id: SESSION, files: [{ path: 'gen.py', content: GENERATOR }] },
              },
            ],
          },
          { text: 'The generator is in place.' },
        ],
      },
      { timeoutMs: CASE_TIMEOUT_MS },
    );
    checkSeen(resultOf(transcript, 0, 0), new RegExp(`^(Opened new|Using open) sandbox "${SESSION}"`));
    checkSeen(resultOf(transcript, 1, 0), /^Wrote 1 file /);
  });

  suiteTeardown(async () => {
    await vscode.commands.executeCommand('agentSandbox.closeAllSessions', 'confirmed');
    await config().update('limits.maxStdoutBytes', undefined, vscode.ConfigurationTarget.Global);
    await config().update('limits.maxStderrBytes', undefined, vscode.ConfigurationTarget.Global);
  });

  // The control that makes "nothing moved to a file" mean something: this host does move a long part.
  test('a tool part over 8 KiB reaches the model as a pointer to a file (Copilot, not us)', async () => {
    const { transcript } = await runCase(
      {
        id: 'probe-long-part',
        turns: [
          {
            calls: [
              { name: PROBE_TOOL, input: { chars: 9_000 } },
              { name: PROBE_TOOL, input: { chars: 7_000 } },
            ],
          },
          { text: 'Seen.' },
        ],
      },
      { timeoutMs: CASE_TIMEOUT_MS },
    );
    const long = resultOf(transcript, 0, 0)
      .parts.map((part) => (part.type === 'text' ? part.value : ''))
      .join('');
    assert.match(long, MOVED_TO_FILE, `a 9,000-character part: ${long.slice(0, 200)}`);
    const short = resultOf(transcript, 0, 1)
      .parts.map((part) => (part.type === 'text' ? part.value : ''))
      .join('');
    assert.match(short, /^probe headline\ny{7000}$/);
  });

  test("sandbox_run of print('x'*400000) and exit 3 returns, headline in sight (#24)", async () => {
    const { transcript } = await runCase(
      {
        id: 'run-400k',
        turns: [
          {
            calls: [
              { name: 'sandbox_run', input: { runtime: 'python', code: "import sys; print('x'*400000); sys.exit(3)" } },
            ],
          },
          { text: 'It exited with 3.' },
        ],
      },
      { timeoutMs: CASE_TIMEOUT_MS },
    );
    const text = checkSeen(resultOf(transcript, 0, 0), /^failed · exit code 3 · /);
    assert.match(text.slice(0, 8_000), /\nNext: /, 'what to do next comes with the headline');
    assert.deepEqual(
      transcript.requests.map((request) => request.answered),
      ['calls', 'text'],
      'the loop came back once with the result and then ended',
    );
  });

  // Both streams of each shape in one turn of the model (two calls; Copilot runs them and comes back once).
  const groups: { id: string; outputs: Output[] }[] = [
    {
      id: 'run-5mib',
      outputs: [
        { tool: 'sandbox_exec', shape: 'run', size: 5 * MiB, stream: 'stdout', code: 0 },
        { tool: 'sandbox_exec', shape: 'run', size: 5 * MiB, stream: 'stderr', code: 3 },
      ],
    },
    {
      id: 'base64-1mib',
      outputs: [
        { tool: 'sandbox_exec', shape: 'base64', size: MiB, stream: 'stderr', code: 0 },
        { tool: 'sandbox_run', shape: 'base64', size: MiB, stream: 'stdout', code: 3 },
      ],
    },
    {
      id: 'lines-1mib',
      outputs: [
        { tool: 'sandbox_exec', shape: 'lines', size: MiB, stream: 'stdout', code: 3 },
        { tool: 'sandbox_exec', shape: 'lines', size: MiB, stream: 'stderr', code: 0 },
      ],
    },
    {
      id: 'json-ansi-100k',
      outputs: [
        { tool: 'sandbox_run', shape: 'json', size: 100_000, stream: 'stdout', code: 0 },
        { tool: 'sandbox_exec', shape: 'ansi', size: 100_000, stream: 'stderr', code: 3 },
      ],
    },
  ];
  for (const group of groups) {
    test(group.outputs.map(label).join('; '), async () => {
      const { transcript } = await runCase(
        { id: group.id, turns: [{ calls: group.outputs.map(call) }, { text: 'Both came back.' }] },
        { timeoutMs: CASE_TIMEOUT_MS },
      );
      group.outputs.forEach((output, index) => {
        const text = checkSeen(
          resultOf(transcript, 0, index),
          new RegExp(`^${output.code ? 'failed · ' : ''}exit code ${output.code} · `),
        );
        assert.match(text, new RegExp(`\\n${output.stream}:\\n`), `the ${output.stream} section of ${label(output)}`);
        if (output.size >= MiB) {
          assert.match(text.split('\n', 1)[0]!, /output shortened to fit the context/);
          assert.match(text, new RegExp(`characters \\([\\d,]+ lines?\\) of ${output.stream} cut to fit the context`));
        }
      });
      assert.deepEqual(
        transcript.requests.map((request) => request.answered),
        ['calls', 'text'],
      );
    });
  }
});
