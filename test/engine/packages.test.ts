import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import type { OpenOptions, Sandbox } from '../../src/core/engine/engine';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import type { SpecLayer } from '../../src/core/spec/spec';
import type { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { execInContainer } from '../../src/engines/docker/exec';
import { TEST_IMAGES, requireEngine, testEngine } from './harness';

/**
 * A PEP 503 index with one hand-made wheel (agent_sandbox_probe, VALUE = 42), served by
 * http.server: pip needs nothing from PyPI, which these machines cannot reach.
 */
const INDEX_SERVER = String.raw`
import base64, functools, hashlib, http.server, io, os, zipfile
name, version = 'agent_sandbox_probe', '1.0'
info = f'{name}-{version}.dist-info'
files = {
    f'{name}/__init__.py': b'VALUE = 42\n',
    f'{info}/METADATA': f'Metadata-Version: 2.1\nName: agent-sandbox-probe\nVersion: {version}\n'.encode(),
    f'{info}/WHEEL': b'Wheel-Version: 1.0\nGenerator: agent-sandbox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
}
digest = lambda data: 'sha256=' + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
record = ''.join(f'{path},{digest(data)},{len(data)}\n' for path, data in files.items()) + f'{info}/RECORD,,\n'
files[f'{info}/RECORD'] = record.encode()
buffer = io.BytesIO()
with zipfile.ZipFile(buffer, 'w') as wheel:
    for path, data in files.items():
        wheel.writestr(path, data)
wheel_name = f'{name}-{version}-py3-none-any.whl'
project = '/srv/simple/agent-sandbox-probe'
os.makedirs(project)
open(f'{project}/{wheel_name}', 'wb').write(buffer.getvalue())
sha = hashlib.sha256(buffer.getvalue()).hexdigest()
open(f'{project}/index.html', 'w').write(f'<!DOCTYPE html><html><body><a href="{wheel_name}#sha256={sha}">{wheel_name}</a></body></html>')
open('/srv/simple/index.html', 'w').write('<!DOCTYPE html><html><body><a href="agent-sandbox-probe/">agent-sandbox-probe</a></body></html>')
http.server.ThreadingHTTPServer(('', 8000), functools.partial(http.server.SimpleHTTPRequestHandler, directory='/srv')).serve_forever()
`;

const WAIT_FOR_INDEX = String.raw`
import time, urllib.request
for attempt in range(100):
    try:
        urllib.request.urlopen('http://127.0.0.1:8000/simple/agent-sandbox-probe/', timeout=1)
        break
    except OSError:
        time.sleep(0.1)
else:
    raise SystemExit('the index did not come up')
`;

/** Prints the HTTP status of a URL, or the error that kept it from answering. */
const FETCH = `import sys, urllib.request
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=3).status)
except OSError as error:
    print('unreachable', error)`;

describe('packages installed when a sandbox opens', function () {
  let engine: DockerEngine;
  let server: Docker.Container | undefined;
  let index: string;
  let indexEnv: Record<string, string>;
  const opened: Sandbox[] = [];

  before(async function () {
    await requireEngine(this);
    engine = testEngine();
    server = await engine.docker.createContainer({
      name: `agent-sandbox-test-index-${randomBytes(4).toString('hex')}`,
      Image: TEST_IMAGES.python,
      Cmd: ['python3', '-c', INDEX_SERVER],
      // Podman starts a container only with nofile and nproc within the host's hard limits.
      HostConfig: {
        AutoRemove: false,
        Ulimits: [
          { Name: 'nofile', Soft: 4096, Hard: 4096 },
          { Name: 'nproc', Soft: 4096, Hard: 4096 },
        ],
      },
    });
    await server.start();
    const ready = await execInContainer({
      docker: engine.docker,
      container: server,
      argv: ['python3', '-c', WAIT_FOR_INDEX],
      user: '0',
      cwd: '/',
      env: [],
      stdoutCap: 4096,
      stderrCap: 4096,
      timeoutMs: 30_000,
    });
    assert.equal(ready.exitCode, 0, ready.stderr.text('stderr'));
    // The default network: "bridge" on Docker, "podman" on Podman.
    const ip = Object.values((await server.inspect()).NetworkSettings.Networks)[0]?.IPAddress;
    assert.ok(ip, 'the index server has an address on the default network');
    index = `http://${ip}:8000/simple/`;
    indexEnv = { PIP_INDEX_URL: index, PIP_TRUSTED_HOST: ip };
  });

  after(async () => {
    for (const sandbox of opened) await sandbox.close();
    await server?.remove({ force: true, v: true });
  });

  async function open(layer: SpecLayer, options: OpenOptions = {}): Promise<Sandbox> {
    const sandbox = await engine.open(resolveSpec({ mode: 'code', timeoutSeconds: 30, ...layer }), options);
    opened.push(sandbox);
    return sandbox;
  }

  async function run(sandbox: Sandbox, cmd: string[]): Promise<string> {
    const result = await sandbox.exec({ cmd });
    assert.equal(result.outcome, 'ok', result.stderr);
    return result.stdout;
  }

  it('installs pip packages from the index in env, then turns the network off before the sandbox is returned', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-packages-'));
    writeFileSync(join(folder, 'main.py'), 'import agent_sandbox_probe as p\nprint(p.VALUE)\n');
    chmodSync(folder, 0o755);
    try {
      const messages: string[] = [];
      const sandbox = await open(
        { runtime: 'python', workspaceAccess: 'ro', pipPackages: ['agent_sandbox_probe'], env: indexEnv },
        {
          name: 'packages-test-pip',
          workspaceFolder: folder,
          onProgress: (progress) => messages.push(progress.message),
        },
      );
      assert.equal(await run(sandbox, ['python3', '-c', 'import agent_sandbox_probe as p; print(p.VALUE)']), '42\n');
      assert.equal(await run(sandbox, ['python3', 'main.py']), '42\n', 'from the read-only workspace');
      assert.match(
        await run(sandbox, ['python3', '-c', 'import agent_sandbox_probe as p; print(p.__file__)']),
        /^\/home\/sandbox\/\.local\/lib\/python3\.\d+\/site-packages\//,
      );
      assert.equal(await run(sandbox, ['ls', '/sys/class/net']), 'lo\n');
      assert.match(await run(sandbox, ['python3', '-c', FETCH, index]), /^unreachable/);
      assert.ok(
        messages.some((message) => message.includes('agent_sandbox_probe')),
        messages.join(' | '),
      );
      assert.equal(sandbox.info.network, false);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('installs npm packages from the npm registry where require() finds them, and the network is off after', async () => {
    // Where egress goes through a TLS-inspecting proxy (as on CI), the image does not trust the proxy's CA but the
    // host does: hand the host's bundle to npm, as a user behind such a proxy would.
    const bundle = [process.env.NODE_EXTRA_CA_CERTS, process.env.SSL_CERT_FILE].find(
      (file) => file && existsSync(file),
    );
    const caPath = '/home/sandbox/.ca-certificates.crt';
    const messages: string[] = [];
    const sandbox = await open(
      { runtime: 'node', npmPackages: ['is-number@7.0.0'], env: bundle ? { NPM_CONFIG_CAFILE: caPath } : {} },
      {
        name: 'packages-test-npm',
        files: bundle ? [{ path: caPath, data: readFileSync(bundle) }] : [],
        onProgress: (progress) => messages.push(progress.message),
      },
    );
    assert.equal(await run(sandbox, ['node', '-e', 'console.log(require("is-number")(5))']), 'true\n');
    // Debian's nodejs ships its own is-number in /usr/share/nodejs: make sure it is the installed one.
    assert.equal(
      await run(sandbox, ['node', '-e', 'console.log(require.resolve("is-number"))']),
      '/home/sandbox/.local/lib/node_modules/is-number/index.js\n',
    );
    assert.equal(await run(sandbox, ['ls', '/sys/class/net']), 'lo\n');
    const registry = await run(sandbox, [
      'node',
      '-e',
      'require("https").get("https://registry.npmjs.org/is-number", (r) => console.log(r.statusCode)).on("error", (e) => console.log("unreachable", e.code))',
    ]);
    assert.match(registry, /^unreachable (EAI_AGAIN|ENOTFOUND|ENETUNREACH)/);
    assert.ok(
      messages.some((message) => message.includes('is-number@7.0.0')),
      messages.join(' | '),
    );
  });

  it('fails with the package named and the end of pip output, and leaves no container behind', async () => {
    const name = `packages-test-fail-${randomBytes(3).toString('hex')}`;
    await assert.rejects(
      open({ runtime: 'python', pipPackages: ['agent-sandbox-no-such-package'], env: indexEnv }, { name }),
      (error: unknown) => {
        assert.ok(SandboxError.is(error, 'package-install-failed'), String(error));
        assert.match(error.message, /pip package agent-sandbox-no-such-package/);
        assert.match(error.message, /No matching distribution found for agent-sandbox-no-such-package/);
        assert.match(error.hint!, /PIP_INDEX_URL/);
        return true;
      },
    );
    const left = await engine.docker.listContainers({ all: true, filters: { name: [`agent-sandbox-${name}`] } });
    assert.deepEqual(
      left.map((container) => container.Names[0]),
      [],
    );
  });

  it('keeps the network on when the spec allows it', async () => {
    const sandbox = await open(
      { runtime: 'python', network: true, pipPackages: ['agent_sandbox_probe'], env: indexEnv },
      { name: 'packages-test-network' },
    );
    assert.equal(await run(sandbox, ['python3', '-c', 'import agent_sandbox_probe as p; print(p.VALUE)']), '42\n');
    assert.match(await run(sandbox, ['ls', '/sys/class/net']), /eth0/);
    assert.equal(await run(sandbox, ['python3', '-c', FETCH, index]), '200\n');
    assert.equal(sandbox.info.network, true);
  });
});
