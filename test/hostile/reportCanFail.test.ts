// The report must be able to fail (issue 14, item 8): a suite with a breached case and a case that
// fails before it records anything is run on its own, and its report must say NOT CONTAINED for both.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { observe } from './report';

const BREACHED_SUITE = `
import assert from 'node:assert/strict';
import { observe } from ${JSON.stringify(resolve(__dirname, 'report.ts'))};
describe('planted', () => {
  it('a breach that records itself', () => {
    observe('planted', 'canary overwritten', 'canary unchanged', 'canary changed', false);
    assert.fail('the canary changed');
  });
  it('a breach that throws before recording', () => {
    throw new Error('host file written outside the folder');
  });
  it('a contained case', () => {
    observe('planted', 'refused write', 'refused', 'refused', true);
  });
});
`;

describe('the hostile report can fail', function () {
  this.timeout(60_000);

  it('a breached case and a case that failed before recording read NOT CONTAINED; the run fails', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-sandbox-report-'));
    const suite = join(dir, 'planted.test.ts');
    writeFileSync(suite, BREACHED_SUITE);
    const reportFile = join(dir, 'report.md');
    const run = spawnSync(
      process.execPath,
      [
        resolve('node_modules/mocha/bin/mocha.js'),
        '--no-config',
        '--node-option',
        'import=tsx',
        '--require',
        resolve(__dirname, 'report.ts'),
        suite,
      ],
      { encoding: 'utf8', env: { ...process.env, AGENT_SANDBOX_HOSTILE_REPORT: reportFile } },
    );
    const report = readFileSync(reportFile, 'utf8');
    const rows = report.split('\n').filter((line) => line.startsWith('| planted'));
    const breached = rows.filter((line) => line.endsWith('| **NOT CONTAINED** |'));
    const ok = run.status !== 0 && breached.length === 2 && rows.some((line) => line.endsWith('| contained |'));
    observe(
      'report',
      'a planted suite: one breach recorded, one breach thrown before recording, one contained case',
      'two rows NOT CONTAINED, one contained, the run fails',
      `${breached.length} NOT CONTAINED, exit ${run.status}`,
      ok,
    );
    assert.equal(breached.length, 2, report);
    assert.notEqual(run.status, 0);
    assert.ok(
      rows.some((line) => line.endsWith('| contained |')),
      report,
    );
  });
});
