/**
 * The persistent Node.js interpreter against a real engine, as interpreter.test.ts tests the Python
 * one: state lives across calls, a final expression's value is shown, exceptions keep the state, a
 * timeout interrupts a synchronous loop or a pending await and keeps it, a crash is reported and the
 * next call starts afresh, pictures written to /tmp/outputs come back.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
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
import { NODE_PNG_MAKER } from './pngMaker';
import { TEST_IMAGES, requireEngine, testEngine } from './harness';
import { toolsOn } from './toolsOn';

const CAP = 1024 * 1024;
const CALL = { timeoutMs: 30_000 };

describe('persistent Node.js interpreter (real engine)', function () {
  this.timeout(120_000);
  const engine = testEngine();
  let sandbox: Sandbox;
  let node: Interpreter;

  before(async function () {
    await requireEngine(this);
    ({ sandbox } = await openSession(engine, resolveSpec({ runtime: 'node' }), {
      name: 'node-interpreter-test',
      workspaceFolder: mkdtempSync(join(tmpdir(), 'agent-sandbox-node-interpreter-')),
    }));
    node = await Interpreter.start(sandbox, 'node', CAP);
  });
  after(async () => {
    await node?.close();
    if (sandbox) await engine.remove(sandbox.info.id);
    await engine.dispose();
  });

  it('is node alone: its version, and no python3 among the processes that serve it', async () => {
    assert.match(node.version, /^v\d+\.\d+\.\d+$/);
    const processes = await sandbox.exec({ command: 'cat /proc/[0-9]*/comm' });
    const names = processes.stdout.split('\n');
    assert.ok(names.includes('node'), processes.stdout);
    assert.ok(!names.some((name) => name.startsWith('python')), processes.stdout);
  });

  it('keeps const, let, functions, classes, requires and open files across 50 calls, and shows a final value', async () => {
    const setup = await node.run(
      [
        "const fs = require('fs')",
        'let total = 0',
        "const log = fs.openSync('/tmp/log.txt', 'w')",
        'function add(n) {',
        '  total += n',
        '  return total',
        '}',
        'class Counter { constructor() { this.calls = 0 } }',
        'var counter = new Counter()',
      ].join('\n'),
      CALL,
    );
    assert.equal(setup.outcome, 'ok', setup.error);
    assert.equal(setup.value, undefined, 'declarations have no value');
    for (let i = 1; i <= 50; i++) {
      const result = await node.run(`fs.writeSync(log, "${i}\\n")\ncounter.calls++\nadd(${i})`, CALL);
      assert.equal(result.outcome, 'ok', result.error);
      assert.equal(result.value, String((i * (i + 1)) / 2));
    }
    const final = await node.run(
      "fs.closeSync(log)\nconsole.log(fs.readFileSync('/tmp/log.txt', 'utf8').split('\\n').length - 1, counter.calls, counter instanceof Counter)",
      CALL,
    );
    assert.equal(final.outcome, 'ok', final.error);
    assert.equal(final.stdout, '50 50 true\n');
    assert.equal(final.value, undefined);
  });

  it('lets a later call declare a name again, as one reruns a fixed cell', async () => {
    await node.run('const limit = 1\nclass Shape {}\nfunction area() { return 1 }', CALL);
    const again = await node.run(
      'const limit = 2\nclass Shape { sides() { return 4 } }\nfunction area() { return 2 }',
      CALL,
    );
    assert.equal(again.outcome, 'ok', again.error);
    assert.equal((await node.run('[limit, new Shape().sides(), area()]', CALL)).value, '[ 2, 4, 2 ]');
  });

  it('makes a var in a block or a loop head outside any function global, as a script does', async () => {
    const loops = await node.run(
      'for (var i = 0; i < 3; i++) {}\nfor (var key in { x: 1 }) {}\nfor (var [first] of [[7]]) {}\ntry {\n  var parsed = JSON.parse(\'{"a": 1}\')\n} catch {}\nif (true) var flag = true\nfunction local() { var hidden = 1 }',
      CALL,
    );
    assert.equal(loops.outcome, 'ok', loops.error);
    assert.equal(
      (await node.run('[i, key, first, parsed.a, flag, typeof hidden]', CALL)).value,
      "[ 3, 'x', 7, 1, true, 'undefined' ]",
    );
  });

  it('awaits at the top level and awaits a final Promise; import works, static and dynamic', async () => {
    const slept = await node.run(
      "await new Promise((resolve) => setTimeout(resolve, 10))\nconst later = 'after a sleep'",
      CALL,
    );
    assert.equal(slept.outcome, 'ok', slept.error);
    const promised = await node.run('new Promise((resolve) => setTimeout(() => resolve(later.length * 2), 10))', CALL);
    assert.equal(promised.value, '26');
    const imported = await node.run(
      "import { join } from 'node:path'\nimport * as os from 'node:os'\nconst { readFile } = await import('node:fs/promises');\n[join('a', 'b'), typeof os.cpus, typeof readFile]",
      CALL,
    );
    assert.equal(imported.value, "[ 'a/b', 'function', 'function' ]", imported.error);
  });

  it('shows values as the Node REPL does, and nothing for undefined', async () => {
    assert.equal(
      (await node.run("({ name: 'x', list: [1, 2, { deep: true }] })", CALL)).value,
      "{ name: 'x', list: [ 1, 2, { deep: true } ] }",
    );
    assert.equal(
      (await node.run('{ a: 1 }', CALL)).value,
      '{ a: 1 }',
      'an object literal on its own, as the REPL reads it',
    );
    assert.equal((await node.run("'yes'", CALL)).value, "'yes'");
    assert.equal((await node.run('new Map([[1, 2]])', CALL)).value, 'Map(1) { 1 => 2 }');
    assert.equal((await node.run('null', CALL)).value, 'null');
    assert.equal((await node.run('undefined', CALL)).value, undefined);
    assert.equal((await node.run('console.log("printed")', CALL)).value, undefined);
  });

  it('keeps stdout and stderr apart, child processes included, and caps them', async () => {
    const result = await node.run(
      "console.log('out')\nconsole.error('err')\nprocess.stdout.write('written\\n')\nrequire('child_process').execSync('echo child; echo child-err >&2', { stdio: 'inherit' })\n0",
      CALL,
    );
    assert.equal(result.outcome, 'ok', result.error);
    assert.equal(result.stdout, 'out\nwritten\nchild\n');
    assert.equal(result.stderr, 'err\nchild-err\n');
    assert.equal(result.value, '0');
    const flood = await node.run("process.stdout.write('x'.repeat(3 * 1024 * 1024))\n'done'", CALL);
    assert.equal(flood.stdout.length, CAP);
    assert.equal(flood.stdoutBytes, 3 * 1024 * 1024);
    assert.equal(flood.value, "'done'");
    assert.equal((await node.run("console.log('next')", CALL)).stdout, 'next\n', 'the next call starts clean');
  });

  it("the code sees no part of the kernel's protocol: process.argv is node's own, and a listing of the processes stays whole", async () => {
    assert.equal((await node.run('process.argv.slice(1)', CALL)).value, '[]');
    const listing = await node.run(
      "require('child_process').execSync('cat /proc/[0-9]*/cmdline', { stdio: 'inherit' })\nconsole.log('end of listing')",
      CALL,
    );
    assert.equal(listing.outcome, 'ok', listing.error);
    assert.match(listing.stdout, /--expose-internals[\s\S]*end of listing\n$/);
    const after = await node.run("console.log('after')\n'value'", CALL);
    assert.equal(after.stdout, 'after\n');
    assert.equal(after.value, "'value'");
  });

  it('an exception returns its stack, the code’s own frames only, and keeps the state', async () => {
    await node.run("const kept = 'yes'", CALL);
    const failed = await node.run('function f() {\n  return null.field\n}\nf()', CALL);
    assert.equal(failed.outcome, 'error');
    assert.match(
      failed.error!,
      /^TypeError: Cannot read properties of null \(reading 'field'\)\n\s+at f \(<cell>:2:\d+\)\n\s+at <cell>:4:\d+$/,
    );
    assert.doesNotMatch(failed.error!, /\[eval\]|node:vm|node:internal/);
    const syntax = await node.run('const ok = 1\nconst = 2', CALL);
    assert.equal(syntax.outcome, 'error');
    assert.match(syntax.error!, /^<cell>:2\nconst = 2\n\s+\^\n\nSyntaxError: Unexpected token '='$/);
    const thrown = await node.run("throw { reason: 'not an Error' }", CALL);
    assert.equal(thrown.error, "{ reason: 'not an Error' }");
    assert.equal((await node.run('kept', CALL)).value, "'yes'");
  });

  it('an error in a callback after the call is shown, and does not end the interpreter', async () => {
    const result = await node.run(
      "setTimeout(() => { throw new Error('in a timer') }, 1)\nPromise.reject(new Error('unhandled'))\nawait new Promise((resolve) => setTimeout(resolve, 50))\n'alive'",
      CALL,
    );
    assert.equal(result.value, "'alive'", result.error);
    assert.match(result.stderr, /Uncaught \(in promise\) Error: unhandled\n/);
    assert.match(result.stderr, /Uncaught Error: in a timer\n\s+at Timeout\._onTimeout \(<cell>:1:\d+\)/);
    assert.ok(node.alive);
  });

  it('a timeout interrupts a synchronous loop and keeps the state', async () => {
    await node.run('const before = 7', CALL);
    const stuck = await node.run('let spins = 0\nwhile (true) { spins++ }', { timeoutMs: 1_000 });
    assert.equal(stuck.outcome, 'timeout');
    assert.equal(stuck.stateLost, false);
    assert.match(stuck.error!, /Interrupted \(SIGINT\)/);
    assert.equal((await node.run('before * 6', CALL)).value, '42');
    assert.equal((await node.run('spins > 0', CALL)).value, 'true', 'what the loop did is kept');
  });

  it('a timeout interrupts a pending await and keeps the state', async () => {
    const waiting = await node.run('await new Promise((resolve) => setTimeout(resolve, 600_000))', {
      timeoutMs: 1_000,
    });
    assert.equal(waiting.outcome, 'timeout');
    assert.equal(waiting.stateLost, false);
    assert.match(waiting.error!, /Interrupted \(SIGINT\): the call stopped waiting/);
    assert.equal((await node.run('before + 1', CALL)).value, '8');
  });

  it('code that ignores the interrupt is killed at the second deadline; the next start says the state was lost', async () => {
    const stubborn = await node.run(
      "await null\nprocess.removeAllListeners('SIGINT')\nprocess.on('SIGINT', () => {})\nfor (;;) await new Promise((resolve) => setTimeout(resolve, 50))",
      { timeoutMs: 500 },
    );
    assert.equal(stubborn.outcome, 'timeout');
    assert.equal(stubborn.stateLost, true);
    assert.match(stubborn.error!, /was killed/);
    assert.equal(node.alive, false);
    node = await Interpreter.start(sandbox, 'node', CAP);
    assert.equal(
      node.previousEnd,
      'The Node.js interpreter was killed by signal 9 (SIGKILL: the memory limit, or a kill).',
    );
    assert.equal(node.callsBefore, 0);
    assert.equal((await node.run('typeof before', CALL)).value, "'undefined'");
    assert.equal((await node.run('1 + 1', CALL)).value, '2');
  });

  it("is the session's: a second client finds the same state, and closing a client keeps it", async () => {
    await node.run("const shared = 'from the first client'", CALL);
    const second = await Interpreter.start(sandbox, 'node', CAP);
    try {
      assert.ok(second.callsBefore > 0, 'the same kernel');
      assert.equal(second.previousEnd, undefined);
      assert.equal((await second.run('shared', CALL)).value, "'from the first client'");
    } finally {
      await second.close();
    }
    assert.equal((await node.run('shared', CALL)).value, "'from the first client'");
  });

  it('a call another client gave up on before it started is not run late', async () => {
    const second = await Interpreter.start(sandbox, 'node', CAP);
    try {
      const busy = node.run(
        "require('fs').writeFileSync('/tmp/busy-started', '')\nawait new Promise((done) => setTimeout(done, 4000))\n'slept'",
        CALL,
      );
      // The second call must queue behind the first, which must have started.
      while ((await sandbox.exec({ cmd: ['test', '-e', '/tmp/busy-started'] })).exitCode !== 0);
      const late = await second.run('globalThis.ranLate = true', { timeoutMs: 1_000 });
      assert.equal(late.outcome, 'timeout');
      assert.match(late.error!, /the interpreter will not run it/);
      assert.equal((await busy).value, "'slept'");
      assert.equal((await node.run('typeof globalThis.ranLate', CALL)).value, "'undefined'");
    } finally {
      await second.close();
    }
  });

  it('pictures written to /tmp/outputs during a call come back, at most four', async () => {
    await node.run(NODE_PNG_MAKER, CALL);
    // /tmp/outputs is there from the start.
    const drawn = await node.run(
      "fs.writeFileSync('/tmp/outputs/chart.png', png(60, 40))\nfs.writeFileSync('/tmp/outputs/notes.txt', 'not a picture')",
      CALL,
    );
    assert.deepEqual(
      drawn.images.map((image) => [image.source, image.mime, imageSize(image)]),
      [['/tmp/outputs/chart.png', 'image/png', { width: 60, height: 40 }]],
    );
    assert.deepEqual((await node.run('1 + 1', CALL)).images, [], 'a picture comes back with the call that made it');
    const many = await node.run(
      "for (let i = 0; i < 6; i++) fs.writeFileSync('/tmp/outputs/p' + i + '.png', png(10 + i, 10))",
      CALL,
    );
    assert.deepEqual(
      many.images.map((image) => image.source),
      ['/tmp/outputs/p0.png', '/tmp/outputs/p1.png', '/tmp/outputs/p2.png', '/tmp/outputs/p3.png'],
    );
    assert.deepEqual(many.notices, [
      'Images not returned (at most 4, of 5 MiB each): /tmp/outputs/p4.png, /tmp/outputs/p5.png.',
    ]);
    const vector = await node.run(
      'fs.writeFileSync(\'/tmp/outputs/chart.svg\', \'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>\')',
      CALL,
    );
    assert.deepEqual(vector.images, []);
    assert.deepEqual(vector.notices, [
      'Images not returned (at most 4, of 5 MiB each): /tmp/outputs/chart.svg (SVG: models take PNG, JPEG, GIF or WebP pictures; save it as PNG too).',
    ]);
  });

  it('a crash (process.exit) is reported with its exit code; the next start is a new interpreter', async () => {
    await node.run('const doomed = 1', CALL);
    const crashed = await node.run('process.exit(3)', CALL);
    assert.equal(crashed.outcome, 'crashed');
    assert.equal(crashed.stateLost, true);
    assert.match(crashed.error!, /exit code 3/);
    assert.equal(node.alive, false);
    const next = await Interpreter.start(sandbox, 'node', CAP);
    assert.equal(next.previousEnd, 'The Node.js interpreter ended with exit code 3.');
    assert.equal(next.callsBefore, 0);
    node = next;
    assert.equal((await node.run('typeof doomed', CALL)).value, "'undefined'");
  });
});

