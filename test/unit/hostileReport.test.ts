import assert from 'node:assert/strict';
import { renderTable } from '../hostile/report';

describe('the hostile report', () => {
  it('shows a breached case as NOT CONTAINED, and a case that did not run as not run', () => {
    const table = renderTable([
      {
        area: 'host files',
        attack: 'publish raced by a symlink swap',
        expected: 'no byte outside the folder',
        observed: 'canary changed',
        passed: false,
      },
      { area: 'names', attack: 'forged row', expected: 'escaped', observed: 'escaped', passed: true },
      {
        area: 'faults',
        attack: 'engine restart',
        expected: 'reported',
        observed: 'skipped: engine shared',
        passed: 'not run',
      },
    ]);
    const lines = table.split('\n');
    assert.match(lines[2]!, /publish raced by a symlink swap .*\| canary changed \| \*\*NOT CONTAINED\*\* \|$/);
    assert.match(lines[3]!, /\| contained \|$/);
    assert.match(lines[4]!, /\| not run \|$/);
  });
});
