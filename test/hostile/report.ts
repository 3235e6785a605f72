/**
 * The hostile suite's report: every case records what was expected and what was observed, and the
 * run ends with the table (also written to out/hostile-report.md).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

interface Row {
  area: string;
  attack: string;
  expected: string;
  observed: string;
  passed: boolean | 'not run';
}

const rows: Row[] = [];

/** Records one case; call it after the assertions of the case passed, or with passed false. */
export function observe(area: string, attack: string, expected: string, observed: string, passed: boolean | 'not run' = true): void {
  rows.push({ area, attack, expected, observed: observed.replace(/\s+/g, ' ').trim().slice(0, 160), passed });
}

function table(): string {
  const escape = (text: string) => text.replace(/\|/g, '\\|');
  const lines = ['| area | attack or fault | expected | observed | |', '| --- | --- | --- | --- | --- |'];
  for (const row of rows) lines.push(`| ${row.area} | ${escape(row.attack)} | ${escape(row.expected)} | ${escape(row.observed)} | ${row.passed === 'not run' ? 'not run' : row.passed ? 'contained' : '**NOT CONTAINED**'} |`);
  return lines.join('\n');
}

export const mochaHooks = {
  afterAll() {
    if (rows.length === 0) return;
    const text = `# Hostile code, bad input and faults: what is proven\n\n${table()}\n`;
    const dir = resolve(__dirname, '../../out');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'hostile-report.md'), text);
    process.stdout.write(`\n${text}\n(also in out/hostile-report.md)\n`);
  },
};
