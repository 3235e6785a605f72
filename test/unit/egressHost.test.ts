// The host side of the allowlist tier without an engine: the decision log (numbered, rotated, read
// from its end) and the proxy process's body run in this process on a temporary folder, with the
// relay played by the test (a lifeline socket and HTTP requests on the proxy socket). Names are
// mapped to the test's own server on 127.0.0.1; nothing else is reached.
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecisionLog, DECISIONS_FILE, readDecisions } from '../../src/core/network/decisionLog';
import { EGRESS_FILES } from '../../src/core/network/egressFiles';
import { runEgressHost } from '../../src/core/network/egressHost';
import type { NetworkDecision } from '../../src/core/network/egressProxy';

const decision = (host: string, allowed = false): NetworkDecision => ({
  host,
  port: 443,
  allowed,
  ...(allowed ? { rule: host } : { reason: `${host} is not on the allowlist` }),
  bytesSent: 0,
  bytesReceived: 0,
  at: new Date().toISOString(),
});

describe('network allowlist: the decision log', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'agent-sandbox-decisions-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('numbers decisions from 1, goes on from the last one after a restart, and reads after a cursor', () => {
    const log = new DecisionLog(dir);
    for (const host of ['a.test', 'b.test', 'c.test']) log.append(decision(host));
    assert.deepEqual(
      readDecisions(dir).decisions.map((entry) => [entry.seq, entry.host]),
      [
        [1, 'a.test'],
        [2, 'b.test'],
        [3, 'c.test'],
      ],
    );
    new DecisionLog(dir).append(decision('d.test', true));
    const later = readDecisions(dir, { after: 2 });
    assert.deepEqual(
      later.decisions.map((entry) => [entry.seq, entry.host, entry.allowed, entry.rule]),
      [
        [3, 'c.test', false, undefined],
        [4, 'd.test', true, 'd.test'],
      ],
    );
    assert.equal(later.cursor, 4);
    assert.equal(later.truncated, false);
    assert.deepEqual(readDecisions(dir, { after: 4 }), { decisions: [], cursor: 4, truncated: false });
    assert.deepEqual(readDecisions(join(dir, 'none')), { decisions: [], cursor: 0, truncated: false });
  });

  it('stays bounded: rotated past 1 MiB, one older generation kept, reads take the newest', () => {
    const log = new DecisionLog(dir);
    const long = 'x'.repeat(200);
    const total = 12_000;
    for (let index = 0; index < total; index++) log.append(decision(`${long}-${index}.test`));
    assert.ok(statSync(join(dir, DECISIONS_FILE)).size <= 1024 * 1024 + 1024);
    assert.ok(statSync(join(dir, 'decisions.1.jsonl')).size <= 1024 * 1024 + 1024);
    const newest = readDecisions(dir, { max: 5 });
    assert.deepEqual(
      newest.decisions.map((entry) => entry.seq),
      [total - 4, total - 3, total - 2, total - 1, total],
    );
    assert.equal(newest.truncated, true);
    const many = readDecisions(dir, { max: 100_000 });
    assert.ok(many.decisions.length <= 2000 && many.decisions.length > 100, String(many.decisions.length));
    const seqs = many.decisions.map((entry) => entry.seq);
    assert.deepEqual(
      seqs,
      seqs.map((_, index) => total - seqs.length + 1 + index),
    );
    assert.equal(many.truncated, true, 'the oldest are gone');
  });

  it('cuts a requested name longer than any DNS name, and skips a line cut by a crash', () => {
    const log = new DecisionLog(dir);
    log.append(decision('a'.repeat(5000)));
    appendFileSync(join(dir, DECISIONS_FILE), '{"seq":2,"at":"2026-01-01T00:00:00Z","host":"cut');
    appendFileSync(join(dir, DECISIONS_FILE), '\n');
    log.append(decision('b.test'));
    const page = readDecisions(dir);
    assert.deepEqual(
      page.decisions.map((entry) => entry.seq),
      [1, 2],
    );
    assert.ok(page.decisions[0]!.host.length <= 301);
  });
});

