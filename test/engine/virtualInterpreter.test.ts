/**
 * The virtual engine's persistent Python (WebAssembly CPython kept by the session's worker): state
 * lives across calls, a final expression's value is shown, stdout and stderr stay apart, exceptions
 * keep the state, a timeout interrupts and keeps it, code that ignores the interrupt costs the
 * interpreter (and says so), the files are the session's own, and the tools give Docker's result
 * shape. No Docker needed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../../src/core/engine/engine';
import type { PersistentInterpreter } from '../../src/core/interpreters/persistentInterpreter';
import { imageSize } from '../../src/core/results/images';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { MiB } from '../../src/core/spec/units';
import { callNamedTool, runNamedTool, type ToolCallContext } from '../../src/core/tools/runTool';
import { VirtualEngine } from '../../src/engines/virtual/virtualEngine';
import { openSession } from './namedSession';
import { PNG_MAKER } from './pngMaker';
import { toolsOn } from './toolsOn';

const LONG = { timeoutMs: 60_000 };

describe('persistent Python on the virtual engine', function () {
  this.timeout(120_000);
  const engine = new VirtualEngine();
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-virtual-interpreter-'));
  let sandbox: Sandbox;
  let python: PersistentInterpreter;

  before(async () => {
    ({ sandbox } = await openSession(engine, resolveSpec({ runtime: 'python', workspaceAccess: 'rw' }), {
      name: 'virtual-interpreter',
      workspaceFolder: folder,
    }));
    python = await sandbox.openInterpreter!('python', 1024 * 1024);
  });
  after(async () => {
    await engine.dispose();
    rmSync(folder, { recursive: true, force: true });
  });

  it('is a new CPython of the session, in WebAssembly', () => {
    assert.equal(python.language, 'python');
    assert.match(python.version, /^3\.\d+\.\d+$/);
    assert.equal(python.callsBefore, 0);
    assert.equal(python.previousEnd, undefined);
    assert.equal(python.alive, true);
  });

  it('keeps variables, imports and open files across 50 calls, and shows a final value', async () => {
    const setup = await python.run('import math\ntotal = 0\nlog = open("/tmp/log.txt", "w")', LONG);
    assert.equal(setup.outcome, 'ok', setup.error);
    for (let i = 1; i <= 50; i++) {
      const result = await python.run(`total += ${i}\nlog.write("${i}\\n")\ntotal`, LONG);
      assert.equal(result.outcome, 'ok', result.error);
      assert.equal(result.value, String((i * (i + 1)) / 2));
    }
    const final = await python.run('log.close()\nprint(open("/tmp/log.txt").read().count("\\n"), math.pi > 3)', LONG);
    assert.equal(final.stdout, '50 True\n');
    assert.equal(final.value, undefined, 'a final call with no expression shows no value');
  });

  it('shows values as a REPL does: repr, None left out, _ kept', async () => {
    assert.equal((await python.run('"text"', LONG)).value, "'text'");
    assert.equal((await python.run('[1, 2] * 2', LONG)).value, '[1, 2, 1, 2]');
    assert.equal((await python.run('None', LONG)).value, undefined);
    assert.equal((await python.run('_ + [3]', LONG)).value, '[1, 2, 1, 2, 3]');
  });

  it('keeps stdout and stderr apart, low-level writes included', async () => {
    const result = await python.run(
      'import os, sys\nprint("out")\nprint("err", file=sys.stderr)\nos.write(1, b"raw\\n")\nos.write(2, b"raw err\\n")\n7',
      LONG,
    );
    assert.equal(result.stdout, 'out\nraw\n');
    assert.equal(result.stderr, 'err\nraw err\n');
    assert.equal(result.stdoutBytes, 8);
    assert.equal(result.value, '7');
  });

  it('keeps at most the cap of each stream and counts the rest', async () => {
    const loud = await python.run('import sys\nprint("x" * 2_000_000)\nsys.stderr.write("e" * 1_500_000)', LONG);
    assert.equal(loud.stdout.length, 1024 * 1024);
    assert.equal(loud.stdoutBytes, 2_000_001);
    assert.equal(loud.stderr.length, 1024 * 1024);
    assert.equal(loud.stderrBytes, 1_500_000);
    assert.equal(loud.value, '1500000');
  });

  it('an exception returns its traceback and keeps the state', async () => {
    await python.run('kept = "yes"', LONG);
    const failed = await python.run('def f():\n    return 1 / 0\nf()', LONG);
    assert.equal(failed.outcome, 'error');
    assert.equal(failed.stateLost, false);
    assert.match(
      failed.error!,
      /File "<cell>", line 3, in <module>[\s\S]*line 2, in f[\s\S]*ZeroDivisionError: division by zero/,
    );
    assert.doesNotMatch(failed.error!, /<string>|kernel/, 'none of our own frames');
    assert.equal((await python.run('kept', LONG)).value, "'yes'");
    const exited = await python.run('import sys\nsys.exit(4)', LONG);
    assert.match(exited.error!, /SystemExit: 4 \(the interpreter keeps running; its state is kept\)/);
    assert.equal((await python.run('kept', LONG)).value, "'yes'");
  });

  it('a timeout interrupts a busy loop and keeps the state; the next call runs', async () => {
    await python.run('before = 7', LONG);
    const stuck = await python.run('n = 0\nwhile True:\n    n += 1', { timeoutMs: 1_000 });
    assert.equal(stuck.outcome, 'timeout');
    assert.equal(stuck.stateLost, false);
    assert.match(stuck.error!, /KeyboardInterrupt/);
    assert.equal(python.alive, true);
    assert.equal((await python.run('before * 6', LONG)).value, '42');
    assert.equal((await python.run('n > 0', LONG)).value, 'True', 'what the loop did is kept');
  });

  it('a timeout wakes time.sleep too', async () => {
    const sleeping = await python.run('import time\nprint("going to sleep")\ntime.sleep(600)', { timeoutMs: 1_000 });
    assert.equal(sleeping.outcome, 'timeout');
    assert.equal(sleeping.stateLost, false);
    assert.equal(sleeping.stdout, 'going to sleep\n', 'output before the interrupt is kept');
    assert.match(sleeping.error!, /KeyboardInterrupt/);
    const slept = await python.run('t = time.monotonic()\ntime.sleep(0.2)\ntime.monotonic() - t >= 0.2', LONG);
    assert.equal(slept.value, 'True', 'time.sleep still sleeps');
  });

  it('a cancelled call is interrupted and keeps the state', async () => {
    const controller = new AbortController();
    const call = python.run('while True:\n    pass', { timeoutMs: 60_000, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('cancelled by the test')), 200);
    const cancelled = await call;
    assert.equal(cancelled.outcome, 'cancelled');
    assert.equal(cancelled.stateLost, false);
    assert.equal((await python.run('before', LONG)).value, '7');
  });

  it('a second handle finds the same state; closing a handle keeps it', async () => {
    await python.run('shared = "from the first handle"', LONG);
    const second = await sandbox.openInterpreter!('python', 1024 * 1024);
    assert.ok(second.callsBefore > 0, 'the same interpreter');
    assert.equal(second.previousEnd, undefined);
    assert.equal((await second.run('shared', LONG)).value, "'from the first handle'");
    await second.close();
    assert.equal(second.alive, false);
    assert.equal((await python.run('shared', LONG)).value, "'from the first handle'");
  });

  // Its files are the session's own: the file tools, commands and the interpreter see the same ones.
  it('a file written by the file tools is read by the interpreter, and the other way round', async () => {
    await sandbox.writeFiles([{ path: 'notes/in.txt', content: 'from the file tool\n' }]);
    const read = await python.run('open("/workspace/notes/in.txt").read()', LONG);
    assert.equal(read.value, "'from the file tool\\n'");
    const relative = await python.run('import os\nos.getcwd(), open("notes/in.txt").read().strip()', LONG);
    assert.equal(relative.value, "('/workspace', 'from the file tool')");
    const asCommands = await python.run('open("/host/workspace/notes/in.txt").read()', LONG);
    assert.equal(
      asCommands.value,
      "'from the file tool\\n'",
      "also at /host, as the session's python3 commands see it",
    );
    await python.run(
      'import os\nos.makedirs("/workspace/out", exist_ok=True)\nwith open("/workspace/out/result.txt", "w") as f:\n    f.write("from the interpreter\\n")',
      LONG,
    );
    assert.equal((await sandbox.readFile('out/result.txt')).content, 'from the interpreter\n');
    assert.equal(readFileSync(join(folder, 'out', 'result.txt'), 'utf8'), 'from the interpreter\n', 'in the folder');
    assert.equal((await sandbox.exec({ command: 'cat /workspace/out/result.txt' })).stdout, 'from the interpreter\n');
  });

  // What Python itself still buffers is not written, as in a container; what it wrote is seen once a call ends.
  it('what the code wrote to a file it keeps open is seen outside once a call ends', async () => {
    await python.run('journal = open("/workspace/journal.txt", "a", buffering=1)\njournal.write("first\\n")', LONG);
    assert.equal((await sandbox.readFile('journal.txt')).content, 'first\n');
    await python.run('journal.write("second\\n")\njournal.write("unflushed")', LONG);
    assert.equal((await sandbox.readFile('journal.txt')).content, 'first\nsecond\n');
    await python.run('journal.close()', LONG);
    assert.equal((await sandbox.readFile('journal.txt')).content, 'first\nsecond\nunflushed');
  });

  it('changes made outside between calls are seen by the next call', async () => {
    await python.run(
      'import os\nos.makedirs("/tmp/scratch", exist_ok=True)\nopen("/tmp/scratch/a", "w").write("a")',
      LONG,
    );
    const removed = await sandbox.exec({ command: 'rm -r /tmp/scratch && mkdir -p /data && echo there > /data/b' });
    assert.equal(removed.exitCode, 0, removed.stderr);
    const seen = await python.run(
      'os.path.exists("/tmp/scratch"), open("/data/b").read(), os.makedirs("/tmp/scratch", exist_ok=True)',
      LONG,
    );
    assert.equal(seen.outcome, 'ok', seen.error);
    assert.equal(seen.value, "(False, 'there\\n', None)");
    assert.equal((await sandbox.exec({ command: 'test -d /tmp/scratch && echo yes' })).stdout, 'yes\n');
  });

  it('imports a module written by the file tools, also after the first import failed', async () => {
    const missing = await python.run('import helper', LONG);
    assert.match(missing.error!, /ModuleNotFoundError: No module named 'helper'/);
    await sandbox.writeFiles([{ path: 'helper.py', content: 'def answer():\n    return 6 * 7\n' }]);
    assert.equal((await python.run('import helper\nhelper.answer()', LONG)).value, '42');
  });

  it('leaves no __pycache__ in the workspace', async () => {
    const listed = await sandbox.listFiles('.');
    assert.ok(!listed.entries.some((entry) => entry.path.endsWith('__pycache__')), JSON.stringify(listed.entries));
  });

  it('returns pictures: an image value and one written to /tmp/outputs', async () => {
    await python.run(PNG_MAKER, LONG);
    const result = await python.run('open("/tmp/outputs/chart.png", "wb").write(png(60, 40))\nPicture(32, 20)', LONG);
    assert.deepEqual(
      result.images.map((image) => [image.source, image.mime, imageSize(image)]),
      [
        ['the value', 'image/png', { width: 32, height: 20 }],
        ['/tmp/outputs/chart.png', 'image/png', { width: 60, height: 40 }],
      ],
    );
    assert.deepEqual((await python.run('1 + 1', LONG)).images, [], 'a picture comes back once');
  });

  it('code that ignores the interrupt costs the interpreter, said truthfully; the next one starts afresh', async () => {
    await python.run('doomed = 1', LONG);
    const stubborn = await python.run(
      'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass',
      { timeoutMs: 500 },
    );
    assert.equal(stubborn.outcome, 'timeout');
    assert.equal(stubborn.stateLost, true);
    assert.match(stubborn.error!, /was ended: its code ran past its time limit and did not stop within 5 s/);
    assert.equal(python.alive, false);
    const after = await python.run('1', LONG);
    assert.equal(after.stateLost, true, 'a handle on an ended interpreter says so');
    python = await sandbox.openInterpreter!('python', 1024 * 1024);
    assert.equal(python.callsBefore, 0);
    assert.match(python.previousEnd!, /was ended: its code ran past its time limit/);
    const fresh = await python.run('"doomed" in globals()', LONG);
    assert.equal(fresh.value, 'False');
    assert.equal((await sandbox.readFile('out/result.txt')).content, 'from the interpreter\n', 'the files stay');
  });

  it('a crash (os._exit) is reported with its exit code', async () => {
    const crashed = await python.run('import os\nos._exit(3)', LONG);
    assert.equal(crashed.outcome, 'crashed');
    assert.equal(crashed.stateLost, true);
    assert.equal(crashed.error, 'The Python interpreter ended with exit code 3.');
    assert.equal(python.alive, false);
    python = await sandbox.openInterpreter!('python', 1024 * 1024);
    assert.equal(python.previousEnd, 'The Python interpreter ended with exit code 3.');
    assert.equal((await python.run('6 * 7', LONG)).value, '42');
  });

  it('ends with its session', async () => {
    await sandbox.close();
    assert.equal(python.alive, false);
    const after = await python.run('1', LONG);
    assert.equal(after.stateLost, true);
    assert.match(after.error!, /closed/);
  });
});

describe('persistent Python on the virtual engine within a memory limit', function () {
  this.timeout(120_000);
  const engine = new VirtualEngine();
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-virtual-interpreter-memory-'));
  after(async () => {
    await engine.dispose();
    rmSync(folder, { recursive: true, force: true });
  });

  it('an allocation past the limit is a MemoryError, and the state is kept', async () => {
    const { sandbox } = await openSession(
      engine,
      resolveSpec({ runtime: 'python', limits: { memoryBytes: 128 * MiB } }),
      { name: 'virtual-interpreter-memory', workspaceFolder: folder },
    );
    const python = await sandbox.openInterpreter!('python', 1024 * 1024);
    await python.run('kept = 5', LONG);
    // 200 MiB fits in the WebAssembly heap's own cap (512 MiB) but not in the session's 128 MiB.
    const big = await python.run('block = bytearray(200 * 1024 * 1024)', LONG);
    assert.equal(big.outcome, 'error');
    assert.match(big.error!, /MemoryError/);
    assert.equal((await python.run('small = bytearray(16 * 1024 * 1024)\nkept', LONG)).value, '5');
  });
});

describe('sandbox_exec with code on the virtual engine (the tools path)', function () {
  this.timeout(120_000);
  const engine = new VirtualEngine();
  let tool: ToolCallContext;

  before(async () => {
    tool = toolsOn(engine, 'agent-sandbox-virtual-interpreter-tools-', { engineName: 'virtual' });
    await runNamedTool('sandbox_open', { runtime: 'python' }, tool);
  });
  after(async () => {
    await tool?.service.closeAll().catch(() => undefined);
    await tool?.service.closeInterpreters();
    await engine.dispose();
  });

  it("keeps state between calls and gives Docker's result shape: headline, value, stdout and stderr", async () => {
    const first = await runNamedTool('sandbox_exec', { code: 'import math\nr = 2\nlen("x" * 25)' }, tool);
    assert.match(first, /^python 3\.[\d.]+ \(persistent\) · [\d.]+ m?s · virtual · sandbox default\nvalue:\n25$/);
    const second = await runNamedTool(
      'sandbox_exec',
      { code: 'import sys\nprint("area")\nprint("careful", file=sys.stderr)\nround(math.pi * r ** 2, 3)' },
      tool,
    );
    assert.match(
      second,
      /^python 3\.[\d.]+ \(persistent\) · [\d.]+ m?s · virtual · sandbox default\nvalue:\n12\.566\nstdout:\narea\nstderr:\ncareful$/,
    );
  });

  it('an exception fails the call with its traceback after stderr, and what to do', async () => {
    const failed = await runNamedTool('sandbox_exec', { code: 'undefined_name' }, tool);
    assert.match(failed, /^failed · python 3\.[\d.]+ \(persistent\) · /);
    assert.match(failed, /Next: Read the traceback in stderr/);
    assert.match(
      failed,
      /stderr:\nTraceback \(most recent call last\):\n {2}File "<cell>", line 1, in <module>\nNameError/,
    );
    assert.match(await runNamedTool('sandbox_exec', { code: 'r' }, tool), /value:\n2$/);
  });

  it('a timeout says the state is kept, and it is', async () => {
    const stuck = await runNamedTool('sandbox_exec', { code: 'while True:\n    pass', timeout_seconds: 1 }, tool);
    assert.match(stuck, /^timed out · python 3\.[\d.]+ \(persistent\) · /);
    assert.match(stuck, /the interpreter and its state are kept/);
    assert.match(await runNamedTool('sandbox_exec', { code: 'r * 21' }, tool), /value:\n42$/);
  });

  it('pictures come back as images, said in the text', async () => {
    await runNamedTool('sandbox_exec', { code: PNG_MAKER }, tool);
    const output = await callNamedTool('sandbox_exec', { code: 'Picture(48, 24)' }, tool);
    assert.deepEqual(
      (output.images ?? []).map((image) => [image.source, imageSize(image)]),
      [['the value', { width: 48, height: 24 }]],
    );
    assert.match(output.text, /1 image came back: the value \(48×24 PNG, \d+ KB/);
  });

  it('after the interpreter was ended, the next call says the state was lost', async () => {
    await runNamedTool('sandbox_exec', { code: 'kept = 1' }, tool);
    const ended = await runNamedTool(
      'sandbox_exec',
      {
        code: 'import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass',
        timeout_seconds: 1,
      },
      tool,
    );
    assert.match(ended, /^timed out · python/);
    assert.match(ended, /state is gone/);
    const next = await runNamedTool('sandbox_exec', { code: '"kept" in globals()' }, tool);
    assert.match(
      next,
      /Note: A new Python interpreter was started, so the variables and imports of the last one are gone: The Python interpreter was ended: its code ran past its time limit/,
    );
    assert.match(next, /value:\nFalse$/);
  });

  it('language node is refused on this engine, naming what to do', async () => {
    await assert.rejects(
      runNamedTool('sandbox_exec', { code: '1 + 1', language: 'node' }, tool),
      /The virtual engine keeps no Node\.js interpreter between calls; it keeps only Python's/,
    );
  });
});
