import assert from 'node:assert/strict';
import { USAGE, UsageError, parseCommandLine, specFromFlags } from '../../src/cli/args';
import { exitCodeFor } from '../../src/cli/commands';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { GiB } from '../../src/core/spec/units';

describe('command line', () => {
  it('parses exec with the command after --', () => {
    const args = parseCommandLine(['exec', '--session', 'build', '--timeout', '5', '--', 'python3', '-c', 'print(1)']);
    assert.equal(args.command, 'exec');
    assert.equal(args.values.session, 'build');
    assert.deepEqual(args.positionals, ['python3', '-c', 'print(1)']);
  });

  it('parses exec --node CODE beside exec --python CODE, and says both in the usage', () => {
    const args = parseCommandLine(['exec', '--session', 'web', '--node', 'const a = 1; a + 1']);
    assert.equal(args.command, 'exec');
    assert.equal(args.values.node, 'const a = 1; a + 1');
    assert.equal(args.values.python, undefined);
    assert.deepEqual(args.positionals, []);
    assert.match(USAGE, /exec {3}\[--session NAME\] \[--timeout SECONDS\] \(--python CODE \| --node CODE\)/);
  });

  it('turns flags into a spec layer', () => {
    const args = parseCommandLine([
      'open',
      '--runtime',
      'node',
      '--memory',
      '1g',
      '--network',
      '--workspace',
      'ro',
      '--env',
      'A=b=c',
    ]);
    const spec = resolveSpec({ mode: 'code' }, specFromFlags(args.values));
    assert.equal(spec.runtime, 'node');
    assert.equal(spec.limits.memoryBytes, GiB);
    assert.equal(spec.network, true);
    assert.equal(spec.workspaceAccess, 'ro');
    assert.deepEqual(spec.env, { A: 'b=c' });
  });

  it('refuses unknown commands, flags and values as usage errors', () => {
    assert.throws(() => parseCommandLine(['launch']), UsageError);
    assert.throws(() => parseCommandLine(['run', '--bogus']), UsageError);
    assert.throws(
      () => specFromFlags(parseCommandLine(['run', '--runtime', 'ruby']).values),
      /--runtime must be one of python, node, bash, linux/,
    );
    assert.throws(() => specFromFlags(parseCommandLine(['run', '--workspace', 'all']).values), UsageError);
    assert.throws(() => specFromFlags(parseCommandLine(['run', '--env', 'NOEQUALS']).values), /NAME=VALUE/);
  });

  it("exits with the program's code, 124 on timeout, 137 on OOM", () => {
    const base = {
      stdout: '',
      stderr: '',
      stdoutBytes: 0,
      stderrBytes: 0,
      stdoutTruncated: false,
      stderrTruncated: false,
      durationMs: 1,
      notices: [],
    };
    assert.equal(exitCodeFor({ ...base, outcome: 'ok', exitCode: 0 }), 0);
    assert.equal(exitCodeFor({ ...base, outcome: 'error', exitCode: 3 }), 3);
    assert.equal(exitCodeFor({ ...base, outcome: 'timeout', exitCode: null }), 124);
    assert.equal(exitCodeFor({ ...base, outcome: 'oom', exitCode: 137 }), 137);
  });
});
