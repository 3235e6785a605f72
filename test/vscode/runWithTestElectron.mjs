#!/usr/bin/env node
// The same "vscode" suite through @vscode/test-electron, for machines that can download VS Code
// (runInCodeServer.mjs is the runner for machines that cannot). Usage:
//   node test/vscode/runWithTestElectron.mjs      (env: AGENT_SANDBOX_VSCODE_EXTENSION, VSCODE_VERSION)
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';
import { ROOT, buildSuite, makeWorkspace, readResults, summarize } from './runInCodeServer.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sandbox-vscode-'));
const resultsFile = path.join(tmp, 'results.json');
let code = 1;
try {
  const workspace = makeWorkspace(path.join(tmp, 'workspace'));
  code = await runTests({
    version: process.env.VSCODE_VERSION || 'stable',
    extensionDevelopmentPath: path.resolve(process.env.AGENT_SANDBOX_VSCODE_EXTENSION || ROOT),
    extensionTestsPath: await buildSuite(),
    launchArgs: [
      workspace,
      '--disable-extensions',
      '--disable-workspace-trust',
      '--skip-welcome',
      '--skip-release-notes',
    ],
    extensionTestsEnv: { AGENT_SANDBOX_VSCODE_RESULTS: resultsFile, AGENT_SANDBOX_VSCODE_WORKSPACE: workspace },
  });
} catch (err) {
  // runTests rejects when the tests fail (exit code in the message) or VS Code cannot be had.
  console.error(`vscode tests: ${err?.message ?? err}`);
}
const exit = summarize(code, readResults(resultsFile));
fs.rmSync(tmp, { recursive: true, force: true });
process.exit(exit);
