/**
 * Writes schemas/dotprompt-frontmatter.schema.json, the JSON Schema of `.prompt` frontmatter, from the
 * zod schema the editor and the CLI validate with. `--check` only compares, and exits 1 when they differ.
 *
 *   npx tsx scripts/generatePromptSchema.ts [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { dotpromptFrontmatterSchema } from '../src/core/prompt/frontmatterSchema';

export const PROMPT_SCHEMA_FILE = resolve(
  fileURLToPath(new URL('..', import.meta.url)),
  'schemas/dotprompt-frontmatter.schema.json',
);

/** The schema as YAML tools read it (draft-07, which the YAML language server and most validators support). */
export function promptFrontmatterJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(dotpromptFrontmatterSchema, { io: 'input', target: 'draft-7' }) as Record<string, unknown>;
}

export function promptSchemaText(): string {
  return `${JSON.stringify(promptFrontmatterJsonSchema(), null, 2)}\n`;
}

function main(args: readonly string[]): number {
  const wanted = promptSchemaText();
  let current: string | undefined;
  try {
    current = readFileSync(PROMPT_SCHEMA_FILE, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === wanted) {
    console.log('schemas/dotprompt-frontmatter.schema.json is up to date.');
    return 0;
  }
  if (args.includes('--check')) {
    console.error(
      'schemas/dotprompt-frontmatter.schema.json is out of date. Run: npx tsx scripts/generatePromptSchema.ts',
    );
    return 1;
  }
  writeFileSync(PROMPT_SCHEMA_FILE, wanted);
  console.log('Wrote schemas/dotprompt-frontmatter.schema.json.');
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