describe('network allowlist: the proxy process on the host', function () {
  this.timeout(20_000);
  let dir: string;
  let app: Server;
  let appPort: number;

  before(async () => {
    app = createServer((req, res) => res.end(`hello: ${req.method} ${req.url}`));
    await new Promise<void>((done) => app.listen(0, '127.0.0.1', done));
    appPort = (app.address() as AddressInfo).port;
  });
  after(() => new Promise((done) => app.close(done)));
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agent-sandbox-egress-'));
    writeFileSync(
      join(dir, EGRESS_FILES.config),
      JSON.stringify({
        allow: ['api.test', `localhost:${appPort}`],
        hosts: { 'api.test': '127.0.0.1', 'index.test': '127.0.0.1' },
        localAddress: '127.0.0.1',
      }),
    );
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function ready(): Promise<void> {
    for (let look = 0; look < 500 && !existsSync(join(dir, EGRESS_FILES.ready)); look++)
      await new Promise((done) => setTimeout(done, 10));
    assert.ok(existsSync(join(dir, EGRESS_FILES.ready)), 'the proxy listens');
  }

  /** One plain HTTP request through the proxy socket, as the relay passes it on. */
  function get(url: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const outgoing = request({ socketPath: join(dir, EGRESS_FILES.proxySocket), path: url }, (answer) => {
        let body = '';
        answer.on('data', (chunk) => (body += chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body }));
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
  }

  it('serves while the relay holds its lifeline, logs each decision, and ends when the lifeline is gone', async () => {
    const controller = new AbortController();
    const running = runEgressHost(dir, controller.signal, { firstLifelineMs: 5000, lifelineGoneMs: 200 });
    try {
      await ready();
      assert.equal(readFileSync(join(dir, EGRESS_FILES.lock), 'utf8'), String(process.pid));
      assert.equal(statSync(join(dir, EGRESS_FILES.proxySocket)).mode & 0o777, 0o666);
      assert.equal(statSync(join(dir, EGRESS_FILES.sockets)).mode & 0o777, 0o711);
      const lifeline = connect(join(dir, EGRESS_FILES.lifelineSocket));
      await new Promise((done) => lifeline.once('connect', done));

      assert.deepEqual(await get(`http://api.test:${appPort}/x`), { status: 200, body: 'hello: GET /x' });
      assert.deepEqual(await get(`http://host.docker.internal:${appPort}/y`), { status: 200, body: 'hello: GET /y' });
      const refused = await get(`http://index.test:${appPort}/simple/`);
      assert.equal(refused.status, 403);
      assert.match(refused.body, /index\.test is not on the allowlist/);

      // The package index, for the install only: allowed while the file says so, refused again after.
      writeFileSync(
        join(dir, EGRESS_FILES.install),
        JSON.stringify({ allow: ['index.test'], until: Date.now() + 60_000 }),
      );
      assert.equal((await get(`http://index.test:${appPort}/simple/`)).status, 200);
      rmSync(join(dir, EGRESS_FILES.install));
      assert.equal((await get(`http://index.test:${appPort}/simple/`)).status, 403);
      writeFileSync(join(dir, EGRESS_FILES.install), JSON.stringify({ allow: ['index.test'], until: Date.now() - 1 }));
      assert.equal((await get(`http://index.test:${appPort}/simple/`)).status, 403, 'an install window that ended');

      const page = readDecisions(dir);
      assert.deepEqual(
        page.decisions.map((entry) => [entry.host, entry.allowed, entry.rule ?? entry.reason]),
        [
          ['api.test', true, 'api.test'],
          ['host.docker.internal', true, `localhost:${appPort}`],
          ['index.test', false, 'index.test is not on the allowlist'],
          ['index.test', true, 'index.test (package install)'],
          ['index.test', false, 'index.test is not on the allowlist'],
          ['index.test', false, 'index.test is not on the allowlist'],
        ],
      );
      assert.ok(page.decisions[0]!.bytesReceived > 0);

      lifeline.destroy();
      await running;
      for (const name of [EGRESS_FILES.lock, EGRESS_FILES.ready, EGRESS_FILES.proxySocket, EGRESS_FILES.lifelineSocket])
        assert.equal(existsSync(join(dir, name)), false, `${name} is gone`);
      assert.equal(readDecisions(dir).decisions.length, 6, 'the decisions stay');
    } finally {
      controller.abort();
      await running;
    }
  });

  it('ends when no relay links within its time, and when stopped', async () => {
    await runEgressHost(dir, new AbortController().signal, { firstLifelineMs: 300 });
    assert.equal(existsSync(join(dir, EGRESS_FILES.lock)), false);
    const controller = new AbortController();
    const running = runEgressHost(dir, controller.signal, { firstLifelineMs: 60_000 });
    await ready();
    controller.abort();
    await running;
    assert.equal(existsSync(join(dir, EGRESS_FILES.ready)), false);
  });

  it('leaves a folder that a living process serves to it', async () => {
    writeFileSync(join(dir, EGRESS_FILES.lock), String(process.pid));
    await runEgressHost(dir, new AbortController().signal, { firstLifelineMs: 60_000 });
    assert.equal(existsSync(join(dir, EGRESS_FILES.ready)), false, 'it never listened');
  });
});
