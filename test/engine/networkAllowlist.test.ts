/**
 * The allowlist network tier on a real Docker Engine: a sandbox reaches exactly the names on its
 * allowlist (and listed ports of this machine) through the proxy, and nothing else. Traffic goes only
 * to the HTTP server this test starts on 127.0.0.1: names are mapped to it with the user's own hosts
 * entries, and every other request is refused by name before anything is resolved or sent. Needs the
 * built CLI (dist/cli.js: `node esbuild.mjs`), whose hidden egress-proxy command is the proxy process.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import type { Sandbox } from '../../src/core/engine/engine';
import { SandboxError } from '../../src/core/errors';
import type { LoggedDecision } from '../../src/core/network/decisionLog';
import { EgressProxies } from '../../src/core/network/egressProcesses';
import { runCompute } from '../../src/core/sessions/compute';
import { processAlive } from '../../src/core/sessions/processAlive';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import type { SandboxSpec } from '../../src/core/spec/spec';
import { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { LABEL } from '../../src/engines/docker/labels';
import { TEST_IMAGES, requireEngine, testEngine } from './harness';

const CLI = resolve(__dirname, '../../dist/cli.js');
const PROJECT = 'agent-sandbox-allowlist-probe';
const MODULE = 'agent_sandbox_allowlist_probe';

/** Run inside the sandbox: each subcommand prints one line that the test reads. */
const PROBE = String.raw`
import json, os, socket, sys, urllib.error, urllib.request
what, args = sys.argv[1], sys.argv[2:]
def out(value): print(json.dumps(value))
if what == 'get':
    try:
        answer = urllib.request.urlopen(args[0], timeout=20)
        out({'status': answer.status, 'body': answer.read().decode()})
    except urllib.error.HTTPError as error:
        out({'status': error.code, 'body': error.read().decode()})
    except OSError as error:
        out({'error': str(error)})
elif what == 'connect':
    s = socket.create_connection(('127.0.0.1', 3128), timeout=20)
    s.sendall(('CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n' % (args[0], args[0])).encode())
    head = b''
    while b'\r\n\r\n' not in head:
        chunk = s.recv(65536)
        if not chunk: break
        head += chunk
    status, _, rest = head.partition(b'\r\n\r\n')
    if status.startswith(b'HTTP/1.1 200'):
        s.sendall(('GET /hello HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' % args[0]).encode())
        rest = b''
    while True:
        chunk = s.recv(65536)
        if not chunk: break
        rest += chunk
    out({'status': status.split(b'\r\n')[0].decode(), 'rest': rest.decode(errors='replace')})
elif what == 'dns':
    try:
        out({'addresses': [entry[4][0] for entry in socket.getaddrinfo(args[0], 80)]})
    except OSError as error:
        out({'error': type(error).__name__ + ': ' + str(error)})
elif what == 'tcp':
    try:
        socket.create_connection((args[0], int(args[1])), timeout=5).close()
        out({'connected': True})
    except OSError as error:
        out({'error': type(error).__name__ + ': ' + str(error)})
elif what == 'udp':
    try:
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', (args[0], int(args[1])))
        out({'sent': True})
    except OSError as error:
        out({'error': type(error).__name__ + ': ' + str(error)})
elif what == 'net':
    out({'interfaces': sorted(os.listdir('/sys/class/net')), 'dev': [line.split(':')[0].strip() for line in open('/proc/net/dev').read().splitlines()[2:]], 'proxies': urllib.request.getproxies()})
`;

/** A stored (uncompressed) zip: enough for a wheel. */
function zip(files: Record<string, Buffer>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of Object.entries(files)) {
    const nameBytes = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x21, 12); // 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A pure-Python wheel whose module says VALUE = 42. */
function probeWheel(): { name: string; data: Buffer } {
  const info = `${MODULE}-1.0.dist-info`;
  const files: Record<string, Buffer> = {
    [`${MODULE}/__init__.py`]: Buffer.from('VALUE = 42\n'),
    [`${info}/METADATA`]: Buffer.from(`Metadata-Version: 2.1\nName: ${PROJECT}\nVersion: 1.0\n`),
    [`${info}/WHEEL`]: Buffer.from(
      'Wheel-Version: 1.0\nGenerator: agent-sandbox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
    ),
  };
  const digest = (data: Buffer) => `sha256=${createHash('sha256').update(data).digest('base64url')}`;
  files[`${info}/RECORD`] = Buffer.from(
    Object.entries(files)
      .map(([path, data]) => `${path},${digest(data)},${data.length}\n`)
      .join('') + `${info}/RECORD,,\n`,
  );
  return { name: `${MODULE}-1.0-py3-none-any.whl`, data: zip(files) };
}

