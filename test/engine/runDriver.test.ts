/**
 * sandbox_run with Python, as a fresh interpreter: the value of the last line is shown, the images
 * the program left come back (and are kept in the file store), and a program's output, exit code and
 * traceback stay what python3 would give. On the Docker engine (with the provisioned image's
 * matplotlib and Pillow) and on the virtual engine (value and exit codes).
 */
import assert from 'node:assert/strict';
import type { SandboxEngine } from '../../src/core/engine/engine';
import { imageSize } from '../../src/core/results/images';
import { callNamedTool, type ToolCallContext } from '../../src/core/tools/runTool';
import { VirtualEngine } from '../../src/engines/virtual/virtualEngine';
import { requireEngine, testEngine } from './harness';
import { toolsOn } from './toolsOn';

function runTools(engine: SandboxEngine, name: string, maxStdoutBytes = 1024 * 1024): ToolCallContext {
  return toolsOn(engine, 'agent-sandbox-run-driver-', { engineName: name, settings: { limits: { maxStdoutBytes } } });
}

const run = (code: string, tool: ToolCallContext) => callNamedTool('sandbox_run', { runtime: 'python', code }, tool);

function sharedCases(tools: () => ToolCallContext): void {
  it('shows the value of the last line beside the program output', async () => {
    const output = await run('import sys\nprint("hello")\nrows = [1, 2, 3]\nsum(rows) * 7', tools());
    assert.match(output.text, /^exit code 0 · /);
    assert.match(output.text, /\nvalue:\n42\nstdout:\nhello\n?$/);
  });

  it('leaves a program without a final value exactly as python3 would print it', async () => {
    const output = await run('for i in range(3):\n    print(i)', tools());
    assert.match(output.text, /\nstdout:\n0\n1\n2\n?$/);
    assert.doesNotMatch(output.text, /value:|agent-sandbox-result/);
  });

  it('keeps the exit code of sys.exit and the traceback of an exception, in the program’s own file', async () => {
    const exited = await run('import sys\nprint("bye")\nsys.exit(3)', tools());
    assert.equal(exited.exitCode, 3);
    assert.doesNotMatch(exited.text, /agent-sandbox-result|\.run\.py/);
    const failed = await run('def f():\n    return 1 / 0\nf()', tools());
    assert.equal(failed.exitCode, 1);
    assert.match(failed.text, /File "\/tmp\/agent-sandbox\/main\.py", line 3, in <module>/);
    assert.match(failed.text, /ZeroDivisionError: division by zero/);
    assert.doesNotMatch(failed.text, /\.run\.py|_jb_script/, 'none of our own frames');
  });

  it('runs the program as __main__, with its folder first on sys.path', async () => {
    const output = await run(
      'import sys, os\nprint(__name__, os.path.basename(__file__), sys.path[0], sys.argv)',
      tools(),
    );
    assert.match(output.text, /__main__ main\.py \/tmp\/agent-sandbox \['\/tmp\/agent-sandbox\/main\.py'\]/);
  });
}

describe('sandbox_run with Python: the value of the last line and the images (real engine)', function () {
  this.timeout(120_000);
  const engine = testEngine();
  let tool: ToolCallContext;

  before(async function () {
    await requireEngine(this);
    tool = runTools(engine, 'docker');
  });
  after(async () => {
    await engine.dispose();
  });

  sharedCases(() => tool);

  it('returns a matplotlib figure left open as a PNG image, kept in the file store', async () => {
    const output = await run(
      'import matplotlib.pyplot as plt\nplt.figure(figsize=(6, 4))\nplt.plot([3, 1, 2])\nprint("plotted")',
      tool,
    );
    assert.equal(output.exitCode, 0, output.text);
    const images = output.images ?? [];
    assert.deepEqual(
      images.map((image) => [image.source, image.mime, imageSize(image)]),
      [['figure 1', 'image/png', { width: 600, height: 400 }]],
    );
    assert.match(output.text, /1 image came back: figure 1 \(600×400 PNG, \d+ KB, files\/f_[0-9a-f]{16}\)/);
    const stored = await tool.store.get(images[0]!.key!);
    assert.ok(Buffer.from(stored.data).equals(Buffer.from(images[0]!.data)));
    assert.match(output.text, /\nstdout:\nplotted\n?$/);
  });

  it('says which images stdout could not carry, and never cuts one', async () => {
    const small = runTools(engine, 'docker', 64 * 1024);
    const output = await run(
      'import os\nfrom PIL import Image\nImage.frombytes("RGB", (300, 300), os.urandom(300 * 300 * 3))',
      small,
    );
    assert.equal(output.exitCode, 0, output.text);
    assert.deepEqual(output.images, []);
    assert.match(
      output.text,
      /Images not returned \(at most 4, of 5 MiB each\): the value \(over what sandbox_run carries; a session returns it\)\./,
    );
  });
});

describe('sandbox_run with Python: the value of the last line (virtual engine)', function () {
  this.timeout(120_000);
  const engine = new VirtualEngine();
  const tool = runTools(engine, 'virtual');
  after(async () => {
    await engine.dispose();
  });

  sharedCases(() => tool);
});
