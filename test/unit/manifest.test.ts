import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  languageModelToolsManifest,
  manifestDrift,
  PACKAGE_JSON,
  updatedPackageJson,
} from '../../scripts/generateManifest';
import { toolInputSchema } from '../../src/core/tools/jsonSchema';
import { TOOLS } from '../../src/core/tools/toolList';

const NAME = /^(?!copilot_|vscode_)[\w-]+$/;

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema & { description?: string }>;
  items?: JsonSchema;
}

describe('language-model tools manifest', () => {
  const generated = languageModelToolsManifest();

  it('package.json carries the generated languageModelTools', () => {
    const pkg = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { contributes?: { languageModelTools?: unknown } };
    const drift = manifestDrift(pkg.contributes?.languageModelTools, generated);
    assert.deepEqual(
      drift,
      [],
      `package.json is out of date (${drift.join('; ')}). Run: npx tsx scripts/generateManifest.ts`,
    );
    assert.deepEqual(
      pkg.contributes?.languageModelTools,
      generated,
      'package.json is out of date. Run: npx tsx scripts/generateManifest.ts',
    );
  });

  it('lists every tool once, in the order of the tool list', () => {
    const names = generated.map((tool) => tool.name);
    assert.deepEqual(
      names,
      TOOLS.map((tool) => tool.name),
    );
    assert.equal(new Set(names).size, names.length);
  });

  it('uses names, reference names and tags VS Code accepts', () => {
    for (const tool of generated) {
      assert.match(tool.name, NAME);
      assert.match(tool.toolReferenceName, /^[\w-]+$/);
      assert.equal(tool.canBeReferencedInPrompt, true);
      assert.match(tool.icon, /^\$\([a-z0-9-]+\)$/);
      for (const tag of tool.tags) assert.match(tag, NAME, `${tool.name} tag ${tag}`);
      assert.ok(tool.displayName && tool.userDescription && tool.modelDescription.length > 100, tool.name);
    }
  });

  it('gives every schema an object at the top level and a description on every property', () => {
    const check = (schema: JsonSchema, where: string): void => {
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        assert.ok(property.description, `${where}.${key} has no description`);
        if (property.items?.properties) check(property.items, `${where}.${key}[]`);
      }
    };
    for (const tool of generated) {
      const schema = tool.inputSchema as JsonSchema & { $schema?: string; additionalProperties?: unknown };
      assert.equal(schema.type, 'object', tool.name);
      assert.equal(schema.$schema, undefined, tool.name);
      assert.equal(schema.additionalProperties, false, tool.name);
      check(schema, tool.name);
    }
  });

  it('replaces only languageModelTools when it updates package.json', () => {
    const before = `${JSON.stringify({ name: 'x', contributes: { commands: [{ command: 'a' }], languageModelTools: [] }, scripts: { b: 'c' } }, null, 2)}\n`;
    const after = updatedPackageJson(before, generated);
    const parsed = JSON.parse(after);
    assert.deepEqual(Object.keys(parsed), ['name', 'contributes', 'scripts']);
    assert.deepEqual(parsed.contributes.commands, [{ command: 'a' }]);
    assert.deepEqual(parsed.contributes.languageModelTools, generated);
    assert.ok(after.endsWith('}\n') && after.includes('\n  "scripts": {\n    "b": "c"\n  }'));
    assert.deepEqual(manifestDrift(parsed.contributes.languageModelTools, generated), []);
  });

  it('names what drifted', () => {
    const changed = structuredClone(generated);
    changed[0]!.modelDescription = 'old';
    assert.deepEqual(manifestDrift(changed.slice(0, -1), generated), [
      'sandbox_run: modelDescription differ',
      'sandbox_close: missing from package.json',
    ]);
    assert.deepEqual(manifestDrift(undefined, generated), [
      'contributes.languageModelTools is missing or not an array',
    ]);
    assert.deepEqual(manifestDrift([...generated].reverse(), generated), ['the tools are listed in a different order']);
  });
});

describe('tools as every model family takes them', () => {
  it('keeps every description within the 1,024 characters OpenAI-compatible endpoints accept', () => {
    for (const tool of TOOLS)
      assert.ok(tool.modelDescription.length <= 1024, `${tool.name}: ${tool.modelDescription.length} characters`);
  });

  it('uses plain minimum and maximum, no exclusiveMinimum or propertyNames, in every input schema', () => {
    for (const tool of TOOLS)
      assert.doesNotMatch(
        JSON.stringify(toolInputSchema(tool.schema)),
        /exclusiveMinimum|exclusiveMaximum|propertyNames/,
        tool.name,
      );
  });
});

describe('the README tool table', () => {
  it('states each tool with its result budget and when it asks first, as the tool list says', async () => {
    const { README, withToolTable } = await import('../../scripts/generateToolTable');
    const readme = readFileSync(README, 'utf8');
    assert.equal(withToolTable(readme), readme, 'README.md is out of date. Run: npx tsx scripts/generateToolTable.ts');
    for (const tool of TOOLS) assert.ok(readme.includes(`| \`${tool.name}\` |`), tool.name);
  });
});
