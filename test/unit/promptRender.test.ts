// Rendering .prompt files with the dotprompt package, as `agent-sandbox render` and the chat participant
// do: real files (Station's and the design's examples) and small ones written here.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { analyzePrompt } from '../../src/core/prompt/analyzePrompt';
import {
  DEFAULT_MAX_STEPS,
  formatRenderProblem,
  renderPrompt,
  type RenderedPrompt,
  type RenderOutcome,
  type RenderProblem,
} from '../../src/core/prompt/render';
import { partialFileName, partialsBeside } from '../../src/core/prompt/renderPartials';

const FIXTURES = resolve(__dirname, '../fixtures/prompts');
const MATH_AGENT = join(FIXTURES, 'station-prompts/examples__lattice-lab__agents__math-agent.prompt');

function rendered(outcome: RenderOutcome): RenderedPrompt {
  if (!outcome.ok) assert.fail(`not rendered:\n${outcome.problems.map((p) => formatRenderProblem('f', p)).join('\n')}`);
  return outcome.prompt;
}

function refused(outcome: RenderOutcome): RenderProblem[] {
  assert.equal(outcome.ok, false, `rendered, but should have been refused: ${JSON.stringify(outcome)}`);
  return outcome.ok ? [] : outcome.problems;
}

function texts(prompt: RenderedPrompt): string[] {
  return prompt.messages.map(
    (message) =>
      `${message.role}: ${message.content
        .map((part) => ('text' in part ? part.text : `[${part.media.url}]`))
        .join('')
        .trim()}`,
  );
}

async function renderText(text: string, input?: Record<string, unknown>, file = 'agents/test.prompt') {
  return renderPrompt({ text, file, input });
}

