/**
 * Writes the README's tool table (between `<!-- tools:start -->` and `<!-- tools:end -->`) from the
 * tool list: what each tool does, its result budget and when it asks first. `--check` only compares.
 *
 *   npx tsx scripts/generateToolTable.ts [--check]
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOOLS } from '../src/core/tools/toolList';
import { applyGenerated } from './generatedFile';

export const README = resolve(fileURLToPath(new URL('..', import.meta.url)), 'README.md');
const START = '<!-- tools:start -->';
const END = '<!-- tools:end -->';

export function toolTable(): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  return [
    '| tool | what it does | result | asks first |',
    '| --- | --- | --- | --- |',
    ...TOOLS.map(
      (tool) => `| \`${tool.name}\` | ${cell(tool.userDescription)} | ${cell(tool.budget)} | ${cell(tool.asks)} |`,
    ),
  ].join('\n');
}

/** The README's text with the table replaced; undefined when the markers are missing. */
export function withToolTable(readme: string): string | undefined {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) return undefined;
  return `${readme.slice(0, start + START.length)}\n${toolTable()}\n${readme.slice(end)}`;
}

function main(args: readonly string[]): number {
  const readme = readFileSync(README, 'utf8');
  const next = withToolTable(readme);
  if (next === undefined) {
    console.error(`README.md has no ${START} … ${END} markers.`);
    return 1;
  }
  return applyGenerated(
    {
      what: 'the README.md tool table',
      file: README,
      text: readme,
      next,
      rerun: 'npx tsx scripts/generateToolTable.ts',
      summary: `${TOOLS.length} tools`,
    },
    args.includes('--check'),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
