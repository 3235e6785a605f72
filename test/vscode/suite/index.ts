// Entry point of the "vscode" test tier inside the extension host: the module VS Code loads as
// extensionTestsPath (the same shape for code-server and @vscode/test-electron). Runs mocha (tdd)
// over every compiled *.test.js beside this file. Mocha is bundled into this file.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { format } from 'node:util';
import Mocha from 'mocha';

interface Results {
  passed: number;
  failed: number;
  pending: number;
  failures: { title: string; error: string }[];
}

// The workbench logs a lot through the same channel as the extension host's console; the runner
// prints only what carries this mark (stripped), and keeps the rest in its workbench log. The
// extension host pins console.* (no setter), so only mocha's reporter output is marked: a test's
// own console.log lands in that log, not on the runner's stdout.
const OUTPUT_MARK = '\u2063[vscode-suite]';

function markReporterOutput(): () => void {
  const original = Mocha.reporters.Base.consoleLog;
  // Run by the test driver extension, the reporter's lines go to a file the runner prints as they come.
  const outputFile = process.env.AGENT_SANDBOX_VSCODE_OUTPUT;
  Mocha.reporters.Base.consoleLog = outputFile
    ? (...args: unknown[]) => fs.appendFileSync(outputFile, `${format(...args)}\n`)
    : (...args: unknown[]) => console.log(OUTPUT_MARK, ...args);
  return () => {
    Mocha.reporters.Base.consoleLog = original;
  };
}

export function run(): Promise<void> {
  const mocha = new Mocha({
    ui: 'tdd',
    reporter: 'spec',
    color: false,
    timeout: 30_000,
    ...(process.env.AGENT_SANDBOX_VSCODE_GREP ? { grep: process.env.AGENT_SANDBOX_VSCODE_GREP } : {}),
  });
  // untrusted.test runs alone, in a window whose folder is not trusted (runner flag --untrusted).
  const untrusted = process.env.AGENT_SANDBOX_VSCODE_UNTRUSTED === '1';
  const files = fs
    .readdirSync(__dirname)
    .filter((f) => f.endsWith('.test.js') && (f === 'untrusted.test.js') === untrusted)
    .sort();
  if (files.length === 0) return Promise.reject(new Error(`no *.test.js files in ${__dirname}`));
  for (const f of files) mocha.addFile(path.join(__dirname, f));

  const unmark = markReporterOutput();
  return new Promise<void>((resolve, reject) => {
    const results: Results = { passed: 0, failed: 0, pending: 0, failures: [] };
    try {
      const runner = mocha.run((failures) => {
        results.passed = runner.stats?.passes ?? 0;
        results.failed = Math.max(failures, runner.stats?.failures ?? 0);
        results.pending = runner.stats?.pending ?? 0;
        writeResults(results);
        if (failures > 0) reject(new Error(`${failures} test(s) failed`));
        else resolve();
      });
      runner.on('fail', (test, err: unknown) => {
        results.failures.push({
          title: test.fullTitle(),
          error: err instanceof Error ? (err.stack ?? err.message) : String(err),
        });
      });
    } catch (err) {
      // A test file that throws while loading.
      console.error(
        OUTPUT_MARK,
        'loading the test files failed:',
        err instanceof Error ? (err.stack ?? err.message) : err,
      );
      results.failed = 1;
      results.failures.push({ title: 'loading the test files', error: String(err) });
      writeResults(results);
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  }).finally(unmark);
}

// The runner (test/vscode/runInCodeServer.mjs) reads the counts from here for its summary line.
function writeResults(results: Results): void {
  const file = process.env.AGENT_SANDBOX_VSCODE_RESULTS;
  if (file) fs.writeFileSync(file, JSON.stringify(results, null, 2));
}