describe('rendering .prompt files', () => {
  it('renders every real .prompt file (Station, the design examples) that the editor passes', async function () {
    this.timeout(60_000);
    let count = 0;
    const failures: string[] = [];
    for (const corpus of ['seed-examples', 'station-prompts']) {
      const folder = join(FIXTURES, corpus);
      for (const name of readdirSync(folder).filter((file) => file.endsWith('.prompt'))) {
        const file = join(folder, name);
        const outcome = await renderPrompt({
          text: readFileSync(file, 'utf8'),
          file,
          input: { userInput: 'hello' },
          readPartial: partialsBeside(file),
        });
        count++;
        if (!outcome.ok) failures.push(...outcome.problems.map((p) => formatRenderProblem(name, p)));
        else assert.ok(outcome.prompt.messages.length > 0, `${name} rendered no message`);
      }
    }
    assert.deepEqual(failures, []);
    assert.equal(count, 145);
  });

  it("renders Station's math agent with its input: system and user messages, model, max_steps", async () => {
    const prompt = rendered(
      await renderPrompt({ text: readFileSync(MATH_AGENT, 'utf8'), file: MATH_AGENT, input: { userInput: '6*7?' } }),
    );
    assert.equal(prompt.name, 'math-agent');
    assert.equal(prompt.model, 'gpt-4o-mini');
    assert.equal(prompt.maxSteps, 3);
    assert.deepEqual(prompt.tools, []);
    assert.equal(prompt.sandbox, undefined);
    assert.deepEqual(
      prompt.messages.map((m) => m.role),
      ['system', 'user'],
    );
    assert.match(texts(prompt)[0]!, /^system: You are the Math Agent - a calculation specialist/);
    assert.equal(texts(prompt)[1], 'user: 6*7?');
  });

  it('refuses input without a required field, naming it and saying what to add', async () => {
    const text = readFileSync(MATH_AGENT, 'utf8');
    const problems = refused(await renderPrompt({ text, file: MATH_AGENT, input: { question: 'x' } }));
    assert.deepEqual(problems, [
      {
        where: 'input',
        field: 'userInput',
        message:
          '"userInput" is missing: the file\'s input schema requires it (Math problem to solve). Add it, like {"userInput": "..."}.',
      },
    ]);
    assert.equal(formatRenderProblem('math.prompt', problems[0]!), `math.prompt: input: ${problems[0]!.message}`);
  });

  it('refuses input of the wrong type, and a field a Picoschema does not list', async () => {
    const text = '---\ninput:\n  schema:\n    topic: string\n    count?: integer, how many\n---\n{{topic}} x{{count}}';
    const wrongType = refused(await renderText(text, { topic: 'cats', count: 1.5 }));
    assert.deepEqual(wrongType, [
      {
        where: 'input',
        field: 'count',
        message: `"count" must be an integer or null, not 1.5: change it to fit the file's input schema.`,
      },
    ]);
    const extra = refused(await renderText(text, { topic: 'cats', colour: 'red' }));
    assert.equal(extra.length, 1);
    assert.equal(extra[0]!.where === 'input' && extra[0]!.field, 'colour');
    assert.match(extra[0]!.message, /"colour" is not in the file's input schema, which takes topic, count/);
    assert.deepEqual(texts(rendered(await renderText(text, { topic: 'cats', count: 3 }))), ['user: cats x3']);
  });

  it('refuses an input schema Dotprompt cannot read, at its key', async () => {
    const typo = refused(await renderText('---\ninput:\n  schema:\n    q: strin\n---\n{{q}}', { q: 'x' }));
    assert.deepEqual(
      typo.map((p) => formatRenderProblem('a.prompt', p)),
      ["a.prompt:3:3: input.schema cannot be read: Picoschema: unsupported scalar type 'strin'."],
    );
    const named = refused(await renderText('---\ninput:\n  schema: Person\n---\nHi'));
    assert.deepEqual(
      named.map((p) => formatRenderProblem('a.prompt', p)),
      [
        'a.prompt:3:11: input.schema names a schema, Person, that is defined nowhere here: write the schema in the file (Picoschema or JSON Schema).',
      ],
    );
  });

  it("refuses a file with a YAML error, with the editor's own diagnostic at its position", async () => {
    const text = '---\nmodel: openai/gpt-4o\ntools: [sandbox_run\nmax_steps: 4\n---\nHello {{name}}\n';
    const errors = analyzePrompt(text).problems.filter((p) => p.severity === 'error');
    assert.ok(errors.length > 0, 'the analysis finds the YAML error');
    const problems = refused(await renderText(text, { name: 'Ann' }, 'agents/broken.prompt'));
    assert.deepEqual(
      problems.map((p) => formatRenderProblem('agents/broken.prompt', p)),
      errors.map((e) => `agents/broken.prompt:${e.range.start.line + 1}:${e.range.start.character + 1}: ${e.message}`),
    );
    // The parser notices on the line after the unclosed list; the problem is on the list's own line, where ] goes.
    assert.deepEqual(problems[0], {
      where: 'file',
      line: errors[0]!.range.start.line + 1,
      column: errors[0]!.range.start.character + 1,
      message: errors[0]!.message,
    });
    assert.equal(errors[0]!.range.start.line + 1, 3);
    assert.equal(
      errors[0]!.message,
      'The list opened with [ is never closed: add ] at its end (tools: [sandbox_run]).',
    );
  });

  it('refuses an error in the sandbox block, but renders a file that has only warnings', async () => {
    const error = refused(await renderText('---\nsandbox:\n  runtime: pyhton\n---\nHi\n'));
    assert.deepEqual(
      error.map((p) => formatRenderProblem('a.prompt', p)),
      ['a.prompt:3:12: sandbox.runtime "pyhton" is not one of python, node, bash, linux; did you mean python?'],
    );
    const text = '---\nsandbox:\n  runtime: python\n  alow_network: true\n---\nHi\n';
    assert.ok(analyzePrompt(text).problems.some((p) => p.severity === 'warning'));
    const prompt = rendered(await renderText(text));
    assert.equal(prompt.sandbox?.runtime, 'python');
    assert.deepEqual(texts(prompt), ['user: Hi']);
  });

  it('gives the sandbox block as a spec layer, the tools, and the output schema', async () => {
    const csv = join(FIXTURES, 'seed-examples/csv-analyzer.prompt');
    const analyzer = rendered(
      await renderPrompt({ text: readFileSync(csv, 'utf8'), file: csv, input: { userInput: 'a,b' } }),
    );
    assert.equal(analyzer.sandbox?.runtime, 'python');
    assert.deepEqual(analyzer.sandbox?.pipPackages, ['pandas', 'matplotlib']);
    const tracker = join(
      FIXTURES,
      'station-prompts/bundles__demos__finops-inventory__agents__commitment-portfolio-tracker.prompt',
    );
    const prompt = rendered(await renderPrompt({ text: readFileSync(tracker, 'utf8'), file: tracker }));
    assert.deepEqual(prompt.tools, [
      '__list_reserved_instances',
      '__list_savings_plans',
      '__get_commitment_utilization',
    ]);
    assert.equal(prompt.output?.format, 'json');
    assert.equal((prompt.output?.schema?.properties as Record<string, { type: string }>).total_cost?.type, 'number');
    const pico = rendered(await renderText('---\noutput:\n  schema:\n    answer: string, the answer\n---\nQ'));
    assert.deepEqual(pico.output, {
      schema: {
        type: 'object',
        properties: { answer: { type: 'string', description: 'the answer' } },
        required: ['answer'],
        additionalProperties: false,
      },
    });
  });

  it(`takes max_steps from the file, ${DEFAULT_MAX_STEPS} when it has none, and refuses one that is not a count`, async () => {
    assert.equal(DEFAULT_MAX_STEPS, 8);
    assert.equal(rendered(await renderText('---\nmodel: m\n---\nHi')).maxSteps, 8);
    assert.equal(rendered(await renderText('Hi, no frontmatter')).maxSteps, 8);
    assert.equal(rendered(await renderText('---\nmax_steps: 12\n---\nHi')).maxSteps, 12);
    assert.equal(rendered(await renderText('---\nharness_config:\n  max_steps: 25\n---\nHi')).maxSteps, 25);
    assert.deepEqual(
      refused(await renderText('---\nmodel: m\nmax_steps: ten\n---\nHi')).map((p) =>
        formatRenderProblem('a.prompt', p),
      ),
      ['a.prompt:3:12: max_steps must be a whole number of model turns, 1 or more, like 8.'],
    );
  });

  it('applies input.default under the given input, keeps media parts, and splits messages by role', async () => {
    const text = [
      '---',
      'input:',
      '  default:',
      '    tone: dry',
      '  schema:',
      '    question: string',
      '    tone?: string',
      '    chart?: string',
      '---',
      '{{role "system"}}Answer in a {{tone}} tone.',
      '{{role "user"}}{{question}}',
      '{{media url=chart contentType="image/png"}}',
      'Thanks.',
    ].join('\n');
    const prompt = rendered(await renderText(text, { question: 'Why?', chart: 'https://example.com/c.png' }));
    assert.deepEqual(prompt.input, { tone: 'dry', question: 'Why?', chart: 'https://example.com/c.png' });
    assert.deepEqual(prompt.messages, [
      { role: 'system', content: [{ text: 'Answer in a dry tone.\n' }] },
      {
        role: 'user',
        content: [
          { text: 'Why?\n' },
          { media: { url: 'https://example.com/c.png', contentType: 'image/png' } },
          { text: '\nThanks.' },
        ],
      },
    ]);
    assert.equal(rendered(await renderText(text, { question: 'Q', tone: 'warm' })).input.tone, 'warm');
  });

  describe('partials', () => {
    const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-render-'));
    after(() => rmSync(folder, { recursive: true, force: true }));
    const write = (path: string, text: string) => {
      mkdirSync(join(folder, path, '..'), { recursive: true });
      writeFileSync(join(folder, path), text);
    };
    const renderFile = async (path: string, text: string, input?: Record<string, unknown>) => {
      write(path, text);
      const file = join(folder, path);
      return renderPrompt({ text, file, input, readPartial: partialsBeside(file) });
    };

    it('reads {{> name}} from _name.prompt beside the file, and name/sub from sub/_name.prompt', async () => {
      write('agents/_persona.prompt', 'You are {{who}}, a careful analyst.');
      write('agents/common/_rules.prompt', 'Never guess.');
      const prompt = rendered(
        await renderFile(
          'agents/analyst.prompt',
          '---\nmodel: m\n---\n{{role "system"}}{{> persona}}\n{{> common/rules}}\n{{role "user"}}{{q}}',
          { who: 'Ada', q: 'Go.' },
        ),
      );
      assert.deepEqual(texts(prompt), ['system: You are Ada, a careful analyst.\nNever guess.', 'user: Go.']);
      assert.equal(partialFileName('common/rules'), 'common/_rules.prompt');
      assert.equal(partialFileName('../secret'), undefined);
    });

    it("gives each file its own folder's partial of the same name, also when rendered at the same time", async () => {
      write('one/_header.prompt', 'Header one');
      write('two/_header.prompt', 'Header two');
      const [one, two] = await Promise.all([
        renderFile('one/a.prompt', '{{> header}}'),
        renderFile('two/b.prompt', '{{> header}}'),
      ]);
      assert.deepEqual(texts(rendered(one)), ['user: Header one']);
      assert.deepEqual(texts(rendered(two)), ['user: Header two']);
      assert.deepEqual(texts(rendered(await renderFile('one/c.prompt', '{{> header}}'))), ['user: Header one']);
    });

    it('refuses a partial that is not there, at its line, naming the file it looked for', async () => {
      const problems = refused(await renderFile('three/a.prompt', '---\nmodel: m\n---\nIntro\n  {{> footer}}\n'));
      assert.deepEqual(
        problems.map((p) => formatRenderProblem('a.prompt', p)),
        [
          'a.prompt:5:3: {{> footer}} names a partial that is not there: Dotprompt reads it from _footer.prompt beside this file; create that file or fix the name.',
        ],
      );
      write('secret.txt', 'outside');
      write('_outside.prompt', 'outside the folder');
      const outside = refused(await renderFile('three/b.prompt', '{{> ../outside}}'));
      assert.match(outside[0]!.message, /outside this file's folder/);
    });
  });

  describe('template errors, at the line to fix', () => {
    it('a block never closed: at its opening tag', async () => {
      const problems = refused(await renderText('---\nmodel: m\n---\nIntro\n{{#each items}}\n- {{this}}\n\nEnd\n'));
      assert.deepEqual(
        problems.map((p) => formatRenderProblem('a.prompt', p)),
        [
          'a.prompt:5:1: This is left open until the end of the template: close each {{#block}} with its {{/block}} (like {{#if x}} ... {{/if}}), and each {{ with }}.',
        ],
      );
    });

    it('a helper Dotprompt does not have', async () => {
      const problems = refused(await renderText('---\nmodel: m\n---\nIntro\n  {{upper name}}\n', { name: 'x' }));
      assert.equal(problems.length, 1);
      assert.equal(formatRenderProblem('a.prompt', problems[0]!).slice(0, 14), 'a.prompt:5:3: ');
      assert.match(problems[0]!.message, /^\{\{upper \.\.\.\}\} calls a helper Dotprompt does not have/);
    });
  });
});
