import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PROMPT_SCHEMA_FILE, promptSchemaText } from '../../scripts/generatePromptSchema';

const ROOT = resolve(__dirname, '../..');

interface JsonSchema {
  description?: string;
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
}

describe('.prompt frontmatter JSON Schema and language contribution', () => {
  it('ships the JSON Schema generated from the zod schema', () => {
    const shipped = readFileSync(PROMPT_SCHEMA_FILE, 'utf8');
    assert.equal(
      shipped,
      promptSchemaText(),
      'schemas/dotprompt-frontmatter.schema.json is out of date. Run: npx tsx scripts/generatePromptSchema.ts',
    );
  });

  it('describes every key of the sandbox block, in both its forms', () => {
    const schema = JSON.parse(readFileSync(PROMPT_SCHEMA_FILE, 'utf8')) as JsonSchema & { $schema: string };
    assert.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
    const [shorthand, object, harness] = schema.properties!.sandbox!.anyOf!;
    assert.deepEqual((shorthand as { enum?: string[] }).enum, ['python', 'node', 'bash', 'linux']);
    for (const block of [object!, object!.properties!.limits!, harness!]) {
      for (const [key, property] of Object.entries(block.properties!))
        assert.ok(property.description, `${key} has no description`);
    }
  });

  it('contributes the dotprompt language, its grammar and configuration, and the commands', () => {
    const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8'));
    const language = pkg.contributes.languages.find((entry: { id: string }) => entry.id === 'dotprompt');
    assert.deepEqual(language.extensions, ['.prompt']);
    assert.ok(existsSync(resolve(ROOT, language.configuration)));
    const grammar = pkg.contributes.grammars.find((entry: { language: string }) => entry.language === 'dotprompt');
    const tm = JSON.parse(readFileSync(resolve(ROOT, grammar.path), 'utf8'));
    assert.equal(tm.scopeName, grammar.scopeName);
    const includes: string[] = JSON.stringify(tm).match(/"include":"[^"]+"/g) ?? [];
    assert.ok(includes.includes('"include":"source.yaml"') && includes.includes('"include":"text.html.handlebars"'));
    for (const own of ['#handlebars-comment-block', '#handlebars-block', '#handlebars-expression'])
      assert.ok(tm.repository[own.slice(1)], own);
    assert.equal(grammar.embeddedLanguages['meta.embedded.block.frontmatter.dotprompt'], 'yaml');
    const config = JSON.parse(readFileSync(resolve(ROOT, language.configuration), 'utf8'));
    assert.deepEqual(config.comments.blockComment, ['{{!--', '--}}']);
    const nls = JSON.parse(readFileSync(resolve(ROOT, 'package.nls.json'), 'utf8'));
    for (const id of ['agentSandbox.validatePromptFiles', 'agentSandbox.openAgentSession']) {
      const command = pkg.contributes.commands.find((entry: { command: string }) => entry.command === id);
      assert.equal(command.category, '%command.category%', id);
      assert.ok(nls[command.title.slice(1, -1)], `${id} has no title in package.nls.json`);
    }
    assert.deepEqual(
      pkg.contributes.menus.commandPalette.find(
        (entry: { command: string }) => entry.command === 'agentSandbox.openAgentSession',
      ),
      { command: 'agentSandbox.openAgentSession', when: 'false' },
    );
    assert.match(readFileSync(resolve(ROOT, '.vscodeignore'), 'utf8'), /^!syntaxes\/\*\*$/m);
  });
});
