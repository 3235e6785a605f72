/**
 * just-bash's CPython is linked with Emscripten's default C stack of 64 KiB, and running a script
 * file takes more than that: computing sys.path[0] (realpath of the script) puts about 64 KiB of
 * path buffers on the stack, which then runs past its end into CPython's static data. What it
 * overwrote depended on where the stack stood when main() began, which moves with the size of the
 * arguments (callMain puts them on the stack first, the worker's own file path as argv[0]): for some
 * sizes the interpreter printed its output and then aborted while finalizing ("Fatal Python error:
 * gilstate_tss_clear: failed to clear current tstate (TSS)"), exit code 1. The extension installed
 * in VS Code hit it on every Python run, from the length of its install path. pythonWorker.ts now
 * gives each interpreter a stack of its own in its heap; this walks the arguments' size across
 * every 16-byte step of the stack's alignment, so that one size that overflowed in the old layout
 * is always among them. No Docker needed.
 */
import assert from 'node:assert/strict';
import { runCompute } from '../../src/core/sessions/compute';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { VirtualEngine } from '../../src/engines/virtual/virtualEngine';

/** Argument sizes from 1 byte to 512, 16 apart: callMain aligns the stack to 16 bytes. */
const STEPS = 32;

describe('the virtual engine’s python3 and the size of its arguments', function () {
  this.timeout(180_000);
  const engine = new VirtualEngine();
  after(() => engine.dispose());

  it('a script ends with exit code 0 whatever the size of its arguments (no C stack overflow)', async () => {
    const result = await runCompute(engine, resolveSpec({ runtime: 'bash', timeoutSeconds: 150 }), {
      code: [
        "printf 'import sys\\nprint(len(sys.argv[1]))\\n' > /tmp/arg_length.py",
        'pad=""',
        `for step in $(seq 1 ${STEPS}); do`,
        '  python3 /tmp/arg_length.py "x$pad" || echo "python3 failed with an argument of $((${#pad} + 1)) bytes"',
        '  pad="${pad}xxxxxxxxxxxxxxxx"',
        'done',
      ].join('\n'),
    });
    const expected = Array.from({ length: STEPS }, (_, step) => `${1 + 16 * step}\n`).join('');
    assert.equal(result.stdout, expected, result.stderr);
    assert.doesNotMatch(result.stderr, /Fatal Python error|Aborted/, result.stderr);
    assert.equal(result.exitCode, 0, result.stderr);
  });

  it('the same for a program file in a session, with its arguments on the command line', async () => {
    const sandbox = await engine.open(resolveSpec({ runtime: 'python', mode: 'code' }), { ephemeral: true });
    try {
      await sandbox.writeFiles([{ path: 'main.py', content: 'import sys\nprint(len(sys.argv[1]))\n' }]);
      for (let step = 0; step < STEPS; step++) {
        const argument = 'a'.repeat(1 + 16 * step);
        const ran = await sandbox.exec({ cmd: ['python3', 'main.py', argument] });
        assert.equal(ran.exitCode, 0, `an argument of ${argument.length} bytes: ${ran.stderr}`);
        assert.equal(ran.stdout, `${argument.length}\n`, ran.stderr);
      }
    } finally {
      await sandbox.close();
    }
  });
});
