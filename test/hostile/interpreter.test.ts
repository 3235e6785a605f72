// The persistent interpreter's host side under hostile code: everything the host reads from the
// kernel's client is the sandbox's to forge (code in the kernel reaches its socket as
// __main__.client.conn; ~/.local's usercustomize.py runs in every python3 of the sandbox, the client
// included; the socket in /tmp can be replaced). Each case asserts on the host: its memory, the time
// a call takes, what a result carries, and files outside the folders the host writes to.
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../../src/core/engine/engine';
import { Interpreter } from '../../src/core/interpreters/interpreter';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { runCliText } from '../engine/cliRunner';
import { openSession } from '../engine/namedSession';
import { TEST_IMAGES, requireEngine, testEngine } from '../engine/harness';
import { observe } from './report';
import { firstLine, toolbox } from './toolbox';

const MiB = 1024 * 1024;
const CAP = MiB;

/** What this process keeps after a full collection: its heap and its buffers. */
function retained(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  assert.ok(gc, 'run with --expose-gc (test/hostile/.mocharc.json does)');
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

/** The promise, or a rejection after `ms`: a call that never ends fails the case instead of the run. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} had not ended after ${ms / 1000} s`)), ms);
    }),
  ]);
}

/** Kills the session's kernel and serves its socket instead: `ready` and then nothing (`silent`), or an endless first line (`flood`). */
function fakeKernel(mode: 'silent' | 'flood'): string {
  return String.raw`
import os, socket, sys, threading
SOCK = '/tmp/.agent-sandbox/python.sock'
for pid in os.listdir('/proc'):
    if pid.isdigit() and int(pid) != os.getpid():
        try:
            cmd = open('/proc/%s/cmdline' % pid, 'rb').read()
        except OSError:
            continue
        if b'SOCK, CAP = sys.argv' in cmd or b'sock, cap, kernel = sys.argv' in cmd:
            os.kill(int(pid), 9)
os.makedirs(os.path.dirname(SOCK), exist_ok=True)
try:
    os.unlink(SOCK)
except FileNotFoundError:
    pass
server = socket.socket(socket.AF_UNIX)
server.bind(SOCK)
server.listen(16)
def serve(conn):
    try:
        if '${mode}' == 'flood':
            chunk = b'{' * (1 << 20)
            while True:
                conn.sendall(chunk)
        conn.sendall(b'{"ready": true, "pid": 1, "version": "3.11.2", "calls": 7}\n')
        for line in conn.makefile('rb'):
            pass
    except OSError:
        pass
while True:
    conn, _ = server.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
`;
}

describe('hostile code against the interpreter, on the host', function () {
  this.timeout(300_000);
  const engine = testEngine();
  let sandbox: Sandbox;

  before(async function () {
    await requireEngine(this);
    ({ sandbox } = await openSession(engine, resolveSpec({ runtime: 'python' }), {
      name: 'hostile-interpreter',
      workspaceFolder: mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-interpreter-')),
    }));
  });
  after(async () => {
    if (sandbox) await engine.remove(sandbox.info.id);
    await engine.dispose();
  });

  it('a reply line that never ends (96 MiB, no newline) is cut off, not kept in host memory', async () => {
    const python = await Interpreter.start(sandbox, 'python', CAP);
    try {
      const before = retained();
      const began = Date.now();
      const result = await within(
        python.run(
          'import __main__\nchunk = b"A" * (16 << 20)\nfor _ in range(6):\n    __main__.client.conn.sendall(chunk)\n"sent"',
          { timeoutMs: 20_000 },
        ),
        120_000,
        'the call',
      );
      const seconds = (Date.now() - began) / 1000;
      const grew = (retained() - before) / MiB;
      observe(
        'interpreter',
        '96 MiB on the client connection with no newline',
        'cut off at the line limit; host memory bounded; the call ends at once, saying why',
        `${result.outcome} in ${seconds.toFixed(1)} s; host kept ${grew.toFixed(0)} MiB more; ${firstLine(result.error ?? '')}`,
        grew < 32 && seconds < 15,
      );
      assert.ok(grew < 32, `the host kept ${grew.toFixed(0)} MiB of an unfinished line`);
      assert.ok(seconds < 15, `the call took ${seconds} s`);
      assert.match(result.error ?? '', /longer than \d+ MiB/);
    } finally {
      await python.close();
    }
  });

  it('what the interpreter printed is not kept by the host once its call returned', async () => {
    const python = await Interpreter.start(sandbox, 'python', CAP);
    try {
      await python.run('1', { timeoutMs: 30_000 });
      const before = retained();
      for (let i = 0; i < 24; i++) {
        const result = await python.run('print("x" * (1 << 20), end="")', { timeoutMs: 30_000 });
        assert.equal(result.stdout.length, MiB);
      }
      const grew = (retained() - before) / MiB;
      observe(
        'interpreter',
        '24 calls printing 1 MiB each, on one client',
        'nothing of them kept after the calls',
        `host kept ${grew.toFixed(0)} MiB more`,
        grew < 8,
      );
      assert.ok(grew < 8, `the host kept ${grew.toFixed(0)} MiB of output the calls had returned`);
    } finally {
      await python.close();
    }
  });

  it('a forged reply: 10,000 images, types that are not images, oversized data, escapes in names', async () => {
    const python = await Interpreter.start(sandbox, 'python', CAP);
    try {
      const forged = String.raw`
import __main__, base64
b64 = lambda data: base64.b64encode(data).decode()
png = b'\x89PNG\r\n\x1a\n' + b'\0' * 100
images = [{'mime': 'text/html', 'data': b64(b'<script>alert(1)</script>'), 'source': 'figure %d' % i} for i in range(10000)]
images += [
    {'mime': 'image/svg+xml', 'data': b64(b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'), 'source': 'svg'},
    {'mime': 'image/png', 'data': b64(b'<svg onload="alert(1)"/>'), 'source': 'not a png'},
    {'mime': 'constructor', 'data': b64(png), 'source': 'prototype'},
    {'mime': 'image/png', 'data': b64(png + b'\0' * (8 << 20)), 'source': 'eight MiB'},
    {'mime': 'image/png', 'data': b64(png), 'source': '\x1b]0;owned\x07\x1b[2J' + 'n' * 100000},
]
__main__.client.send({
    'id': __main__.request['id'], 'value': 'v' * (4 << 20), 'error': None, 'interrupted': False,
    'stdout': b64(b'o' * (8 << 20)), 'stdoutTotal': 8 << 20, 'stderr': b64(b'\x1b[31mred'), 'stderrTotal': 8,
    'ms': 1, 'images': images, 'imagesDropped': ['\x1b]52;c;b3duZWQ=\x07dropped'] * 100000,
})
`;
      const result = await within(python.run(forged, { timeoutMs: 30_000 }), 60_000, 'the call');
      const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
      const problems = [
        result.images.length > 4 && `${result.images.length} images`,
        ...result.images.map(
          (image) =>
            (!/^image\/(png|jpeg|gif|webp)$/.test(image.mime) && `an image of type ${image.mime}`) ||
            (image.data.byteLength > 5 * MiB && `an image of ${image.data.byteLength} bytes`) ||
            (controls.test(image.source) && 'control characters in an image source') ||
            (image.source.length > 300 && `an image source of ${image.source.length} characters`) ||
            (image.mime === 'image/png' &&
              !Buffer.from(image.data).subarray(0, 8).equals(Buffer.from('\x89PNG\r\n\x1a\n', 'latin1')) &&
              'image/png that is no PNG'),
        ),
        Buffer.byteLength(result.stdout) > CAP && `${Buffer.byteLength(result.stdout)} bytes of stdout`,
        (result.value?.length ?? 0) > CAP && `a value of ${result.value?.length} characters`,
        result.notices.join('').length > 4_000 && `notices of ${result.notices.join('').length} characters`,
        result.notices.some((notice) => controls.test(notice)) && 'control characters in a notice',
      ].filter(Boolean);
      observe(
        'interpreter',
        'a forged reply (10,000 images, text/html and SVG as images, 8 MiB image, escapes in names)',
        'at most 4 real images of an image type, 5 MiB each; stdout, value and names within their limits',
        problems.length ? `host took: ${problems.join(', ')}` : `${result.images.length} images kept`,
        problems.length === 0,
      );
      assert.deepEqual(problems, []);
    } finally {
      await python.close();
    }
  });

  it('a call ends within its limit when the kernel never starts it', async () => {
    const python = await Interpreter.start(sandbox, 'python', CAP);
    try {
      await python.run(
        'import __main__, threading\nclass Trap:\n    def put(self, item): pass\n    def get(self): threading.Event().wait()\n__main__.work = Trap()',
        { timeoutMs: 30_000 },
      );
      const began = Date.now();
      const result = await within(python.run('1 + 1', { timeoutMs: 3_000 }), 60_000, 'a call with a 3 s limit');
      const seconds = (Date.now() - began) / 1000;
      observe(
        'interpreter',
        'a kernel that never sends `started` (its queue replaced)',
        'the call ends at its 3 s limit, saying the code had not started',
        `${result.outcome} in ${seconds.toFixed(1)} s: ${firstLine(result.error ?? '')}`,
      );
      assert.equal(result.outcome, 'timeout');
      assert.match(result.error ?? '', /had not started the code within its 3 s limit/);
    } finally {
      await python.close();
      // The trapped kernel serves no one: the next case's interpreter is a new one.
      await sandbox.exec({ command: 'pkill -KILL -f "SOCK, CAP = sys.argv" || true' });
    }
  });

  it("cancelling a call still queued does not interrupt another client's running call", async () => {
    const first = await Interpreter.start(sandbox, 'python', CAP);
    const second = await Interpreter.start(sandbox, 'python', CAP);
    try {
      const running = first.run('import time\ntime.sleep(6)\n"first done"', { timeoutMs: 30_000 });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const cancel = new AbortController();
      const queued = second.run('"second"', { timeoutMs: 30_000, signal: cancel.signal });
      await new Promise((resolve) => setTimeout(resolve, 500));
      cancel.abort();
      const [firstResult, secondResult] = await within(Promise.all([running, queued]), 60_000, 'the two calls');
      observe(
        'interpreter',
        'two clients: one cancels its queued call while the other runs',
        "the running call is not interrupted (the cancel is the queued call's own)",
        `running call: ${firstResult.outcome}${firstResult.value ? ` ${firstResult.value}` : ` ${firstLine(firstResult.error ?? '')}`}; cancelled call: ${secondResult.outcome}`,
        firstResult.outcome === 'ok',
      );
      assert.equal(firstResult.outcome, 'ok', firstResult.error);
      assert.equal(firstResult.value, "'first done'");
      assert.equal(secondResult.outcome, 'cancelled');
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('hostile code impersonating the kernel, through the tools', function () {
  this.timeout(300_000);

  before(async function () {
    await requireEngine(this);
  });

  for (const mode of ['silent', 'flood'] as const) {
    it(`a fake kernel on the session's socket (${mode === 'silent' ? 'ready, then never starts a call' : 'an endless first line'})`, async () => {
      const box = toolbox();
      let peak = 0;
      const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
      try {
        await box.call('sandbox_open', { session: 'fake', runtime: 'python' });
        await box.call('sandbox_exec', { sandbox_id: 'fake', code: 'x = 1' });
        await box.call('sandbox_exec', {
          sandbox_id: 'fake',
          code: `open("/tmp/fake.py", "w").write(${JSON.stringify(fakeKernel(mode))})`,
        });
        const planted = await box.call('sandbox_exec', {
          sandbox_id: 'fake',
          command:
            'env -u AGENT_SANDBOX_EXEC setsid python3 /tmp/fake.py </dev/null >/dev/null 2>&1 & sleep 1; echo planted',
        });
        assert.match(planted.text, /planted/);
        const rssBefore = process.memoryUsage().rss;
        peak = rssBefore;
        const began = Date.now();
        // The first call may only learn that the kernel ended; the next one meets the fake.
        const answers = [];
        for (let i = 0; i < 2; i++)
          answers.push(
            await within(
              box.call('sandbox_exec', { sandbox_id: 'fake', code: '1 + 1', timeout_seconds: 3 }),
              90_000,
              'a call with a 3 s limit',
            ),
          );
        const seconds = (Date.now() - began) / 1000;
        const grew = (peak - rssBefore) / MiB;
        observe(
          'interpreter',
          `fake kernel on /tmp/.agent-sandbox/python.sock (${mode})`,
          'each call ends within its limit, the start limit and the grace; host memory bounded',
          `${seconds.toFixed(1)} s for two calls; host rss peak +${grew.toFixed(0)} MiB; ${answers.map((answer) => firstLine(answer.text)).join(' / ')}`,
          seconds < 2 * (3 + 30 + 5 + 10) && grew < 256,
        );
        assert.ok(grew < 256, `the host's memory grew by ${grew.toFixed(0)} MiB`);
        assert.ok(seconds < 2 * (3 + 30 + 5 + 10), `two calls took ${seconds} s`);
      } finally {
        clearInterval(sample);
        await box.dispose();
      }
    });
  }
});

describe('hostile code against the images the command line saves', function () {
  this.timeout(300_000);

  before(async function () {
    await requireEngine(this);
  });

  it('the images folder (AGENT_SANDBOX_IMAGES in an rw folder) replaced by a symbolic link during the call', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-ws-'));
    // Where a link could lead: a folder whose every file a shell sources (~/.bashrc.d on Fedora).
    const outside = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-bashrc.d-'));
    // The sandbox user is not the host user here: it needs to write the folder.
    chmodSync(folder, 0o777);
    const images = join(folder, 'images');
    mkdirSync(images);
    const env = {
      AGENT_SANDBOX_ENGINE: 'docker',
      AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
      AGENT_SANDBOX_IMAGES: images,
    };
    const cli = (...args: string[]) => runCliText([...args, '--folder', folder], { env });
    try {
      const opened = await cli('open', '--session', 'pictures', '--workspace', 'rw');
      assert.equal(opened.code, 0, opened.stderr);
      const code = [
        'import os',
        'os.makedirs("/tmp/outputs", exist_ok=True)',
        // A PNG signature, then shell: bash skips the first line and runs the rest.
        'open("/tmp/outputs/rc.png", "wb").write(b"\\x89PNG\\r\\n\\x1a\\n\\necho planted > /tmp/planted\\n")',
        'os.rename("/workspace/images", "/workspace/images.old")',
        `os.symlink(${JSON.stringify(outside)}, "/workspace/images")`,
      ].join('\n');
      const run = await cli('exec', '--session', 'pictures', '--python', code);
      const landed = readdirSync(outside);
      const saved = /image saved: (.+)/.exec(run.stderr)?.[1];
      observe(
        'host',
        'images folder inside an rw folder swapped for a link to a host folder',
        'no file written through the link; the image saved in a folder of ours, and said',
        `${landed.length} file(s) landed outside${saved ? `; saved as ${saved}` : ''}; ${firstLine(run.stderr)}`,
        landed.length === 0,
      );
      assert.deepEqual(landed, [], 'the CLI wrote through the link the sandbox made');
      assert.ok(saved, run.stderr);
      assert.ok(!lstatSync(saved).isSymbolicLink());
      assert.ok(readFileSync(saved).subarray(0, 8).equals(Buffer.from('\x89PNG\r\n\x1a\n', 'latin1')));
    } finally {
      await cli('close', '--all');
    }
  });
});
