// The connections an allowlist proxy has under way, so that a tool call waits for its own decisions:
// the proxy with a server this test starts on 127.0.0.1, and the file a call reads.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allowlistSchema } from '../../src/core/network/allowlist';
import { EgressProxy, type NetworkDecision } from '../../src/core/network/egressProxy';
import { UNDER_WAY_FILE, connectionsSettled, readUnderWay, writeUnderWay } from '../../src/core/network/underWay';

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

describe('allowlist proxy: connections under way', () => {
  let app: Server;
  let appPort: number;
  let proxy: EgressProxy;
  let proxyPort: number;
  const decisions: NetworkDecision[] = [];
  /** Each report of the connections under way, with how many decisions were told by then. */
  const reports: { underWay: number; decided: number }[] = [];

  before(async () => {
    app = createServer((req, res) => res.end(`hello: ${req.method} ${req.url}`));
    appPort = await listen(app);
    proxy = new EgressProxy({
      allowlist: allowlistSchema.parse([`localhost:${appPort}`]),
      onDecision: (decision) => decisions.push(decision),
      onUnderWay: (startedAt) => reports.push({ underWay: startedAt.length, decided: decisions.length }),
    });
    await proxy.listen({ port: 0, host: '127.0.0.1' });
    proxyPort = (proxy.server.address() as AddressInfo).port;
  });

  after(async () => {
    await proxy?.close();
    await new Promise((resolve) => app?.close(resolve));
  });

  it('counts a tunnel from before its answer until after its decision, and a refusal not at all', async () => {
    reports.length = 0;
    decisions.length = 0;
    const socket = connect(proxyPort, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.write(`CONNECT localhost:${appPort} HTTP/1.1\r\nHost: localhost:${appPort}\r\n\r\n`);
    while (!text.startsWith('HTTP/1.1 200')) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(reports, [{ underWay: 1, decided: 0 }], 'under way before the sandbox got its answer');
    socket.write(`GET /held HTTP/1.1\r\nHost: localhost:${appPort}\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => socket.once('close', resolve));
    while (reports.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.match(text, /hello: GET \/held/);
    assert.deepEqual(reports[1], { underWay: 0, decided: 1 }, 'its decision was told before it left');

    const refused = connect(proxyPort, '127.0.0.1');
    refused.write('CONNECT elsewhere.test:443 HTTP/1.1\r\nHost: elsewhere.test:443\r\n\r\n');
    refused.resume();
    await new Promise((resolve) => refused.once('close', resolve));
    assert.equal(decisions.at(-1)?.allowed, false);
    assert.equal(reports.length, 2, 'a refusal is decided at once: never under way');
  });

  it('counts a plain HTTP request until its answer has ended and is decided', async () => {
    reports.length = 0;
    decisions.length = 0;
    const socket = connect(proxyPort, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.write(
      `GET http://localhost:${appPort}/plain HTTP/1.1\r\nHost: localhost:${appPort}\r\nConnection: close\r\n\r\n`,
    );
    await new Promise((resolve) => socket.once('close', resolve));
    assert.match(text, /hello: GET \/plain/);
    assert.deepEqual(reports, [
      { underWay: 1, decided: 0 },
      { underWay: 0, decided: 1 },
    ]);
  });
});

describe('allowlist proxy: a call waits for its own connections', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'agent-sandbox-underway-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('waits for a connection begun since the call began, until it is decided', async () => {
    const since = Date.now();
    writeUnderWay(dir, [since - 60_000, since + 1]);
    let decided = false;
    const timer = setTimeout(() => {
      decided = true;
      writeUnderWay(dir, [since - 60_000]);
    }, 50);
    await connectionsSettled(dir, since, () => true, 60_000);
    clearTimeout(timer);
    assert.ok(decided, 'it returned only once the connection had left');
    assert.deepEqual(
      readUnderWay(dir),
      [since - 60_000],
      'an older connection (an earlier call, still open) is not waited for',
    );
  });

  it('waits no longer than its bound, nor once no proxy serves the folder', async () => {
    const since = Date.now();
    writeUnderWay(dir, [since]);
    await connectionsSettled(dir, since, () => true, 30);
    let asked = 0;
    await connectionsSettled(dir, since, () => (asked++, false), 60_000);
    assert.equal(asked, 1);
    assert.deepEqual(readUnderWay(dir), [since], 'still under way: the connection is held open');
  });

  it('reads a missing or broken file as nothing under way', () => {
    assert.deepEqual(readUnderWay(dir), []);
    writeFileSync(join(dir, UNDER_WAY_FILE), '[1700000000000, "x"');
    assert.deepEqual(readUnderWay(dir), []);
    writeFileSync(join(dir, UNDER_WAY_FILE), '[1700000000000, "x"]');
    assert.deepEqual(readUnderWay(dir), [1700000000000]);
  });
});
