// Real .prompt files must pass: the examples of the sandbox design (test/fixtures/prompts/seed-examples)
// and every .prompt file of cloudshipai/station (station-prompts, Apache-2.0). Warnings are printed
// for a human to judge.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { specFromFrontmatter } from '../../src/core/spec/frontmatterSpec';
import { agentName, agentScopeKey, analyzePrompt } from '../../src/core/prompt/analyzePrompt';
import { completePrompt } from '../../src/core/prompt/completions';
import { hoverPrompt } from '../../src/core/prompt/hover';
import { resolveSpec } from '../../src/core/spec/resolveSpec';

const FIXTURES = resolve(__dirname, '../fixtures/prompts');

function corpus(name: string): { file: string; text: string }[] {
  const folder = join(FIXTURES, name);
  const files = readdirSync(folder)
    .filter((file) => file.endsWith('.prompt'))
    .sort();
  assert.ok(files.length > 0, `no .prompt files in ${folder}`);
  return files.map((file) => ({ file, text: readFileSync(join(folder, file), 'utf8') }));
}

function printWarnings(name: string, file: string, text: string): void {
  for (const problem of analyzePrompt(text).problems.filter((p) => p.severity === 'warning')) {
    console.log(
      `      warning in ${name}/${file}:${problem.range.start.line + 1}:${problem.range.start.character + 1}: ${problem.message}`,
    );
  }
}

for (const name of ['seed-examples', 'station-prompts']) {
  describe(`.prompt corpus: ${name}`, () => {
    const files = corpus(name);

    it(`reports no error on any of its ${files.length} files (warnings printed below)`, () => {
      const errors = files.flatMap(({ file, text }) =>
        analyzePrompt(text)
          .problems.filter((p) => p.severity === 'error')
          .map((p) => `${file}:${p.range.start.line + 1}:${p.range.start.character + 1}: ${p.message}`),
      );
      assert.deepEqual(errors, []);
      for (const { file, text } of files) printWarnings(name, file, text);
    });

    it("turns every sandbox block Agent Sandbox runs into a valid code-mode spec for the agent's session", () => {
      for (const { file, text } of files) {
        const analysis = analyzePrompt(text);
        if (!analysis.sandbox || analysis.sandbox.style === 'harness') continue;
        const spec = resolveSpec(specFromFrontmatter(analysis.sandbox.value), { mode: 'code' });
        assert.equal(spec.mode, 'code', file);
        assert.match(agentScopeKey(agentName(analysis, file)), /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/, file);
      }
    });

    it('hovers every known top-level key and completes keys on a new line', () => {
      for (const { file, text } of files) {
        const analysis = analyzePrompt(text);
        if (!analysis.frontmatter) continue;
        for (const key of ['model', 'metadata', 'sandbox', 'tools']) {
          const offset = text.search(new RegExp(`^${key}:`, 'm'));
          if (offset < 0 || offset > analysis.frontmatter.end) continue;
          assert.match(
            hoverPrompt(text, offset + 1)?.contents ?? '',
            new RegExp(`^\\*\\*${key}\\*\\*`),
            `${file}: hover on ${key}`,
          );
        }
        const end = analysis.frontmatter.end;
        const withNewLine = `${text.slice(0, end)}\n${text.slice(end)}`;
        const labels = completePrompt(withNewLine, end)?.items.map((item) => item.label) ?? [];
        const written = Object.keys(analysis.data ?? {});
        assert.ok(
          labels.length > 0 && labels.every((label) => !written.includes(label)),
          `${file}: completions ${labels.join(', ')}`,
        );
        if (!written.includes('sandbox')) assert.ok(labels.includes('sandbox'), `${file}: sandbox is offered`);
      }
    });
  });
}
