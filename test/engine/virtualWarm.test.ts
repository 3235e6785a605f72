/**
 * The virtual engine keeps a worker warm for the next sandbox and shares compiled CPython between
 * them; what it must never share is a sandbox's state. A run after another, on the warm worker, sees
 * none of the first one's files, variables or modules: not in bash, not in Python, not in a
 * session's persistent Python. No Docker needed.
 */
import assert from 'node:assert/strict';
import { runCompute } from '../../src/core/sessions/compute';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { VirtualEngine } from '../../src/engines/virtual/virtualEngine';

const MARK = 'leaked-from-the-first-run';

describe('the virtual engine warm worker', function () {
  this.timeout(120_000);
  const engine = new VirtualEngine();
  after(() => engine.dispose());

  it('a second compute run sees none of the first one’s files, variables or modules', async () => {
    const first = await runCompute(engine, resolveSpec({ runtime: 'bash' }), {
      code: [
        `echo ${MARK} > /tmp/first.txt`,
        `echo ${MARK} > /home/user/first.txt`,
        `echo ${MARK} > /workspace/first.txt`,
        `mkdir -p /tmp/pkg && echo "VALUE = '${MARK}'" > /tmp/leaky.py`,
        `export LEAKY=${MARK}`,
        `python3 -c "import builtins, sys; sys.path.insert(0, '/tmp'); import leaky; builtins.LEAKY = leaky.VALUE; print(builtins.LEAKY)"`,
      ].join('\n'),
    });
    assert.equal(first.exitCode, 0, first.stderr);
    assert.equal(first.stdout, `${MARK}\n`);
    // The next run takes the worker that was kept warm meanwhile.
    await engine.warmedUp();
    const second = await runCompute(engine, resolveSpec({ runtime: 'bash' }), {
      code: [
        'ls /tmp/first.txt /home/user/first.txt /workspace/first.txt /tmp/leaky.py 2>&1 | grep -c "No such file"',
        'echo "LEAKY=${LEAKY:-unset}"',
        `python3 -c "import builtins, sys, os; sys.path.insert(0, '/tmp')
print(getattr(builtins, 'LEAKY', 'no builtin'), 'leaky' in sys.modules, os.environ.get('LEAKY', 'no env'))
try:
    import leaky
except ImportError:
    print('no module')"`,
      ].join('\n'),
    });
    assert.equal(second.stdout, '4\nLEAKY=unset\nno builtin False no env\nno module\n', second.stderr);
    assert.doesNotMatch(second.stdout + second.stderr, new RegExp(MARK));
  });

  it('a Python compute run starts a new interpreter: the last run’s globals and imports are gone', async () => {
    const first = await runCompute(engine, resolveSpec({ runtime: 'python' }), {
      code: `import sys, json\nSECRET = '${MARK}'\nsys.modules['leaked_module'] = sys\nsys.argv.append(SECRET)\nprint('set')`,
    });
    assert.equal(first.stdout, 'set\n', first.stderr);
    await engine.warmedUp();
    const second = await runCompute(engine, resolveSpec({ runtime: 'python' }), {
      code: "import sys\nprint('SECRET' in globals(), 'leaked_module' in sys.modules, any('leaked' in a for a in sys.argv))",
    });
    assert.equal(second.stdout, 'False False False\n', second.stderr);
  });

  it('two python3 commands of one session share its files, not their interpreter', async () => {
    const sandbox = await engine.open(resolveSpec({ runtime: 'python', mode: 'code' }), { ephemeral: true });
    try {
      const first = await sandbox.exec({
        command: `python3 -c "import builtins; builtins.KEPT = 1; open('/tmp/kept.txt', 'w').write('${MARK}')"`,
      });
      assert.equal(first.exitCode, 0, first.stderr);
      const second = await sandbox.exec({
        command: `python3 -c "import builtins; print(hasattr(builtins, 'KEPT'), open('/tmp/kept.txt').read())"`,
      });
      assert.equal(second.stdout, `False ${MARK}\n`, second.stderr);
    } finally {
      await sandbox.close();
    }
  });

  it('a session’s persistent Python is not the next session’s', async () => {
    const spec = resolveSpec({ runtime: 'python', mode: 'code' });
    const one = await engine.open(spec, { ephemeral: true });
    try {
      const python = await one.openInterpreter!('python', 1 << 20);
      const set = await python.run(`secret = '${MARK}'\nopen('/tmp/session.txt', 'w').write(secret)`, {
        timeoutMs: 60_000,
      });
      assert.equal(set.outcome, 'ok', set.error);
    } finally {
      await one.close();
    }
    await engine.warmedUp();
    const two = await engine.open(spec, { ephemeral: true });
    try {
      const python = await two.openInterpreter!('python', 1 << 20);
      assert.equal(python.callsBefore, 0);
      const read = await python.run("import os\n('secret' in globals(), os.path.exists('/tmp/session.txt'))", {
        timeoutMs: 60_000,
      });
      assert.equal(read.value, '(False, False)', read.error);
    } finally {
      await two.close();
    }
  });

  it('keeps Python’s behaviour as a program sees it: exit codes, stdin, bytes out, and its own folder on sys.path', async () => {
    const sandbox = await engine.open(resolveSpec({ runtime: 'python', mode: 'code' }), { ephemeral: true });
    try {
      await sandbox.writeFiles([
        { path: 'app/helper.py', content: 'NAME = "helper"\n' },
        {
          path: 'app/main.py',
          content: 'import sys, helper\nprint(helper.NAME, sys.argv[1:], sys.stdin.read().strip())\n',
        },
      ]);
      const program = await sandbox.exec({ command: 'echo from-stdin | python3 app/main.py one two' });
      assert.equal(program.stdout, "helper ['one', 'two'] from-stdin\n", program.stderr);
      const exit = await sandbox.exec({ command: 'python3 -c "import sys; sys.exit(3)"; echo "code $?"' });
      assert.equal(exit.stdout, 'code 3\n', exit.stderr);
      const failing = await sandbox.exec({ cmd: ['python3', '-c', 'raise ValueError("boom")'] });
      assert.equal(failing.exitCode, 1);
      assert.match(failing.stderr, /ValueError: boom/);
      const bytes = await sandbox.exec({
        command: 'python3 -c "import sys; sys.stdout.buffer.write(bytes([0xc3, 0xa9, 0x0a]))"',
      });
      assert.equal(bytes.stdout, 'é\n', bytes.stderr);
      // Its own options go to CPython, a program's options to the program.
      const version = await sandbox.exec({ command: 'python3 --version; python3 -V' });
      assert.match(version.stdout, /^Python 3\.\d+\.\d+\nPython 3\.\d+\.\d+\n$/, version.stderr);
      const help = await sandbox.exec({ command: 'python3 app/main.py -h --version < /dev/null' });
      assert.equal(help.stdout, "helper ['-h', '--version'] \n", help.stderr);
    } finally {
      await sandbox.close();
    }
  });
});
