/**
 * The persistent Python interpreter against a real engine: state lives across calls, a final
 * expression's value is shown, exceptions keep the state, a timeout interrupts and keeps it, a crash
 * is reported and the next call starts afresh.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../../src/core/engine/engine';
import { Interpreter } from '../../src/core/interpreters/interpreter';
import { openSession } from './namedSession';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { Redactor } from '../../src/core/secrets/redaction';
import { callNamedTool, runNamedTool, type ToolCallContext } from '../../src/core/tools/runTool';
import { imageSize } from '../../src/core/results/images';
import { runCliText } from './cliRunner';
import { PNG_MAKER } from './pngMaker';
import { TEST_IMAGES, requireEngine, testEngine } from './harness';
import { toolsOn } from './toolsOn';

describe('persistent Python interpreter (real engine)', function () {
  this.timeout(120_000);
  const engine = testEngine();
  let sandbox: Sandbox;
  let python: Interpreter;

  before(async function () {
    await requireEngine(this);
    ({ sandbox } = await openSession(engine, resolveSpec({ runtime: 'python' }), {
      name: 'interpreter-test',
      workspaceFolder: mkdtempSync(join(tmpdir(), 'agent-sandbox-interpreter-')),
    }));
    python = await Interpreter.start(sandbox, 'python', 1024 * 1024);
  });
  after(async () => {
    await python?.close();
    if (sandbox) await engine.remove(sandbox.info.id);
    await engine.dispose();
  });

  it('keeps variables, imports and open files across 50 calls, and shows a final value', async () => {
    await python.run('import math\ntotal = 0\nlog = open("/tmp/log.txt", "w")', { timeoutMs: 30_000 });
    for (let i = 1; i <= 50; i++) {
      const result = await python.run(`total += ${i}\nlog.write("${i}\\n")\ntotal`, { timeoutMs: 30_000 });
      assert.equal(result.outcome, 'ok', result.error);
      assert.equal(result.value, String((i * (i + 1)) / 2));
    }
    const final = await python.run('log.close()\nprint(open("/tmp/log.txt").read().count("\\n"), math.pi > 3)', {
      timeoutMs: 30_000,
    });
    assert.equal(final.stdout, '50 True\n');
    assert.equal(final.value, undefined);
  });

  it('keeps stdout and stderr apart, child processes included', async () => {
    const result = await python.run(
      'import os, sys\nprint("out")\nprint("err", file=sys.stderr)\nos.system("echo child")',
      {
        timeoutMs: 30_000,
      },
    );
    assert.equal(result.stdout, 'out\nchild\n');
    assert.equal(result.stderr, 'err\n');
    assert.equal(result.value, '0');
  });

  it('an exception returns its traceback and keeps the state', async () => {
    await python.run('kept = "yes"', { timeoutMs: 30_000 });
    const failed = await python.run('def f():\n    return 1 / 0\nf()', { timeoutMs: 30_000 });
    assert.equal(failed.outcome, 'error');
    assert.match(
      failed.error!,
      /File "<cell>", line 3, in <module>[\s\S]*line 2, in f[\s\S]*ZeroDivisionError: division by zero/,
    );
    assert.doesNotMatch(failed.error!, /kernel|<string>/);
    assert.equal((await python.run('kept', { timeoutMs: 30_000 })).value, "'yes'");
  });

  it('a timeout interrupts the code and keeps the state', async () => {
    await python.run('before = 7', { timeoutMs: 30_000 });
    const stuck = await python.run('import time\nwhile True:\n    time.sleep(0.05)', { timeoutMs: 1_000 });
    assert.equal(stuck.outcome, 'timeout');
    assert.equal(stuck.stateLost, false);
    assert.match(stuck.error!, /KeyboardInterrupt/);
    assert.equal((await python.run('before * 6', { timeoutMs: 30_000 })).value, '42');
  });

  it('code that ignores the interrupt is killed at the second deadline; the next call says the state was lost', async () => {
    const stubborn = await python.run(
      'import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.05)',
      { timeoutMs: 500 },
    );
    assert.equal(stubborn.outcome, 'timeout');
    assert.equal(stubborn.stateLost, true);
    assert.match(stubborn.error!, /was killed/);
    assert.equal(python.alive, false);
    python = await Interpreter.start(sandbox, 'python', 1024 * 1024);
    assert.equal((await python.run('1 + 1', { timeoutMs: 30_000 })).value, '2');
  });

  it("is the session's: a second client finds the same state, and closing a client keeps it", async () => {
    await python.run('shared = "from the first client"', { timeoutMs: 30_000 });
    const second = await Interpreter.start(sandbox, 'python', 1024 * 1024);
    try {
      assert.ok(second.callsBefore > 0, 'the same kernel');
      assert.equal((await second.run('shared', { timeoutMs: 30_000 })).value, "'from the first client'");
    } finally {
      await second.close();
    }
    assert.equal((await python.run('shared', { timeoutMs: 30_000 })).value, "'from the first client'");
  });

  it('a client whose connection is reset leaves nothing in the next call’s output', async () => {
    // A process that dies mid-request, leaving the kernel's greeting unread (so its socket is reset), must
    // not put the kernel's own traceback in the user's stderr.
    const reset = await sandbox.exec({
      cmd: [
        'python3',
        '-c',
        'import socket, time\ns = socket.socket(socket.AF_UNIX)\ns.connect("/tmp/.agent-sandbox/python.sock")\ntime.sleep(0.2)\ns.send(b\'{"id": 1, "co\')\ns.close()',
      ],
    });
    assert.equal(reset.exitCode, 0, reset.stderr);
    const next = await python.run('"still here"', { timeoutMs: 30_000 });
    assert.equal(next.value, "'still here'");
    assert.equal(next.stderr, '');
  });

  it('a call another client gave up on before it started is not run late', async () => {
    const second = await Interpreter.start(sandbox, 'python', 1024 * 1024);
    try {
      const busy = python.run('import time\nopen("/tmp/busy-started", "w").close()\ntime.sleep(4)\n"slept"', {
        timeoutMs: 30_000,
      });
      // The second call must queue behind the first, which must have started.
      while ((await sandbox.exec({ cmd: ['test', '-e', '/tmp/busy-started'] })).exitCode !== 0);
      const late = await second.run('ran_late = True', { timeoutMs: 1_000 });
      assert.equal(late.outcome, 'timeout');
      assert.match(late.error!, /had not started the code within its 1 s limit .* the interpreter will not run it/);
      assert.equal(late.notStarted, true);
      assert.equal(late.stateLost, false);
      assert.equal((await busy).value, "'slept'");
      assert.equal((await python.run('"ran_late" in globals()', { timeoutMs: 30_000 })).value, 'False');
    } finally {
      await second.close();
    }
  });

  it('a crash (os._exit) is reported with its exit code', async () => {
    const crashed = await python.run('import os\nos._exit(3)', { timeoutMs: 30_000 });
    assert.equal(crashed.outcome, 'crashed');
    assert.equal(crashed.stateLost, true);
    assert.match(crashed.error!, /exit code 3/);
    assert.equal(python.alive, false);
    const next = await Interpreter.start(sandbox, 'python', 1024 * 1024);
    assert.equal(next.previousEnd, 'The Python interpreter ended with exit code 3.');
    assert.equal(next.callsBefore, 0);
    python = next;
  });
});

describe('sandbox_exec with code (the tools path, real engine)', function () {
  this.timeout(120_000);
  const engine = testEngine();
  let tool: ToolCallContext;
  const secret = 'sk-interpreter-5e1f0c9a7d';

  before(async function () {
    await requireEngine(this);
    tool = toolsOn(engine, 'agent-sandbox-interpreter-tools-', {
      injectedEnv: () => ({ PROBE_KEY: secret }),
      redact: (text) => new Redactor({ PROBE_KEY: secret }).redact(text),
    });
  });
  after(async () => {
    await tool?.service.closeAll().catch(() => undefined);
    await tool?.service.closeInterpreters();
    await engine.dispose();
  });

  it('keeps state between calls, shows the value, and keeps host secrets out of it', async () => {
    await runNamedTool('sandbox_open', { runtime: 'python' }, tool);
    const first = await runNamedTool(
      'sandbox_exec',
      { code: 'import os\nkey = os.environ["PROBE_KEY"]\nlen(key)' },
      tool,
    );
    assert.match(first, /^python 3\.[\d.]+ \(persistent\) · [\d.]+ m?s · docker · sandbox default\nvalue:\n25$/);
    const value = await runNamedTool('sandbox_exec', { code: 'key' }, tool);
    assert.match(value, /\[secret:PROBE_KEY\]/);
    assert.ok(!value.includes(secret), value);
  });

  it('after a crash, the next call starts a new interpreter and says the state was lost', async () => {
    await runNamedTool('sandbox_exec', { code: 'kept = 1' }, tool);
    const crashed = await runNamedTool('sandbox_exec', { code: 'import os\nos._exit(9)' }, tool);
    assert.match(crashed, /^failed · python/);
    assert.match(crashed, /state is gone/);
    const next = await runNamedTool('sandbox_exec', { code: '"kept" in globals()' }, tool);
    assert.match(
      next,
      /Note: A new Python interpreter was started, so the variables and imports of the last one are gone: The Python interpreter ended with exit code 9\./,
    );
    assert.match(next, /value:\nFalse/);
  });

  it('refuses cwd, env or stdin with code, and language without code, naming the field', async () => {
    await assert.rejects(
      runNamedTool('sandbox_exec', { code: '1', cwd: '/tmp' }, tool),
      /code: cwd, env and stdin are for command and cmd/,
    );
    await assert.rejects(
      runNamedTool('sandbox_exec', { command: 'true', language: 'python' }, tool),
      /language goes with code/,
    );
    await assert.rejects(runNamedTool('sandbox_exec', { code: '1', command: 'true' }, tool), /exactly one of command/);
  });
});

describe('the persistent interpreter from the command line (a process per call)', function () {
  this.timeout(120_000);
  let folder: string;
  const cli = (...args: string[]) =>
    runCliText([args[0]!, '--folder', folder, ...args.slice(1)], {
      stdin: '',
      env: { AGENT_SANDBOX_ENGINE: 'docker', AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python },
    });

  before(async function () {
    await requireEngine(this);
    folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-interpreter-cli-'));
    const opened = await cli('open', '--runtime', 'python');
    assert.equal(opened.code, 0, opened.stderr);
  });
  after(async () => {
    await cli('close', '--all');
  });

  it('keeps state from one command to the next, exec --python and the tool command alike', async () => {
    const first = await cli('exec', '--python', 'import math\nr = 2');
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, '');
    const second = await cli('exec', '--python', 'round(math.pi * r ** 2, 3)');
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, '12.566\n');
    const tool = await cli('tool', 'sandbox_exec', '{"code": "r + 1"}');
    assert.match(tool.stdout, /^python 3\.[\d.]+ \(persistent\) .*\nvalue:\n3\n?$/);
    const failed = await cli('exec', '--python', 'undefined_name');
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /NameError: name 'undefined_name' is not defined/);
    const images = mkdtempSync(join(tmpdir(), 'agent-sandbox-cli-images-'));
    const pictured = await runCliText(['tool', 'sandbox_exec', '--folder', folder, '--json', '-'], {
      stdin: JSON.stringify({ code: `${PNG_MAKER}\nPicture(30, 20)` }),
      env: {
        AGENT_SANDBOX_ENGINE: 'docker',
        AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
        AGENT_SANDBOX_IMAGES: images,
      },
    });
    const parts = (JSON.parse(pictured.stdout) as { parts: { type: string; path?: string; mime?: string }[] }).parts;
    const saved = parts.find((part) => part.type === 'image');
    assert.ok(saved?.path?.startsWith(images), pictured.stdout);
    assert.deepEqual(imageSize({ mime: 'image/png', data: readFileSync(saved!.path!), source: 'file' }), {
      width: 30,
      height: 20,
    });
    const usage = await cli('exec', '--python', '1', '--', 'true');
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /either --python CODE or a command/);
  });
});

describe('images from the persistent interpreter (real engine)', function () {
  this.timeout(120_000);
  const engine = testEngine();
  let tool: ToolCallContext;

  before(async function () {
    await requireEngine(this);
    tool = toolsOn(engine, 'agent-sandbox-interpreter-images-');
    await runNamedTool('sandbox_open', { runtime: 'python' }, tool);
    await runNamedTool('sandbox_exec', { code: PNG_MAKER }, tool);
  });
  after(async () => {
    await tool?.service.closeAll().catch(() => undefined);
    await tool?.service.closeInterpreters();
    await engine.dispose();
  });

  it('an image value and a picture written to /tmp/outputs come back as PNG images, said in the text', async () => {
    const output = await callNamedTool(
      'sandbox_exec',
      {
        code: 'import os\nos.makedirs("/tmp/outputs", exist_ok=True)\nopen("/tmp/outputs/chart.png", "wb").write(png(600, 400))\nPicture(320, 200)',
      },
      tool,
    );
    const images = output.images ?? [];
    assert.deepEqual(
      images.map((image) => [image.source, image.mime, imageSize(image)]),
      [
        ['the value', 'image/png', { width: 320, height: 200 }],
        ['/tmp/outputs/chart.png', 'image/png', { width: 600, height: 400 }],
      ],
    );
    assert.match(
      output.text,
      /2 images came back: the value \(320×200 PNG, \d+ KB, files\/f_[0-9a-f]{16}\), \/tmp\/outputs\/chart\.png \(600×400 PNG, \d+ KB, files\/f_[0-9a-f]{16}\)\./,
    );
    // Kept in the file store, under the names a person would give them, byte for byte.
    for (const [image, name] of images.map((image, i) => [image, ['value.png', 'chart.png'][i]] as const)) {
      const stored = await tool.store.get(image.key!);
      assert.equal(stored.file.name, name);
      assert.ok(Buffer.from(stored.data).equals(Buffer.from(image.data)), `${name} is stored byte for byte`);
    }
    const again = await callNamedTool('sandbox_exec', { code: '1 + 1' }, tool);
    assert.deepEqual(again.images, [], 'a picture is returned by the call that made it, not again');
  });

  it('returns at most four, and says which were left out', async () => {
    const output = await callNamedTool(
      'sandbox_exec',
      {
        code: 'for i in range(6):\n    open("/tmp/outputs/p%d.png" % i, "wb").write(png(10 + i, 10))',
      },
      tool,
    );
    assert.equal(output.images?.length, 4);
    assert.match(
      output.text,
      /Images not returned \(at most 4, of 5 MiB each\): \/tmp\/outputs\/p4\.png, \/tmp\/outputs\/p5\.png\./,
    );
  });

  // The provisioned Python image carries Debian's matplotlib, pandas, numpy and Pillow (provision-engine.sh).
  it('a matplotlib figure left open comes back as a PNG of its size, and closed', async () => {
    const output = await callNamedTool(
      'sandbox_exec',
      {
        code: 'import matplotlib.pyplot as plt, numpy as np\nfig = plt.figure(figsize=(6, 4))\nplt.plot(np.sin(np.linspace(0, 6, 50)))\nplt.title("sine")',
      },
      tool,
    );
    assert.deepEqual(
      (output.images ?? []).map((image) => [image.source, image.mime, imageSize(image)]),
      [['figure 1', 'image/png', { width: 600, height: 400 }]],
      output.text,
    );
    assert.match(output.text, /1 image came back: figure 1 \(600×400 PNG, \d+ KB, files\/f_[0-9a-f]{16}\)/);
    const after = await callNamedTool('sandbox_exec', { code: 'plt.get_fignums()' }, tool);
    assert.match(after.text, /value:\n\[\]/, 'the figure was closed once returned');
  });

  it('names an SVG written to /tmp/outputs, which no model takes as a picture, instead of dropping it silently', async () => {
    const output = await callNamedTool(
      'sandbox_exec',
      {
        code: 'import matplotlib.pyplot as plt\nplt.figure(figsize=(2, 2)); plt.plot([1, 2])\nplt.savefig("/tmp/outputs/chart.svg"); plt.close("all")',
      },
      tool,
    );
    assert.deepEqual(output.images, []);
    assert.match(
      output.text,
      /Images not returned[^\n]*\/tmp\/outputs\/chart\.svg \(SVG: models take PNG, JPEG, GIF or WebP pictures; save it as PNG too\)/,
    );
  });

  it('a Pillow image value comes back, scaled down to 1568 px when larger', async () => {
    const output = await callNamedTool(
      'sandbox_exec',
      { code: 'from PIL import Image\nImage.new("RGB", (3000, 1000), (200, 40, 40))' },
      tool,
    );
    assert.deepEqual(
      (output.images ?? []).map((image) => [image.source, imageSize(image)]),
      [['the value', { width: 1568, height: 523 }]],
      output.text,
    );
  });

  it('a pandas DataFrame value is a compact table: head and tail rows, its shape', async () => {
    const output = await callNamedTool(
      'sandbox_exec',
      {
        code: 'import pandas as pd\ndf = pd.DataFrame({"n": range(50), "half": [x / 2 for x in range(50)], "text": ["x" * 80] * 50})\ndf',
      },
      tool,
    );
    const value = /value:\n([\s\S]*)$/.exec(output.text)?.[1] ?? '';
    const lines = value.trimEnd().split('\n');
    assert.ok(lines.length <= 14, `at most 10 rows, the header, the gap and the shape: ${value}`);
    assert.match(value, /^\s+n\s+half\s+text/);
    assert.match(value, /^49\s+49\s+24\.5\s/m, 'the last row is there');
    assert.match(value, /\[50 rows x 3 columns\]/);
    assert.ok(!value.includes('x'.repeat(60)), 'long cells are cut');
    assert.equal(output.images?.length ?? 0, 0);
  });
});
