// Bound secrets in the egress proxy, with HTTPS servers this test starts on 127.0.0.1 under its own
// CA and names it maps itself: the value goes only into the bound header of requests to the bound
// domain; a placeholder anywhere else is left as it is and noted.
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { allowlistSchema } from '../../src/core/network/allowlist';
import { EgressProxy, type NetworkDecision } from '../../src/core/network/egressProxy';
import { bodyWatcher, injectSecrets } from '../../src/core/network/secretInjection';
import { SessionCa } from '../../src/core/network/sessionCa';
import { boundFromHost, boundSecretsLayer, parseBinding, type BoundSecret } from '../../src/core/secrets/bound';
import { KnownSecrets } from '../../src/core/secrets/knownSecrets';

const VALUE = 'real-secret-value-8d1f';

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** CONNECT through the proxy, TLS trusting `ca` for `name`, one GET; the answer's body. */
function viaTls(
  proxyPort: number,
  name: string,
  port: number,
  ca: string,
  headers: string,
  body = '',
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(proxyPort, '127.0.0.1', () =>
      socket.write(`CONNECT ${name}:${port} HTTP/1.1\r\nHost: ${name}:${port}\r\n\r\n`),
    );
    socket.once('data', (chunk) => {
      if (!chunk.toString().startsWith('HTTP/1.1 200')) return reject(new Error(chunk.toString()));
      const tls = tlsConnect({ socket, servername: name, ca }, () =>
        tls.write(`${body ? 'POST' : 'GET'} /path HTTP/1.1\r\n${headers}Connection: close\r\n\r\n${body}`),
      );
      let text = '';
      tls.on('data', (data) => (text += data.toString()));
      tls.on('end', () => resolve(text.slice(text.indexOf('\r\n\r\n') + 4)));
      tls.on('error', reject);
    });
    socket.on('error', reject);
  });
}

