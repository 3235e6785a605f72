// The egress proxy of the allowlist tier, with servers this test starts on 127.0.0.1 and nothing
// else: names are mapped by the test's own resolver, never looked up on a real network.
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { allowlistSchema, decide } from '../../src/core/network/allowlist';
import { isInternalAddress } from '../../src/core/network/addressPolicy';
import { EgressProxy, type NetworkDecision } from '../../src/core/network/egressProxy';

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** A CONNECT through the proxy, then one HTTP GET over the tunnel; the raw answer. */
function viaConnect(proxyPort: number, authority: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(proxyPort, '127.0.0.1', () =>
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`),
    );
    let text = '';
    let tunnelled = false;
    socket.on('data', (chunk) => {
      text += chunk.toString();
      if (!tunnelled && text.startsWith('HTTP/1.1 200')) {
        tunnelled = true;
        text = '';
        socket.write(`GET /hello HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`);
      }
    });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

function viaHttp(proxyPort: number, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: '127.0.0.1', port: proxyPort, path: url, headers: { host: new URL(url).host } },
      (answer) => {
        let body = '';
        answer.on('data', (chunk) => (body += chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('network allowlist: entries and decisions', () => {
  it('takes domains, wildcards and localhost ports; refuses IP addresses and junk with a message', () => {
    const entries = allowlistSchema.parse([
      'api.github.com',
      '*.githubusercontent.com',
      'localhost:3000',
      ' PyPI.org ',
    ]);
    assert.deepEqual(
      entries.map((entry) => entry.text),
      ['api.github.com', '*.githubusercontent.com', 'localhost:3000', 'pypi.org'],
    );
    for (const bad of ['10.0.0.1', '*.', 'http://x.com', 'localhost:0', 'localhost:70000', 'a..b', '*']) {
      const parsed = allowlistSchema.safeParse([bad]);
      assert.equal(parsed.success, false, bad);
      assert.match(parsed.error!.issues[0]!.message, /domain \(api\.github\.com\)/);
    }
  });

  it('matches exact names, subdomains of wildcards only, and local ports only when listed', () => {
    const entries = allowlistSchema.parse(['api.github.com', '*.githubusercontent.com', 'localhost:3000']);
    assert.equal(decide(entries, 'api.github.com', 443).allowed, true);
    assert.equal(decide(entries, 'API.GitHub.com.', 443).allowed, true);
    assert.equal(decide(entries, 'evil-api.github.com', 443).allowed, false);
    assert.equal(decide(entries, 'raw.githubusercontent.com', 443).allowed, true);
    assert.equal(decide(entries, 'githubusercontent.com', 443).allowed, false);
    assert.equal(decide(entries, 'githubusercontent.com.evil.com', 443).allowed, false);
    assert.equal(decide(entries, 'host.docker.internal', 3000).allowed, true);
    assert.equal(decide(entries, 'localhost', 3001).allowed, false);
    assert.equal(decide(entries, '140.82.112.3', 443).allowed, false);
    assert.equal(decide(entries, '[::1]', 443).allowed, false);
    assert.equal(decide(entries, '2130706433', 80).allowed, false);
  });

  it('classifies internal addresses, including mapped IPv6 and metadata', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '100.100.100.200',
    ])
      assert.equal(isInternalAddress(address), true, address);
    for (const address of ['140.82.112.3', '151.101.0.223', '2606:4700::1111'])
      assert.equal(isInternalAddress(address), false, address);
  });
});

describe('network allowlist: the egress proxy', function () {
  this.timeout(20_000);
  let app: Server;
  let appPort: number;
  let proxy: EgressProxy;
  let proxyPort: number;
  const decisions: NetworkDecision[] = [];
  /** The test's own resolver: a public-looking address for the allowed name, a rebinding one for the trap. */
  const names: Record<string, string[]> = {
    'trap.example.test': ['127.0.0.1'],
    'meta.example.test': ['169.254.169.254'],
  };

  /** Entries that come and go while the proxy runs (a package install's), asked at each decision. */
  let extra: string[] = [];

  before(async () => {
    app = createServer((req, res) => res.end(`hello from the test server: ${req.method} ${req.url}`));
    appPort = await listen(app);
    const base = allowlistSchema.parse([`localhost:${appPort}`, 'trap.example.test', 'meta.example.test', 'mine.test']);
    proxy = new EgressProxy({
      allowlist: () => [...base, ...allowlistSchema.parse(extra)],
      // The user's own mappings: a listed name mapped to this machine is theirs to reach; an unlisted one is not.
      hosts: { 'mine.test': '127.0.0.1', 'unlisted.test': '127.0.0.1', 'later.test': '127.0.0.1' },
      lookup: async (host) => {
        if (names[host]) return names[host]!;
        throw new Error('no such name');
      },
      onDecision: (decision) => decisions.push(decision),
    });
    await proxy.listen({ port: 0, host: '127.0.0.1' });
    proxyPort = (proxy.server.address() as AddressInfo).port;
  });

  after(async () => {
    await proxy?.close();
    await new Promise((resolve) => app?.close(resolve));
  });

  it('tunnels to a listed port of the machine (CONNECT), and records the bytes', async () => {
    const answer = await viaConnect(proxyPort, `host.docker.internal:${appPort}`);
    assert.match(answer, /hello from the test server: GET \/hello/);
    // The decision is recorded when the tunnel closes, which may trail the answer by a moment.
    let decision: NetworkDecision | undefined;
    for (let look = 0; look < 200 && !decision; look++) {
      decision = decisions.find((entry) => entry.allowed && entry.port === appPort);
      if (!decision) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(decision, JSON.stringify(decisions));
    assert.equal(decision.rule, `localhost:${appPort}`);
    assert.ok(decision.bytesReceived > 0 && decision.bytesSent > 0);
  });

  it('forwards plain HTTP in absolute form to a listed port', async () => {
    const answer = await viaHttp(proxyPort, `http://localhost:${appPort}/plain?x=1`);
    assert.equal(answer.status, 200);
    assert.match(answer.body, /GET \/plain\?x=1/);
  });

  it('refuses a name not on the list with 403 and a body that names the rule', async () => {
    const answer = await viaConnect(proxyPort, 'attacker.example.test:443');
    assert.match(answer, /^HTTP\/1\.1 403/);
    assert.match(answer, /attacker\.example\.test is not on the allowlist/);
    assert.match(answer, /agentSandbox\.network\.allow/);
    const plain = await viaHttp(proxyPort, 'http://attacker.example.test/upload');
    assert.equal(plain.status, 403);
  });

  it('refuses raw IP addresses and unlisted ports of the machine', async () => {
    assert.match(
      await viaConnect(proxyPort, `127.0.0.1:${appPort}`),
      /^HTTP\/1\.1 403[\s\S]*127\.0\.0\.1 is an IP address/,
    );
    assert.match(
      await viaConnect(proxyPort, `localhost:${appPort + 1 === 65536 ? 1 : appPort + 1}`),
      /not on the allowlist/,
    );
  });

  it('refuses a listed name that resolves to a loopback or metadata address (rebinding)', async () => {
    const trap = await viaConnect(proxyPort, `trap.example.test:${appPort}`);
    assert.match(trap, /^HTTP\/1\.1 403/);
    assert.match(trap, /resolves to 127\.0\.0\.1, an internal address/);
    const meta = await viaHttp(proxyPort, 'http://meta.example.test/latest/meta-data/');
    assert.equal(meta.status, 403);
    assert.match(meta.body, /169\.254\.169\.254/);
    assert.ok(decisions.some((entry) => !entry.allowed && entry.host === 'trap.example.test'));
  });

  it('reaches a listed name the user mapped, even to an internal address, by CONNECT and plain HTTP', async () => {
    assert.match(await viaConnect(proxyPort, `MINE.test.:${appPort}`), /hello from the test server: GET \/hello/);
    const plain = await viaHttp(proxyPort, `http://mine.test:${appPort}/mapped`);
    assert.equal(plain.status, 200);
    assert.match(plain.body, /GET \/mapped/);
    let decision: NetworkDecision | undefined;
    for (let look = 0; look < 200 && !decision; look++) {
      decision = decisions.find((entry) => entry.allowed && entry.host === 'mine.test' && entry.bytesSent > 0);
      if (!decision) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(decision, JSON.stringify(decisions));
    assert.equal(decision.rule, 'mine.test');
    assert.equal(decision.address, '127.0.0.1');
  });

  it('refuses a name the user mapped but did not list', async () => {
    assert.match(
      await viaConnect(proxyPort, `unlisted.test:${appPort}`),
      /^HTTP\/1\.1 403[\s\S]*unlisted\.test is not on the allowlist/,
    );
  });

  it('asks a function allowlist at each decision', async () => {
    assert.match(await viaConnect(proxyPort, `later.test:${appPort}`), /^HTTP\/1\.1 403/);
    extra = ['later.test'];
    try {
      assert.match(await viaConnect(proxyPort, `later.test:${appPort}`), /hello from the test server/);
    } finally {
      extra = [];
    }
    assert.match(await viaConnect(proxyPort, `later.test:${appPort}`), /^HTTP\/1\.1 403/);
  });

  it('counts the head of a plain HTTP request and answer as bytes sent and received', async () => {
    const before = decisions.length;
    const answer = await viaHttp(proxyPort, `http://localhost:${appPort}/no-body`);
    assert.equal(answer.status, 200);
    let decision: NetworkDecision | undefined;
    for (let look = 0; look < 200 && !decision; look++) {
      decision = decisions.slice(before).find((entry) => entry.allowed);
      if (!decision) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(decision);
    assert.ok(decision.bytesSent > 'GET http://localhost/no-body HTTP/1.1'.length, JSON.stringify(decision));
    assert.ok(decision.bytesReceived > answer.body.length, JSON.stringify(decision));
  });
});
