import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { UsageError, parseCommandLine } from '../../src/cli/args';
import { Output } from '../../src/cli/output';
import { expandPromptArguments, globToRegExp } from '../../src/cli/promptFiles';
import { readPromptFile } from '../../src/cli/readPromptFile';
import { analyzePrompt } from '../../src/core/prompt/analyzePrompt';

describe('agent-sandbox validate: files and output', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-validate-'));
  before(() => {
    for (const file of [
      'agents/a.prompt',
      'agents/team/b.prompt',
      'agents/notes.md',
      'node_modules/x/c.prompt',
      'top.prompt',
    ]) {
      mkdirSync(join(folder, file, '..'), { recursive: true });
      writeFileSync(join(folder, file), '---\nsandbox: python\n---\n');
    }
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  it('matches globs: ** spans folders, * and ? do not, {a,b} picks one', () => {
    assert.ok(globToRegExp('agents/**/*.prompt').test('agents/a.prompt'));
    assert.ok(globToRegExp('agents/**/*.prompt').test('agents/team/b.prompt'));
    assert.ok(!globToRegExp('agents/*.prompt').test('agents/team/b.prompt'));
    assert.ok(globToRegExp('agents/?.prompt').test('agents/a.prompt'));
    assert.ok(globToRegExp('{agents,other}/a.{prompt,txt}').test('agents/a.prompt'));
    assert.ok(!globToRegExp('*.prompt').test('agents/a.prompt'));
  });

  it('expands folders, globs and plain files, leaving node_modules out', () => {
    assert.deepEqual(expandPromptArguments(['agents'], folder), ['agents/a.prompt', 'agents/team/b.prompt']);
    assert.deepEqual(expandPromptArguments(['**/*.prompt'], folder), [
      'agents/a.prompt',
      'agents/team/b.prompt',
      'top.prompt',
    ]);
    assert.deepEqual(expandPromptArguments(['./agents/*.prompt', 'top.prompt', 'agents/a.prompt'], folder), [
      'agents/a.prompt',
      'top.prompt',
    ]);
    assert.deepEqual(expandPromptArguments([join(folder, 'agents/team/*.prompt')], '/'), [
      join(folder, 'agents/team/b.prompt'),
    ]);
    assert.deepEqual(expandPromptArguments(['.'], join(folder, 'agents')), ['a.prompt', 'team/b.prompt']);
  });

  it('refuses arguments that name nothing', () => {
    assert.throws(() => expandPromptArguments(['missing.prompt'], folder), UsageError);
    assert.throws(() => expandPromptArguments(['nothing/**/*.prompt'], folder), /No file matches nothing/);
    assert.equal(parseCommandLine(['validate', 'a.prompt', '--json']).command, 'validate');
  });

  it('reads only regular files: a FIFO or a folder named on the command line is skipped, never waited on', async () => {
    execFileSync('mkfifo', [join(folder, 'pipe.prompt')]);
    assert.deepEqual(await readPromptFile(join(folder, 'pipe.prompt')), {
      skipped: 'it is not a regular file (a FIFO)',
    });
    assert.deepEqual(await readPromptFile(join(folder, 'agents')), { skipped: 'it is a directory' });
    assert.deepEqual(await readPromptFile(join(folder, 'top.prompt')), { text: '---\nsandbox: python\n---\n' });
    assert.deepEqual(
      expandPromptArguments(['.'], folder).includes('pipe.prompt'),
      false,
      "a folder's FIFOs are not listed",
    );
  });

  it('prints file:line:col: severity: message, or a JSON array with --json', () => {
    const problems = analyzePrompt('---\nsandbox:\n  runtime: pyhton\n  alow_network: true\n---\n').problems;
    const capture = (json: boolean) => {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      new Output(json, stdout, stderr).promptProblems([
        { file: 'agents/a.prompt', problems },
        { file: 'ok.prompt', problems: [] },
      ]);
      return { stdout: String(stdout.read() ?? ''), stderr: String(stderr.read() ?? '') };
    };
    const text = capture(false);
    assert.equal(
      text.stdout,
      'agents/a.prompt:3:12: error: sandbox.runtime "pyhton" is not one of python, node, bash, linux; did you mean python?\nagents/a.prompt:4:3: warning: Unknown key "alow_network" in the sandbox block; did you mean allow_network?\n',
    );
    assert.equal(text.stderr, 'agent-sandbox: checked 2 file(s): 1 error(s), 1 warning(s)\n');
    const json = JSON.parse(capture(true).stdout);
    assert.deepEqual(json[0], {
      file: 'agents/a.prompt',
      line: 3,
      column: 12,
      endLine: 3,
      endColumn: 18,
      severity: 'error',
      code: 'invalid-value',
      message: 'sandbox.runtime "pyhton" is not one of python, node, bash, linux; did you mean python?',
    });
    assert.equal(json.length, 2);
  });
});