describe('the Node.js interpreter at its memory limit (real engine)', function () {
  this.timeout(120_000);
  const engine = testEngine();
  let sandbox: Sandbox;
  let node: Interpreter | undefined;

  before(async function () {
    await requireEngine(this);
    ({ sandbox } = await openSession(engine, resolveSpec({ runtime: 'node', limits: { memoryBytes: '192m' } }), {
      name: 'node-interpreter-oom-test',
      workspaceFolder: mkdtempSync(join(tmpdir(), 'agent-sandbox-node-oom-')),
    }));
  });
  after(async () => {
    await node?.close();
    if (sandbox) await engine.remove(sandbox.info.id);
    await engine.dispose();
  });

  it('running out of memory ends the interpreter, says so, and the next start is a new one', async () => {
    node = await Interpreter.start(sandbox, 'node', CAP);
    const grown = await node.run('const hoard = []\nfor (;;) hoard.push(Buffer.alloc(16 * 1024 * 1024, 1))', CALL);
    assert.equal(grown.outcome, 'crashed', grown.error);
    assert.equal(grown.stateLost, true);
    assert.match(grown.error!, /The Node\.js interpreter (was killed by signal \d+|ended with exit code \d+)/);
    await node.close();
    node = await Interpreter.start(sandbox, 'node', CAP);
    assert.equal(node.previousEnd, grown.error);
    assert.equal((await node.run('typeof hoard', CALL)).value, "'undefined'");
  });
});

