import assert from 'node:assert/strict';
import { analyzePrompt } from '../../src/core/prompt/analyzePrompt';
import { formatRenderProblem, renderPrompt } from '../../src/core/prompt/render';

/**
 * The problems of a file whose frontmatter is `yaml` (it starts on line 2), as `line:col-line:col message`,
 * 1-based as `agent-sandbox validate` prints them.
 */
function shown(yaml: string): string[] {
  return analyzePrompt(`---\n${yaml}---\nHello {{name}}\n`).problems.map(
    (p) =>
      `${p.range.start.line + 1}:${p.range.start.character + 1}-${p.range.end.line + 1}:${p.range.end.character + 1} ${p.code} ${p.message}`,
  );
}

describe('.prompt analysis: YAML mistakes in plain words', () => {
  it('a key indented under a key that has a value: on the indented line, one problem', () => {
    assert.deepEqual(shown('model: gpt\n  tools: [a]\n'), [
      '3:3-3:9 yaml-syntax "tools:" is indented under "model", which already has a value (gpt): unindent it to line up with "model:". If this line is part of the value of model, put the whole value in quotes.',
    ]);
    assert.deepEqual(shown('sandbox:\n runtime: python\n  mode: code\n'), [
      '4:3-4:8 yaml-syntax "mode:" is indented under "runtime", which already has a value (python): unindent it to line up with "runtime:". If this line is part of the value of runtime, put the whole value in quotes.',
    ]);
  });

  it('a key indented less than the keys above it in its block', () => {
    assert.deepEqual(shown('sandbox:\n  runtime: python\n mode: code\n'), [
      '4:2-4:7 yaml-syntax "mode:" is indented by 1 space, but the keys above it under "sandbox" are indented by 2 spaces: indent it by 2 like them, or by 0 to move it out of sandbox.',
    ]);
    assert.deepEqual(shown('tools:\n  - a\n - b\n'), [
      '4:2-4:5 yaml-syntax This list item is indented by 1 space, but the items above it are indented by 2 spaces: line up its "-" with theirs.',
    ]);
  });

  it('a quote never closed: where it opens, even when the parser notices at the end', () => {
    assert.deepEqual(shown('model: "gpt\n'), [
      '2:8-2:12 yaml-syntax The " that opens this value is never closed: add " at the end of the value (model: "gpt"), or remove the opening ".',
    ]);
    assert.deepEqual(shown("model: 'gpt\ntools: [a]\nconfig:\n  x: 1\n"), [
      "2:8-2:12 yaml-syntax The ' that opens this value is never closed: add ' at the end of the value (model: 'gpt'), or remove the opening '.",
    ]);
  });

  it('a list or map never closed: on the line where the bracket goes', () => {
    assert.deepEqual(shown('tools: [a, b\n'), [
      '2:8-2:13 yaml-syntax The list opened with [ is never closed: add ] at its end (tools: [a, b]).',
    ]);
    assert.deepEqual(shown('tools: [a, b\nmodel: x\n'), [
      '2:8-2:13 yaml-syntax The list opened with [ is never closed: add ] at its end (tools: [a, b]).',
    ]);
    assert.deepEqual(shown('config: {temperature: 1\n'), [
      '2:9-2:24 yaml-syntax The map opened with { is never closed: add } at its end (config: {temperature: 1}).',
    ]);
    assert.deepEqual(shown('config: {a: [1, 2\nmodel: x\n'), [
      '2:9-2:18 yaml-syntax The map opened with { is never closed: add ]} at its end (config: {a: [1, 2]}).',
    ]);
    assert.deepEqual(shown('tools: [a,\n  b\nmodel: x\n'), [
      '3:3-3:4 yaml-syntax The list opened with [ on line 2 is never closed: add ] after its last item (b]).',
    ]);
    assert.deepEqual(shown('tools: [a, b\nmodel: x\nconfig: {t: 1\n'), [
      '2:8-2:13 yaml-syntax The list opened with [ is never closed: add ] at its end (tools: [a, b]).',
      '4:9-4:14 yaml-syntax The map opened with { is never closed: add } at its end (config: {t: 1}).',
    ]);
    assert.deepEqual(shown('tools: [a,\nb]\n'), [
      '3:1-3:3 yaml-syntax The list opened with [ on line 2 continues on line 3, which must be indented: add spaces at its start, or keep the list on one line.',
    ]);
  });

  it('a tab in the indentation: each line that has one', () => {
    assert.deepEqual(shown('sandbox:\n\truntime: python\n\tmode: code\n'), [
      '3:1-3:2 yaml-syntax Line 3 is indented with a tab: YAML indents only with spaces. Replace the tab with spaces.',
      '4:1-4:2 yaml-syntax Line 4 is indented with a tab: YAML indents only with spaces. Replace the tab with spaces.',
    ]);
  });

  it('": " inside a plain value', () => {
    assert.deepEqual(shown('model: a: b # note\n'), [
      '2:8-2:12 yaml-syntax The value of "model" contains ": ", which YAML reads as the start of another key: quote the value (model: "a: b").',
    ]);
  });

  it('a list item among the top-level keys, before or after them: on the item', () => {
    const message =
      'The frontmatter mixes the list item "- a" with keys like "model:" at the top level: Dotprompt expects keys (model:, tools:, ...). Remove the "- " item, or put it under a key (for example tools:, with the item indented below it).';
    assert.deepEqual(shown('- a\nmodel: x\ntools: [a]\n'), [`2:1-2:4 yaml-syntax ${message}`]);
    assert.deepEqual(shown('model: x\n- a\n'), [`3:1-3:4 yaml-syntax ${message}`]);
    assert.deepEqual(shown('model: x\n- a\n- b\n'), [
      '3:1-4:4 yaml-syntax The frontmatter mixes list items ("- a", "- b") with keys like "model:" at the top level: Dotprompt expects keys (model:, tools:, ...). Remove the "- " item, or put it under a key (for example tools:, with the item indented below it).',
    ]);
    assert.deepEqual(shown('sandbox:\n  runtime: python\n  - a\n'), [
      '4:3-4:6 yaml-syntax The block under "sandbox" mixes the list item "- a" with keys like "runtime:": a block holds either "- " items or keys. Remove the item, or put it under a key of its own.',
    ]);
    assert.deepEqual(shown('tools:\n  - a\n  model: x\n'), [
      '4:3-4:9 yaml-syntax "model:" is indented like the "- " items of "tools", and a block holds either "- " items or keys: unindent "model:" if it is a key of its own, or make it an item ("- model: x").',
    ]);
  });

  it('no space after the colon, alone or among keys', () => {
    const message =
      'Put a space after the colon: write model: gpt. Without it, YAML reads "model:gpt" as one piece of text, not a key and its value.';
    assert.deepEqual(shown('model:gpt\n'), [`2:1-2:10 frontmatter-not-a-map ${message}`]);
    assert.deepEqual(shown('model:gpt\ntools: [a]\n'), [`2:1-2:10 yaml-syntax ${message}`]);
    assert.deepEqual(shown('tools: [a]\nmodel:gpt\n'), [`3:1-3:10 yaml-syntax ${message}`]);
    assert.deepEqual(shown('image: http://example.com/x\n'), []);
  });

  it('a value starting with a reserved character, or an alias or anchor without a name or an anchor', () => {
    assert.deepEqual(shown('model: @gpt\n'), [
      '2:8-2:12 yaml-syntax A value that starts with @ must be quoted (YAML reserves @ and `): write model: "@gpt".',
    ]);
    assert.deepEqual(shown('model: `gpt` # note\n'), [
      '2:8-2:13 yaml-syntax A value that starts with ` must be quoted (YAML reserves @ and `): write model: "`gpt`".',
    ]);
    assert.deepEqual(shown('model: %gpt\n'), [
      '2:8-2:12 yaml-syntax A value that starts with % must be quoted (YAML reserves % for directives): write model: "%gpt".',
    ]);
    assert.deepEqual(shown('model: *\n'), [
      '2:8-2:9 yaml-syntax * alone is read as an alias without a name: quote it if you mean the text (model: "*"), or name the anchor it repeats (*name).',
    ]);
    assert.deepEqual(shown('model: *foo\n'), [
      '2:8-2:12 yaml-syntax *foo repeats a value marked &foo, but no value before it is marked so: quote it if you mean the text (model: "*foo"), or mark the value to repeat with &foo.',
    ]);
  });

  it('Handlebars in the frontmatter, which YAML reads as a map (block text and quoted values are fine)', () => {
    assert.deepEqual(shown('model: {{name}}\n'), [
      '2:8-2:16 yaml-syntax {{name}} is Handlebars, which works only in the prompt text after the closing ---, not in the frontmatter: YAML reads { as the start of a map. Quote the value to keep the text: model: "{{name}}".',
    ]);
    assert.deepEqual(shown('tools: [{{tool}}, b]\n'), [
      '2:9-2:17 yaml-syntax {{tool}} is Handlebars, which works only in the prompt text after the closing ---, not in the frontmatter: YAML reads { as the start of a map. Quote the value to keep the text: tools: ["{{tool}}", b].',
    ]);
    assert.deepEqual(shown('model: x\n{{#if a}}\nconfig: 1\n'), [
      '3:1-3:10 yaml-syntax {{#if a}} is Handlebars, which works only in the prompt text after the closing ---, not in the frontmatter: move it below the closing --- or remove it.',
    ]);
    assert.deepEqual(shown('model: "{{name}}"\ndescription: |\n  Use {{name}} here\n'), []);
  });

  it('a line that is not a key: a plain value continued without indentation, or a key without its colon', () => {
    assert.deepEqual(shown('description: this is\nlong text\nmodel: x\n'), [
      '3:1-3:10 yaml-syntax "long text" is not a key: each line here must be a key with a colon (name: value). If it continues the value of "description" above, indent it.',
    ]);
    assert.deepEqual(shown('sandbox:\n  runtime: python\nfoo\n'), [
      '4:1-4:4 yaml-syntax "foo" is not a key: each line here must be a key with a colon (name: value).',
    ]);
  });

  it('a second document marker, text after a closing quote or a block indicator, stray brackets and commas', () => {
    assert.deepEqual(shown('model: x\n--- # more\ntools: [a]\n'), [
      '3:1-3:11 yaml-syntax A line starting with --- starts or ends a YAML document inside the frontmatter, which ends only at a line of exactly ---: remove this line, or make it exactly --- to end the frontmatter here.',
    ]);
    assert.deepEqual(shown('model: "a" b\n'), [
      '2:12-2:13 yaml-syntax Text follows the closing quote of this value: put the whole value inside the quotes, or remove the text after the closing quote.',
    ]);
    assert.deepEqual(shown('description: | foo\n  bar\n'), [
      '2:16-2:19 yaml-syntax Text after | on the same line: a block of text starts on the next line, indented. Move "foo" to the next line.',
    ]);
    assert.deepEqual(shown('tools: ]\n'), [
      '2:8-2:9 yaml-syntax This ] closes nothing: remove it, or add the [ that opens it.',
    ]);
    assert.deepEqual(shown('tools: [a,,b]\n'), [
      '2:11-2:12 yaml-syntax An extra comma: remove it, or put an item between the commas.',
    ]);
    assert.deepEqual(shown('image: "C:\\images"\n'), [
      '2:11-2:13 yaml-syntax \\i is not an escape YAML knows inside double quotes: write \\\\ for a backslash, or use single quotes, where \\ is plain text.',
    ]);
  });

  it('a duplicate key that follows from a syntax mistake is not reported; a real one still is', () => {
    assert.equal(shown('model: x\n- a\n- a\n').length, 1);
    assert.deepEqual(shown('model: a\nmodel: b\n'), [
      '3:1-3:6 duplicate-key Duplicate key "model": a key may appear only once in a block.',
    ]);
  });

  it('render refuses with the same words, at the line where the fix goes', async () => {
    const outcome = await renderPrompt({ text: '---\nmodel: gpt\n  tools: [a]\n---\nHi\n', file: 'agents/a.prompt' });
    assert.equal(outcome.ok, false);
    assert.deepEqual(
      !outcome.ok && outcome.problems.map((problem) => formatRenderProblem('agents/a.prompt', problem)),
      [
        'agents/a.prompt:3:3: "tools:" is indented under "model", which already has a value (gpt): unindent it to line up with "model:". If this line is part of the value of model, put the whole value in quotes.',
      ],
    );
  });
});
