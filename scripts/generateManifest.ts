/**
 * Writes `contributes.languageModelTools` in package.json from the tool definitions and their zod
 * schemas, leaving every other key as it is. `--check` only compares, and exits 1 when they differ.
 *
 *   npx tsx scripts/generateManifest.ts [--check]
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toolInputSchema } from '../src/core/tools/jsonSchema';
import { TOOLS } from '../src/core/tools/toolList';
import { applyGenerated } from './generatedFile';

export const PACKAGE_JSON = resolve(fileURLToPath(new URL('..', import.meta.url)), 'package.json');

export interface LanguageModelToolContribution {
  name: string;
  displayName: string;
  toolReferenceName: string;
  canBeReferencedInPrompt: boolean;
  userDescription: string;
  modelDescription: string;
  icon: string;
  tags: string[];
  inputSchema: Record<string, unknown>;
}

export { toolInputSchema };

/** The `contributes.languageModelTools` entries, in the order of the tool list. Pure: reads no file. */
export function languageModelToolsManifest(): LanguageModelToolContribution[] {
  return TOOLS.map((tool) => ({
    name: tool.name,
    displayName: tool.displayName,
    // People write the tool in a chat prompt as #sandbox_run.
    toolReferenceName: tool.name,
    canBeReferencedInPrompt: true,
    userDescription: tool.userDescription,
    modelDescription: tool.modelDescription,
    icon: tool.icon,
    tags: [...tool.tags],
    inputSchema: toolInputSchema(tool.schema),
  }));
}

/** One line per difference between what package.json has and what it should have; empty when equal. */
export function manifestDrift(actual: unknown, expected: readonly LanguageModelToolContribution[]): string[] {
  if (!Array.isArray(actual)) return ['contributes.languageModelTools is missing or not an array'];
  const byName = (entries: readonly unknown[]) =>
    new Map(entries.map((entry, index) => [String((entry as { name?: unknown } | null)?.name ?? `#${index}`), entry]));
  const have = byName(actual);
  const want = byName(expected);
  const drift: string[] = [];
  for (const [name, wanted] of want) {
    const had = have.get(name);
    if (had === undefined) {
      drift.push(`${name}: missing from package.json`);
      continue;
    }
    const keys = new Set([...Object.keys(wanted as object), ...Object.keys((had ?? {}) as object)]);
    const changed = [...keys].filter(
      (key) =>
        JSON.stringify((had as Record<string, unknown>)[key]) !==
        JSON.stringify((wanted as Record<string, unknown>)[key]),
    );
    if (changed.length) drift.push(`${name}: ${changed.join(', ')} differ`);
  }
  for (const name of have.keys()) if (!want.has(name)) drift.push(`${name}: in package.json but not in the tool list`);
  if (!drift.length && JSON.stringify(actual) !== JSON.stringify(expected))
    drift.push('the tools are listed in a different order');
  return drift;
}

/** package.json's text with only `contributes.languageModelTools` replaced (2-space indent, trailing newline). */
export function updatedPackageJson(text: string, tools: readonly LanguageModelToolContribution[]): string {
  const pkg = JSON.parse(text) as Record<string, unknown>;
  const contributes = (pkg.contributes ?? {}) as Record<string, unknown>;
  pkg.contributes = { ...contributes, languageModelTools: tools };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

function main(args: readonly string[]): number {
  const text = readFileSync(PACKAGE_JSON, 'utf8');
  const tools = languageModelToolsManifest();
  const current = (JSON.parse(text) as { contributes?: { languageModelTools?: unknown } }).contributes
    ?.languageModelTools;
  return applyGenerated(
    {
      what: 'package.json languageModelTools',
      file: PACKAGE_JSON,
      text,
      next: updatedPackageJson(text, tools),
      drift: manifestDrift(current, tools),
      rerun: 'npx tsx scripts/generateManifest.ts',
      summary: `${tools.length} tools`,
    },
    args.includes('--check'),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
