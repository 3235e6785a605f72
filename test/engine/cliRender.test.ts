// `agent-sandbox render` through the built CLI (dist/cli.js: `node esbuild.mjs --quiet`), on real
// files, with no engine in reach: rendering needs none.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runCliText } from './cliRunner';

const STATION = resolve(__dirname, '../fixtures/prompts/station-prompts');
const MATH_AGENT = 'examples__lattice-lab__agents__math-agent.prompt';

function render(args: string[], cwd: string, stdin?: string) {
  // An engine address where nothing answers: rendering must not need one.
  return runCliText(['render', ...args], { cwd, stdin, env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock' } });
}

describe('agent-sandbox render (the built CLI)', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-render-'));
  after(() => rmSync(folder, { recursive: true, force: true }));

  it("prints Station's math agent rendered with its input, each message under --- role ---", async () => {
    const result = await render([MATH_AGENT, '--input', '{"userInput": "What is 6*7?"}'], STATION);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      result.stdout,
      [
        '--- system ---',
        'You are the Math Agent - a calculation specialist in the Station Lattice.',
        '',
        'Capabilities:',
        '- Basic arithmetic (+, -, *, /)',
        '- Percentages and fractions',
        '- Unit conversions',
        '- Simple statistics (mean, median, sum)',
        '',
        'Response format:',
        '1. State the calculation',
        '2. Show your work briefly',
        '3. Give the answer',
        '4. Sign off with "Computed by Math Agent"',
        '--- user ---',
        'What is 6*7?',
        '',
      ].join('\n'),
    );
    assert.equal(
      result.stderr,
      'agent-sandbox: rendered math-agent: 2 message(s); model gpt-4o-mini; tools (none); max_steps 3; no sandbox block\n',
    );
  });

  it('prints the whole result with --json, the input read from a file or standard input', async () => {
    writeFileSync(join(folder, 'input.json'), '{"userInput": "2+2"}');
    const fromFile = await render(['--json', join(STATION, MATH_AGENT), '--input-file', 'input.json'], folder);
    assert.equal(fromFile.code, 0, fromFile.stderr);
    const result = JSON.parse(fromFile.stdout) as {
      ok: boolean;
      prompt: { model: string; maxSteps: number; tools: string[]; messages: { role: string; content: unknown[] }[] };
    };
    assert.equal(result.ok, true);
    assert.equal(result.prompt.model, 'gpt-4o-mini');
    assert.equal(result.prompt.maxSteps, 3);
    assert.deepEqual(result.prompt.messages[1], { role: 'user', content: [{ text: '\n2+2' }] });
    const fromStdin = await render(['--json', MATH_AGENT, '--input-file', '-'], STATION, '{"userInput": "2+2"}');
    assert.equal(fromStdin.code, 0, fromStdin.stderr);
    assert.deepEqual(JSON.parse(fromStdin.stdout), { ...result, file: MATH_AGENT });
  });

  it('renders partials from the folder and gives the sandbox block', async () => {
    mkdirSync(join(folder, 'agents'), { recursive: true });
    writeFileSync(join(folder, 'agents/_persona.prompt'), 'You are a data analyst who shows the code.');
    writeFileSync(
      join(folder, 'agents/plotter.prompt'),
      '---\nmodel: copilot/gpt-4o\ntools: [sandbox_run]\nsandbox:\n  runtime: python\n  pip_packages: [matplotlib]\n---\n{{role "system"}}\n{{> persona}}\n{{role "user"}}\nPlot {{what}}.\n',
    );
    const result = await render(['agents/plotter.prompt', '--input', '{"what": "sales"}'], folder);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      result.stdout,
      '--- system ---\nYou are a data analyst who shows the code.\n--- user ---\nPlot sales.\n',
    );
    assert.equal(
      result.stderr,
      'agent-sandbox: rendered plotter: 2 message(s); model copilot/gpt-4o; tools sandbox_run; max_steps 8; sandbox compute mode, python\n',
    );
  });

  it('exits 1 with the problems: a missing input field, an error the editor shows', async () => {
    const missing = await render([MATH_AGENT], STATION);
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, '');
    assert.equal(
      missing.stderr,
      `${MATH_AGENT}: input: "userInput" is missing: the file's input schema requires it (Math problem to solve). Add it, like {"userInput": "..."}.\n` +
        `agent-sandbox: ${MATH_AGENT} was not rendered: 1 problem(s)\n`,
    );
    writeFileSync(join(folder, 'broken.prompt'), '---\nmodel: m\nsandbox:\n  runtime: pyhton\n---\nHello\n');
    const broken = await render(['broken.prompt'], folder);
    assert.equal(broken.code, 1);
    assert.equal(
      broken.stderr,
      'broken.prompt:4:12: sandbox.runtime "pyhton" is not one of python, node, bash, linux; did you mean python?\n' +
        'agent-sandbox: broken.prompt was not rendered: 1 problem(s)\n',
    );
    const json = await render(['broken.prompt', '--json'], folder);
    assert.equal(json.code, 1);
    assert.deepEqual(JSON.parse(json.stdout), {
      file: 'broken.prompt',
      ok: false,
      problems: [
        {
          where: 'file',
          line: 4,
          column: 12,
          message: 'sandbox.runtime "pyhton" is not one of python, node, bash, linux; did you mean python?',
        },
      ],
    });
  });

  it('exits 2 for a mistake on the command line', async () => {
    const cases: [string[], RegExp][] = [
      [[], /render takes one \.prompt file/],
      [[MATH_AGENT, 'other.prompt'], /render takes one \.prompt file/],
      [[MATH_AGENT, '--input', '{userInput: 1}'], /--input is not JSON/],
      [[MATH_AGENT, '--input', '["a"]'], /--input must be a JSON object/],
      [[MATH_AGENT, '--input', '{}', '--input-file', 'x.json'], /not both/],
      [[MATH_AGENT, '--input-file', 'nowhere.json'], /Cannot read --input-file nowhere\.json/],
      [['nowhere.prompt'], /Cannot read nowhere\.prompt/],
      [['.'], /Cannot render \.: it is a directory/],
    ];
    for (const [args, message] of cases) {
      const result = await render(args, STATION);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message, args.join(' '));
    }
  });
});