/** The test's own server: /hello, and a PEP 503 index with the probe wheel. */
function testServer(): Server {
  const wheel = probeWheel();
  const sha = createHash('sha256').update(wheel.data).digest('hex');
  const page = (links: string) => `<!DOCTYPE html><html><body>${links}</body></html>`;
  const html = { 'content-type': 'text/html' };
  return createServer((request, response) => {
    const path = (request.url ?? '').replace(/\?.*$/, '').replace(/\/+$/, '');
    if (path === '/hello') return response.end(`hello from the test server: ${request.method} ${request.url}`);
    if (path === '/simple')
      return response.writeHead(200, html).end(page(`<a href="/simple/${PROJECT}/">${PROJECT}</a>`));
    if (path === `/simple/${PROJECT}`)
      return response.writeHead(200, html).end(page(`<a href="/files/${wheel.name}#sha256=${sha}">${wheel.name}</a>`));
    // An npm registry's answer for one package (its packument), enough for npm view.
    if (path === `/npm/${PROJECT}`) {
      const version = { name: PROJECT, version: '1.0.7', dist: { tarball: `http://registry.test/npm/${PROJECT}.tgz` } };
      response.writeHead(200, { 'content-type': 'application/json' });
      return response.end(
        JSON.stringify({ name: PROJECT, 'dist-tags': { latest: '1.0.7' }, versions: { '1.0.7': version } }),
      );
    }
    if (path === `/files/${wheel.name}`) {
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': wheel.data.length });
      return response.end(wheel.data);
    }
    response.writeHead(404).end('not here');
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

describe('network allowlist on the Docker engine', function () {
  let engine: DockerEngine;
  let proxies: EgressProxies;
  let root: string;
  let server: Server;
  let port: number;
  const opened: Sandbox[] = [];

  before(async function () {
    await requireEngine(this);
    assert.ok(existsSync(CLI), `the proxy process runs from ${CLI}: build it first (node esbuild.mjs)`);
    server = testServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
    root = mkdtempSync(join(tmpdir(), 'agent-sandbox-egress-'));
    proxies = new EgressProxies({ nodePath: process.execPath, cliPath: CLI, root });
    engine = new DockerEngine({ images: TEST_IMAGES, egressProxies: proxies, poolSize: 2 });
  });

  after(async () => {
    for (const sandbox of opened) await sandbox.close().catch(() => undefined);
    await engine?.dispose();
    await new Promise((done) => server?.close(done));
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const allowlistSpec = (layer: object = {}): SandboxSpec =>
    resolveSpec({
      mode: 'code',
      runtime: 'python',
      timeoutSeconds: 60,
      networkAllow: [`localhost:${port}`, 'api.test', 'pypi.test'],
      networkHosts: { 'api.test': '127.0.0.1', 'pypi.test': '127.0.0.1' },
      ...layer,
    } as never);

  async function open(layer: object = {}): Promise<Sandbox> {
    const sandbox = await engine.open(allowlistSpec(layer), {
      name: `allowlist-${randomBytes(3).toString('hex')}`,
      files: [{ path: '/home/sandbox/probe.py', data: Buffer.from(PROBE) }],
    });
    opened.push(sandbox);
    return sandbox;
  }

  async function probe(sandbox: Sandbox, ...args: string[]): Promise<Record<string, unknown>> {
    const result = await sandbox.exec({ cmd: ['python3', '/home/sandbox/probe.py', ...args] });
    assert.equal(result.outcome, 'ok', `${args.join(' ')}: ${result.stderr}`);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  }

  async function relaysOf(id: string) {
    return engine.docker.listContainers({ all: true, filters: { label: [`${LABEL.egressFor}=${id}`] } });
  }

  const proxyPid = (id: string) => Number(readFileSync(join(root, id, 'pid'), 'utf8'));

  describe('a session', () => {
    let sandbox: Sandbox;

    before(async () => {
      sandbox = await open();
    });

    it('reaches a listed port of this machine (localhost:PORT) through the proxy, as host.docker.internal', async () => {
      const answer = await probe(sandbox, 'get', `http://host.docker.internal:${port}/hello`);
      assert.deepEqual(answer, { status: 200, body: 'hello from the test server: GET /hello' });
    });

    it('reaches a listed name the user mapped to an address, by plain HTTP and by CONNECT', async () => {
      const plain = await probe(sandbox, 'get', `http://api.test:${port}/hello?via=http`);
      assert.deepEqual(plain, { status: 200, body: 'hello from the test server: GET /hello?via=http' });
      const tunnel = await probe(sandbox, 'connect', `api.test:${port}`);
      assert.match(String(tunnel.status), /^HTTP\/1\.1 200/);
      assert.match(String(tunnel.rest), /hello from the test server: GET \/hello/);
    });

    it('refuses a name not on the list with 403 and a body that says why', async () => {
      const plain = await probe(sandbox, 'get', 'http://exfiltrate.test/upload?secret=1');
      assert.equal(plain.status, 403);
      assert.match(String(plain.body), /exfiltrate\.test is not on the allowlist/);
      const tunnel = await probe(sandbox, 'connect', 'exfiltrate.test:443');
      assert.match(String(tunnel.status), /^HTTP\/1\.1 403/);
      assert.match(String(tunnel.rest), /exfiltrate\.test is not on the allowlist/);
      // A listed name, but on a port of this machine that is not listed.
      const port2 = port === 65535 ? 1 : port + 1;
      const local = await probe(sandbox, 'get', `http://host.docker.internal:${port2}/hello`);
      assert.equal(local.status, 403);
      assert.match(String(local.body), new RegExp(`port ${port2} of your machine is not on the allowlist`));
    });

    it('refuses raw IP addresses, the test server`s own included', async () => {
      for (const authority of [`127.0.0.1:${port}`, '192.0.2.1:443', `[::1]:${port}`]) {
        const tunnel = await probe(sandbox, 'connect', authority);
        assert.match(String(tunnel.status), /^HTTP\/1\.1 403/, authority);
        assert.match(String(tunnel.rest), /is an IP address/, authority);
      }
    });

    it('has no interface but loopback, no DNS and no direct route to this machine', async () => {
      const net = await probe(sandbox, 'net');
      assert.deepEqual(net.interfaces, ['lo']);
      assert.deepEqual(net.dev, ['lo']);
      assert.equal((net.proxies as Record<string, string>).https, 'http://127.0.0.1:3128');
      for (const name of ['api.test', 'pypi.org', 'host.docker.internal']) {
        const dns = await probe(sandbox, 'dns', name);
        assert.match(String(dns.error), /^gaierror/, `${name}: ${JSON.stringify(dns)}`);
      }
      // 127.0.0.1 inside is the sandbox's own loopback: the test server is not there.
      assert.match(String((await probe(sandbox, 'tcp', '127.0.0.1', String(port))).error), /ConnectionRefused/);
      const addresses = Object.values(networkInterfaces())
        .flat()
        .filter((entry) => entry && !entry.internal && entry.family === 'IPv4')
        .map((entry) => entry!.address);
      for (const address of addresses) {
        const tcp = await probe(sandbox, 'tcp', address, String(port));
        assert.match(String(tcp.error), /unreachable/i, `${address}: ${JSON.stringify(tcp)}`);
        const udp = await probe(sandbox, 'udp', address, '53');
        assert.match(String(udp.error), /unreachable/i, `${address}: ${JSON.stringify(udp)}`);
      }
    });

    it('installs with pip from a local index through the proxy', async () => {
      const install = await sandbox.exec({
        cmd: [
          'python3',
          '-m',
          'pip',
          'install',
          '--user',
          '--no-cache-dir',
          '--index-url',
          `http://pypi.test:${port}/simple`,
          '--trusted-host',
          'pypi.test',
          PROJECT,
        ],
      });
      assert.equal(install.outcome, 'ok', `${install.stdout}\n${install.stderr}`);
      const used = await sandbox.exec({ cmd: ['python3', '-c', `import ${MODULE}; print(${MODULE}.VALUE)`] });
      assert.equal(used.stdout, '42\n', used.stderr);
    });

    it('records every decision, with bytes, readable through the sandbox and the engine', async () => {
      const page = await sandbox.networkDecisions!();
      const find = (check: (entry: LoggedDecision) => boolean) => page.decisions.find(check);
      const local = find((entry) => entry.allowed && entry.host === 'host.docker.internal');
      assert.ok(local, JSON.stringify(page.decisions));
      assert.equal(local.rule, `localhost:${port}`);
      assert.ok(local.bytesSent > 0 && local.bytesReceived > 0, JSON.stringify(local));
      const mapped = find((entry) => entry.allowed && entry.host === 'api.test' && entry.port === port);
      assert.ok(mapped);
      assert.equal(mapped.rule, 'api.test');
      assert.equal(mapped.address, '127.0.0.1');
      const wheel = find((entry) => entry.allowed && entry.host === 'pypi.test' && entry.bytesReceived > 500);
      assert.ok(wheel, 'the wheel came through the proxy');
      const refused = find((entry) => !entry.allowed && entry.host === 'exfiltrate.test');
      assert.ok(refused);
      assert.match(refused.reason!, /not on the allowlist/);
      assert.equal(refused.bytesSent + refused.bytesReceived, 0);
      assert.ok(find((entry) => !entry.allowed && entry.host === '127.0.0.1' && /IP address/.test(entry.reason!)));
      assert.deepEqual(
        page.decisions.map((entry) => entry.seq),
        page.decisions.map((_, index) => index + 1),
      );
      assert.equal(page.cursor, page.decisions.at(-1)!.seq);
      assert.equal(page.truncated, false);
      assert.deepEqual(await engine.networkDecisions(sandbox.info.id), page);
      // Only what came after a cursor.
      await probe(sandbox, 'get', 'http://after.test/');
      const later = await sandbox.networkDecisions!({ after: page.cursor });
      assert.deepEqual(
        later.decisions.map((entry) => [entry.seq, entry.host, entry.allowed]),
        [[page.cursor + 1, 'after.test', false]],
      );
      const newest = await engine.networkDecisions(sandbox.info.id, { max: 2 });
      assert.deepEqual(
        newest.decisions.map((entry) => entry.seq),
        [page.cursor, page.cursor + 1],
      );
      assert.equal(newest.truncated, true);
    });

    it('is never listed as more than one session: its relay is no session', async () => {
      const listed = await engine.list({ includeCompute: true });
      assert.equal(listed.filter((session) => session.id === sandbox.info.id).length, 1);
      const relays = await relaysOf(sandbox.info.id);
      assert.equal(relays.length, 1);
      assert.ok(!listed.some((session) => session.id === relays[0]!.Id));
    });

    it('closing it removes its relay and stops its proxy process; its decisions stay readable', async () => {
      const id = sandbox.info.id;
      const pid = proxyPid(id);
      assert.ok(processAlive(pid));
      const before = await engine.networkDecisions(id);
      await sandbox.close();
      assert.deepEqual(await relaysOf(id), []);
      assert.equal(processAlive(pid), false, 'the proxy process ended with the close');
      assert.equal(existsSync(join(root, id, 'socket')), false, 'its sockets are gone');
      assert.deepEqual(await engine.networkDecisions(id), before);
    });
  });

  it('a sandbox removed from outside takes its relay and its proxy process with it', async () => {
    const sandbox = await open();
    const id = sandbox.info.id;
    const pid = proxyPid(id);
    assert.equal((await relaysOf(id)).length, 1);
    // Podman refuses to remove a container another shares namespaces with ("has dependent
    // containers"): there its user removes both (podman rm --depend), the relay first.
    if ((await engine.info()).product.includes('Podman'))
      for (const relay of await relaysOf(id)) await engine.docker.getContainer(relay.Id).remove({ force: true });
    await engine.docker.getContainer(id).remove({ force: true });
    await until('the relay is gone', async () => (await relaysOf(id)).length === 0);
    await until('the proxy process has ended', () => !processAlive(pid));
    await sandbox.close();
  });

  it('a proxy process killed from outside is started again when the session is used', async () => {
    const sandbox = await open();
    const id = sandbox.info.id;
    const pid = proxyPid(id);
    process.kill(pid, 'SIGKILL');
    await until('the proxy process is gone', () => !processAlive(pid));
    const down = await probe(sandbox, 'get', `http://api.test:${port}/hello`);
    assert.ok(down.error, `nothing answers while the proxy is down: ${JSON.stringify(down)}`);
    const again = await engine.attach(id);
    assert.notEqual(proxyPid(id), pid);
    // The relay links to the new process within a second or so.
    let answer: Record<string, unknown> = {};
    await until('the sandbox reaches out again', async () => {
      answer = await probe(again, 'get', `http://api.test:${port}/hello`);
      return answer.status === 200;
    });
    await again.close();
    await sandbox.close();
  });

  it('says so when a killed proxy process cannot be started again, instead of leaving the sandbox silently cut off', async () => {
    const sandbox = await open();
    const id = sandbox.info.id;
    const pid = proxyPid(id);
    process.kill(pid, 'SIGKILL');
    await until('the proxy process is gone', () => !processAlive(pid));
    // Another process whose proxy program cannot run (its node is missing) attaches to the session.
    const broken = new DockerEngine({
      images: TEST_IMAGES,
      egressProxies: new EgressProxies({ nodePath: '/nonexistent/node', cliPath: CLI, root }),
    });
    try {
      const attached = await broken.attach(id);
      assert.match(
        attached.info.notices.join('\n'),
        /The network allowlist of this sandbox could not be restored \(.*\): it reaches nothing until it is reopened/,
      );
    } finally {
      await broken.dispose();
    }
    await engine.attach(id); // restores it, for the close that follows
    await sandbox.close();
  });

  it('points npm at the proxy: npm view asks a registry only the proxy reaches', async () => {
    const sandbox = await open({
      runtime: 'node',
      networkAllow: ['registry.test'],
      networkHosts: { 'registry.test': '127.0.0.1' },
    });
    const view = await sandbox.exec({
      cmd: ['npm', 'view', PROJECT, 'version', '--registry', `http://registry.test:${port}/npm/`],
      cwd: '/home/sandbox',
    });
    assert.equal(view.stdout.trim(), '1.0.7', view.stderr);
    const page = await sandbox.networkDecisions!();
    assert.ok(
      page.decisions.some((entry) => entry.allowed && entry.host === 'registry.test'),
      JSON.stringify(page),
    );
    await sandbox.close();
  });

  it('installs the spec`s pip packages through the proxy, then the package index is not reachable', async () => {
    const sandbox = await open({
      networkAllow: ['pypi.test'],
      pipPackages: [PROJECT],
      env: { PIP_INDEX_URL: `http://pypi.test:${port}/simple`, PIP_TRUSTED_HOST: 'pypi.test' },
    });
    const used = await sandbox.exec({ cmd: ['python3', '-c', `import ${MODULE}; print(${MODULE}.VALUE)`] });
    assert.equal(used.stdout, '42\n', used.stderr);
    // pypi.org was let through while the packages installed, and is refused (by name, nothing sent) now.
    const index = await probe(sandbox, 'get', 'https://pypi.org/simple/');
    assert.match(String(index.error), /403/, JSON.stringify(index));
    const page = await sandbox.networkDecisions!();
    assert.ok(
      page.decisions.some((entry) => entry.allowed && entry.host === 'pypi.test' && entry.rule === 'pypi.test'),
    );
    assert.ok(page.decisions.some((entry) => !entry.allowed && entry.host === 'pypi.org'));
    await sandbox.close();
  });

  it('runs compute-mode code through the proxy, outside the warm pool, and removes its relay after', async () => {
    const spec = allowlistSpec({ mode: 'compute' });
    const code = `import urllib.request\nprint(urllib.request.urlopen('http://api.test:${port}/hello').read().decode())`;
    const result = await runCompute(engine, spec, { code });
    assert.equal(result.outcome, 'ok', result.stderr);
    assert.equal(result.stdout.trim(), 'hello from the test server: GET /hello');
    const snapshot = engine.computeRuns.pool.snapshot();
    assert.equal(snapshot.hits + snapshot.misses, 0, `the pool was not used: ${JSON.stringify(snapshot)}`);

    const sandbox = await engine.open(spec, { ephemeral: true });
    const id = sandbox.info.id;
    const run = await sandbox.exec({
      cmd: [
        'python3',
        '-c',
        'import urllib.request as u\ntry: u.urlopen("http://elsewhere.test/")\nexcept Exception as e: print(e)',
      ],
    });
    assert.match(run.stdout, /403/);
    const pid = proxyPid(id);
    await sandbox.close();
    assert.deepEqual(await relaysOf(id), []);
    assert.equal(processAlive(pid), false);
    const page = await engine.networkDecisions(id);
    assert.deepEqual(
      page.decisions.map((entry) => [entry.host, entry.allowed]),
      [['elsewhere.test', false]],
    );
  });

  it('is refused where the engine cannot enforce it, never widened or dropped', async () => {
    // Run from source, this engine has no proxy program to start.
    const plain = testEngine();
    const remote = new DockerEngine({ host: 'tcp://127.0.0.1:1', egressProxies: proxies });
    try {
      for (const other of [plain, remote]) {
        assert.equal(other.capabilities.networkAllowlist, false);
        await assert.rejects(other.open(allowlistSpec()), (error: unknown) => {
          assert.ok(SandboxError.is(error, 'unsupported'), String(error));
          assert.match(error.message, /cannot be limited to its allowlist \(localhost:\d+, api\.test, pypi\.test\)/);
          return true;
        });
      }
      assert.equal(engine.capabilities.networkAllowlist, true);
    } finally {
      await plain.dispose();
      await remote.dispose();
    }
  });
});