describe('sandbox_exec with language node (the tools path, real engine)', function () {
  this.timeout(120_000);
  const engine = testEngine();
  let tool: ToolCallContext;
  const secret = 'sk-node-interpreter-3b9d2e7a';

  before(async function () {
    await requireEngine(this);
    tool = toolsOn(engine, 'agent-sandbox-node-interpreter-tools-', {
      injectedEnv: () => ({ PROBE_KEY: secret }),
      redact: (text) => new Redactor({ PROBE_KEY: secret }).redact(text),
    });
    await runNamedTool('sandbox_open', { runtime: 'node' }, tool);
  });
  after(async () => {
    await tool?.service.closeAll().catch(() => undefined);
    await tool?.service.closeInterpreters();
    await engine.dispose();
  });

  it('keeps state between calls, shows the value under a node headline, and keeps host secrets out of it', async () => {
    const first = await runNamedTool(
      'sandbox_exec',
      { language: 'node', code: 'const key = process.env.PROBE_KEY\nkey.length' },
      tool,
    );
    assert.match(first, /^node v\d+\.\d+\.\d+ \(persistent\) · [\d.]+ m?s · docker · sandbox default\nvalue:\n28$/);
    const value = await runNamedTool('sandbox_exec', { language: 'node', code: 'key' }, tool);
    assert.match(value, /\[secret:PROBE_KEY\]/);
    assert.ok(!value.includes(secret), value);
  });

  it('an exception fails the call with its stack in stderr', async () => {
    const failed = await runNamedTool('sandbox_exec', { language: 'node', code: 'missingName + 1' }, tool);
    assert.match(failed, /^failed · node v[\d.]+ \(persistent\)/);
    assert.match(failed, /stderr:\nReferenceError: missingName is not defined\n\s+at <cell>:1:1/);
  });

  it('a picture written to /tmp/outputs comes back as an image, said in the text', async () => {
    const output = await callNamedTool(
      'sandbox_exec',
      {
        language: 'node',
        code: `${NODE_PNG_MAKER}\nrequire('fs').mkdirSync('/tmp/outputs', { recursive: true })\nrequire('fs').writeFileSync('/tmp/outputs/chart.png', png(60, 40))`,
      },
      tool,
    );
    assert.deepEqual(
      (output.images ?? []).map((image) => [image.source, image.mime, imageSize(image)]),
      [['/tmp/outputs/chart.png', 'image/png', { width: 60, height: 40 }]],
      output.text,
    );
    assert.match(output.text, /1 image came back: \/tmp\/outputs\/chart\.png \(60×40 PNG, \d+ KB/);
  });

  it('after a crash, the next call starts a new interpreter and says the state was lost', async () => {
    await runNamedTool('sandbox_exec', { language: 'node', code: 'const kept = 1' }, tool);
    const crashed = await runNamedTool('sandbox_exec', { language: 'node', code: 'process.exit(9)' }, tool);
    assert.match(crashed, /^failed · node/);
    assert.match(crashed, /state is gone/);
    const next = await runNamedTool('sandbox_exec', { language: 'node', code: 'typeof kept' }, tool);
    assert.match(
      next,
      /Note: A new Node\.js interpreter was started, so the variables and imports of the last one are gone: The Node\.js interpreter ended with exit code 9\./,
    );
    assert.match(next, /value:\n'undefined'/);
  });
});

describe('the Node.js interpreter from the command line (a process per call)', function () {
  this.timeout(120_000);
  let folder: string;
  const cli = (...args: string[]) =>
    runCliText([args[0]!, '--folder', folder, ...args.slice(1)], {
      stdin: '',
      env: { AGENT_SANDBOX_ENGINE: 'docker', AGENT_SANDBOX_IMAGE_NODE: TEST_IMAGES.node },
    });

  before(async function () {
    await requireEngine(this);
    folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-node-interpreter-cli-'));
    const opened = await cli('open', '--runtime', 'node');
    assert.equal(opened.code, 0, opened.stderr);
  });
  after(async () => {
    await cli('close', '--all');
  });

  it('keeps state from one command to the next, exec --node and the tool command alike', async () => {
    const first = await cli('exec', '--node', 'const r = 2');
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, '');
    const second = await cli('exec', '--node', 'Math.round(Math.PI * r ** 2 * 1000) / 1000');
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, '12.566\n');
    const tool = await cli('tool', 'sandbox_exec', '{"language": "node", "code": "r + 1"}');
    assert.match(tool.stdout, /^node v[\d.]+ \(persistent\) .*\nvalue:\n3\n?$/);
    const failed = await cli('exec', '--node', 'undefinedName');
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /ReferenceError: undefinedName is not defined/);
    const usage = await cli('exec', '--node', '1', '--', 'true');
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /either --node CODE or a command/);
    const both = await cli('exec', '--node', '1', '--python', '1');
    assert.equal(both.code, 2);
    assert.match(both.stderr, /one of --python CODE and --node CODE/);
  });
});
