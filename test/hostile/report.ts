/**
 * The hostile suite's report: every case records what was expected and what was observed, and the
 * run ends with the table (also written to out/hostile-report.md).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export interface Row {
  area: string;
  attack: string;
  expected: string;
  observed: string;
  passed: boolean | 'not run';
}

const rows: Row[] = [];

/** Records one case; call it after the assertions of the case passed, or with passed false. */
export function observe(
  area: string,
  attack: string,
  expected: string,
  observed: string,
  passed: boolean | 'not run' = true,
): void {
  rows.push({ area, attack, expected, observed: observed.replace(/\s+/g, ' ').trim().slice(0, 160), passed });
}

function table(): string {
  return renderTable(rows);
}

/** The report's table; a case whose host-side check failed reads **NOT CONTAINED**. */
export function renderTable(rows: readonly Row[]): string {
  const escape = (text: string) => text.replace(/\|/g, '\\|');
  const lines = ['| area | attack or fault | expected | observed | |', '| --- | --- | --- | --- | --- |'];
  for (const row of rows)
    lines.push(
      `| ${row.area} | ${escape(row.attack)} | ${escape(row.expected)} | ${escape(row.observed)} | ${row.passed === 'not run' ? 'not run' : row.passed ? 'contained' : '**NOT CONTAINED**'} |`,
    );
  return lines.join('\n');
}

let rowsBefore = 0;

export const mochaHooks = {
  beforeEach() {
    rowsBefore = rows.length;
  },
  /** A case that failed before it recorded itself is in the report all the same, as not contained. */
  afterEach(this: Mocha.Context) {
    const test = this.currentTest;
    if (test?.state !== 'failed') return;
    const own = rows.slice(rowsBefore);
    if (own.some((row) => row.passed === false)) return;
    const error = (test as { err?: Error }).err;
    rows.push({
      area: test.parent?.title ?? 'hostile',
      attack: test.title,
      expected: 'the case passes',
      observed: `failed: ${(error?.message ?? 'unknown').replace(/\s+/g, ' ').slice(0, 140)}`,
      passed: false,
    });
  },
  afterAll() {
    if (rows.length === 0) return;
    const text = `# Hostile code, bad input and faults: what is proven\n\n${table()}\n`;
    // A nested run (reportCanFail.test.ts) writes elsewhere, so the suite's own report stays whole.
    const file = process.env.AGENT_SANDBOX_HOSTILE_REPORT ?? join(resolve(__dirname, '../../out'), 'hostile-report.md');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    process.stdout.write(`\n${text}\n(also in ${relative(process.cwd(), file)})\n`);
  },
};
