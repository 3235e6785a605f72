import assert from 'node:assert/strict';
import { summarizeInput } from '../../src/core/sessions/activityLog';

describe('summarizeInput (the panel and the activity list)', () => {
  it('names code sent to an interpreter by its language and first line, not as an empty command', () => {
    assert.equal(
      summarizeInput('sandbox_exec', { language: 'node', code: '\n  const x = 1;\nx + 1' }),
      'node: const x = 1;',
    );
    assert.equal(
      summarizeInput('sandbox_exec', { code: 'import pandas as pd\ndf = pd.read_csv("a.csv")' }),
      'python: import pandas as pd',
    );
  });

  it('names a command, an argv and a run as before', () => {
    assert.equal(summarizeInput('sandbox_exec', { command: 'ls  -la\n/tmp' }), 'ls -la /tmp');
    assert.equal(summarizeInput('sandbox_exec', { cmd: ['python3', '-c', 'print(1)'] }), 'python3 -c print(1)');
    assert.equal(summarizeInput('sandbox_run', { runtime: 'bash', code: '\necho hi\necho there' }), 'bash: echo hi');
  });

  it('cuts a long summary to 120 characters', () => {
    const summary = summarizeInput('sandbox_exec', { code: 'x = ' + '1'.repeat(300) });
    assert.equal(summary.length, 120);
    assert.ok(summary.endsWith('…'));
  });
});