describe('bound secrets', () => {
  describe('the binding', () => {
    it('reads NAME=DOMAIN[,DOMAIN]:HOW in its three forms', () => {
      assert.deepEqual(parseBinding('TOKEN=api.example.com,Up.Example.com:header:Authorization: Bearer {value}'), {
        name: 'TOKEN',
        domains: ['api.example.com', 'up.example.com'],
        how: { kind: 'header', header: 'Authorization', template: 'Bearer {value}' },
      });
      assert.deepEqual(parseBinding('K=x.test:header:x-api-key: {value}').how, {
        kind: 'header',
        header: 'x-api-key',
        template: '{value}',
      });
      assert.deepEqual(parseBinding('K=x.test:basic:me').how, { kind: 'basic', user: 'me' });
    });

    it('refuses a bad binding with the right shape in the message', () => {
      for (const bad of [
        'TOKEN',
        'TOKEN=api.example.com',
        'TOKEN=api.example.com:cookie:x',
        '1X=a.test:basic:u',
        'T=a.test:header:Authorization: Bearer',
        'T=10.0.0.1:basic:u',
        'T=:basic:u',
      ])
        assert.throws(() => parseBinding(bad), /NAME=DOMAIN\[,DOMAIN\.\.\.\]:HOW/, bad);
    });

    it('takes the value from the host variable, refuses an unset one, and gives each session its own placeholder', () => {
      const binding = parseBinding('TOKEN=api.example.com:basic:me');
      assert.throws(() => boundFromHost([binding], {}), /host environment variable TOKEN is unset/);
      const one = boundFromHost([binding], { TOKEN: VALUE });
      const two = boundFromHost([binding], { TOKEN: VALUE });
      assert.equal(one.values.TOKEN, VALUE);
      assert.notEqual(one.secrets[0]!.placeholder, two.secrets[0]!.placeholder);
      assert.match(one.secrets[0]!.placeholder, /^agent-sandbox-placeholder-[0-9a-f]{32}$/);
      const layer = boundSecretsLayer(one.secrets);
      assert.equal(layer.env.TOKEN, one.secrets[0]!.placeholder);
      assert.ok(!JSON.stringify(layer).includes(VALUE));
      assert.deepEqual(layer.networkAllow, ['api.example.com']);
      assert.equal(layer.env.SSL_CERT_FILE, layer.env.REQUESTS_CA_BUNDLE);
    });

    it('shows the placeholder and the value as [secret:NAME]', () => {
      const { secrets } = boundFromHost([parseBinding('TOKEN=a.test:basic:me')], { TOKEN: VALUE });
      const known = new KnownSecrets();
      known.add([
        ['TOKEN', VALUE],
        ['TOKEN', secrets[0]!.placeholder],
      ]);
      assert.equal(known.redact(`a ${secrets[0]!.placeholder} b ${VALUE}`), 'a [secret:TOKEN] b [secret:TOKEN]');
    });
  });

  describe('in a request', () => {
    const secret: BoundSecret = {
      ...parseBinding('TOKEN=api.bound.test:header:Authorization: Bearer {value}'),
      placeholder: 'agent-sandbox-placeholder-00112233445566778899aabbccddeeff',
    };
    const secrets = [{ secret, value: VALUE }];
    const auth = ['Host', 'api.bound.test', 'Authorization', `Bearer ${secret.placeholder}`];

    it('replaces it in the bound header of an intercepted request to the bound domain', () => {
      const out = injectSecrets({ host: 'api.bound.test', intercepted: true, url: '/', rawHeaders: auth }, secrets);
      assert.equal(out.rawHeaders[3], `Bearer ${VALUE}`);
      assert.deepEqual(out.notes, ['TOKEN added for api.bound.test']);
    });

    it('leaves it, and notes it, in another header, a URL, another Host, or a request not intercepted', () => {
      const cases = [
        {
          host: 'api.bound.test',
          intercepted: true,
          url: '/',
          rawHeaders: ['Host', 'api.bound.test', 'X-Other', secret.placeholder],
        },
        {
          host: 'api.bound.test',
          intercepted: true,
          url: `/?t=${secret.placeholder}`,
          rawHeaders: ['Host', 'api.bound.test'],
        },
        { host: 'api.bound.test', intercepted: true, url: '/', rawHeaders: ['Host', 'other.test', ...auth.slice(2)] },
        { host: 'api.bound.test', intercepted: false, url: '/', rawHeaders: auth },
        { host: 'other.test', intercepted: true, url: '/', rawHeaders: ['Host', 'other.test', ...auth.slice(2)] },
        {
          host: 'api.bound.test',
          intercepted: true,
          url: '/',
          rawHeaders: ['Host', 'api.bound.test', 'Authorization', `Token ${secret.placeholder}`],
        },
      ];
      for (const request of cases) {
        const out = injectSecrets(request, secrets);
        assert.ok(!out.rawHeaders.join('\n').includes(VALUE), JSON.stringify(request));
        assert.equal(out.notes.length, 1, JSON.stringify(request));
        assert.match(out.notes[0]!, /^TOKEN (sent toward|in a URL toward|toward) \S+.*: not replaced$/);
      }
    });

    it('notes a placeholder in a body once, also when it is cut between two chunks', () => {
      const notes: string[] = [];
      const watch = bodyWatcher(secrets, 'api.bound.test', (note) => notes.push(note));
      const body = Buffer.from(`{"token": "${secret.placeholder}"}`);
      watch(body.subarray(0, 20));
      watch(body.subarray(20));
      watch(body);
      assert.deepEqual(notes, ['TOKEN in a body toward api.bound.test: not replaced']);
      const none: string[] = [];
      const other = bodyWatcher(secrets, 'x', (note) => none.push(note));
      for (let i = 0; i < 100; i++) other(Buffer.from(secret.placeholder.slice(0, 30)));
      assert.deepEqual(none, []);
    });

    it('puts a basic binding`s value in as the password of its user only', () => {
      const basic: BoundSecret = { ...parseBinding('PW=api.bound.test:basic:me'), placeholder: secret.placeholder };
      const header = (user: string) => `Basic ${Buffer.from(`${user}:${secret.placeholder}`).toString('base64')}`;
      const mine = injectSecrets(
        { host: 'api.bound.test', intercepted: true, url: '/', rawHeaders: ['Authorization', header('me')] },
        [{ secret: basic, value: VALUE }],
      );
      assert.equal(Buffer.from(mine.rawHeaders[1]!.slice(6), 'base64').toString(), `me:${VALUE}`);
      const other = injectSecrets(
        { host: 'api.bound.test', intercepted: true, url: '/', rawHeaders: ['Authorization', header('you')] },
        [{ secret: basic, value: VALUE }],
      );
      assert.equal(other.rawHeaders[1], header('you'));
    });
  });

  describe('through the egress proxy', function () {
    this.timeout(20_000);
    const upstreamCa = new SessionCa();
    const seen: { host: string; headers: IncomingHttpHeaders; body?: string }[] = [];
    const https = createHttpsServer(
      { SNICallback: (name, done) => done(null, upstreamCa.contextFor(name)) },
      (request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          seen.push({ host: request.headers.host ?? '', headers: request.headers, body });
          response.end('from the test server');
        });
      },
    );
    const http = createHttpServer((request, response) => {
      seen.push({ host: request.headers.host ?? '', headers: request.headers });
      response.end('plain');
    });
    let proxy: EgressProxy;
    let proxyPort: number;
    let httpsPort: number;
    let httpPort: number;
    let ca: SessionCa;
    const decisions: NetworkDecision[] = [];
    const secret: BoundSecret = {
      ...parseBinding('TOKEN=api.bound.test:header:Authorization: Bearer {value}'),
      placeholder: 'agent-sandbox-placeholder-ffeeddccbbaa99887766554433221100',
    };

    before(async () => {
      httpsPort = await listen(https);
      httpPort = await listen(http);
      ca = new SessionCa();
      proxy = new EgressProxy({
        allowlist: allowlistSchema.parse(['api.bound.test', 'other.test']),
        hosts: { 'api.bound.test': '127.0.0.1', 'other.test': '127.0.0.1' },
        onDecision: (decision) => decisions.push(decision),
        bound: { secrets: [{ secret, value: VALUE }], ca, extraCa: [upstreamCa.certPem] },
      });
      await proxy.listen({ port: 0, host: '127.0.0.1' });
      proxyPort = (proxy.server.address() as AddressInfo).port;
    });

    after(async () => {
      await proxy.close();
      https.close();
      http.close();
    });

    const until = async (check: () => boolean) => {
      for (let i = 0; i < 100 && !check(); i++) await new Promise((done) => setTimeout(done, 20));
    };

    it('gives the bound domain the value, verifying the real server, and notes it', async () => {
      const body = await viaTls(
        proxyPort,
        'api.bound.test',
        httpsPort,
        ca.certPem,
        `Host: api.bound.test\r\nAuthorization: Bearer ${secret.placeholder}\r\n`,
      );
      assert.equal(body, 'from the test server');
      assert.equal(seen.at(-1)!.headers.authorization, `Bearer ${VALUE}`);
      await until(() => decisions.some((decision) => decision.secrets?.length));
      const decision = decisions.find((entry) => entry.host === 'api.bound.test')!;
      assert.deepEqual(decision.secrets, ['TOKEN added for api.bound.test']);
      assert.ok(!JSON.stringify(decisions).includes(VALUE));
    });

    it('sends a placeholder in the body of a request to the bound domain as it is, and notes it', async () => {
      const count = decisions.length;
      const payload = `token=${secret.placeholder}`;
      const body = await viaTls(
        proxyPort,
        'api.bound.test',
        httpsPort,
        ca.certPem,
        `Host: api.bound.test\r\nContent-Length: ${payload.length}\r\n`,
        payload,
      );
      assert.equal(body, 'from the test server');
      assert.equal(seen.at(-1)!.body, payload);
      await until(() => decisions.length > count);
      assert.deepEqual(decisions.at(-1)!.secrets, ['TOKEN in a body toward api.bound.test: not replaced']);
    });

    it('tunnels other names as before: the sandbox`s TLS reaches the real server, which gets the placeholder', async () => {
      const body = await viaTls(
        proxyPort,
        'other.test',
        httpsPort,
        upstreamCa.certPem,
        `Host: other.test\r\nAuthorization: Bearer ${secret.placeholder}\r\n`,
      );
      assert.equal(body, 'from the test server');
      assert.equal(seen.at(-1)!.headers.authorization, `Bearer ${secret.placeholder}`);
    });

    it('notes a placeholder sent in plain HTTP, and never replaces it', async () => {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(proxyPort, '127.0.0.1', () =>
          socket.write(
            `GET http://other.test:${httpPort}/ HTTP/1.1\r\nHost: other.test:${httpPort}\r\nAuthorization: Bearer ${secret.placeholder}\r\nConnection: close\r\n\r\n`,
          ),
        );
        let text = '';
        socket.on('data', (data) => (text += data.toString()));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      assert.match(answer, /plain$/);
      assert.equal(seen.at(-1)!.headers.authorization, `Bearer ${secret.placeholder}`);
      await until(() => decisions.some((decision) => decision.port === httpPort));
      const decision = decisions.find((entry) => entry.port === httpPort)!;
      assert.deepEqual(decision.secrets, ['TOKEN sent toward other.test: not replaced']);
    });

    it('refuses a bound domain whose real server it cannot verify (502), without sending the value', async () => {
      const strict = new EgressProxy({
        allowlist: allowlistSchema.parse(['api.bound.test']),
        hosts: { 'api.bound.test': '127.0.0.1' },
        bound: { secrets: [{ secret, value: VALUE }], ca },
      });
      await strict.listen({ port: 0, host: '127.0.0.1' });
      const before = seen.length;
      try {
        const port = (strict.server.address() as AddressInfo).port;
        const body = await viaTls(
          port,
          'api.bound.test',
          httpsPort,
          ca.certPem,
          `Host: api.bound.test\r\nAuthorization: Bearer ${secret.placeholder}\r\n`,
        );
        assert.match(body, /Agent Sandbox proxy: .*certificate/);
        assert.equal(seen.length, before);
      } finally {
        await strict.close();
      }
    });
  });
});
