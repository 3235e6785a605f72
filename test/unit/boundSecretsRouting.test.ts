// Bound secrets: a request inside the bound domain's TLS gets the value only when what a server
// behind a shared address routes by names the bound domain too (the hostile suite,
// test/hostile/boundSecrets.test.ts, attacks the same through the real proxy).
import assert from 'node:assert/strict';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { allowlistSchema } from '../../src/core/network/allowlist';
import { EgressProxy } from '../../src/core/network/egressProxy';
import { injectSecrets } from '../../src/core/network/secretInjection';
import { SessionCa } from '../../src/core/network/sessionCa';
import { parseBinding, type BoundSecret } from '../../src/core/secrets/bound';

const VALUE = 'real-secret-value-51c2';
const secret: BoundSecret = {
  ...parseBinding('TOKEN=api.bound.test:header:Authorization: Bearer {value}'),
  placeholder: 'agent-sandbox-placeholder-0123456789abcdef0123456789abcdef',
};
const auth = ['Authorization', `Bearer ${secret.placeholder}`];
const inject = (method: string, url: string, rawHeaders: string[]) =>
  injectSecrets({ host: 'api.bound.test', intercepted: true, method, url, rawHeaders }, [{ secret, value: VALUE }]);

describe('bound secrets: what a request names', () => {
  it('gives the value to a path or * with one Host naming the bound domain (any case, port or final dot)', () => {
    for (const host of ['api.bound.test', 'API.Bound.Test.', 'api.bound.test:443', 'api.bound.test:8443'])
      for (const url of ['/', '/v1?x=1', '*']) {
        const out = inject('GET', url, ['Host', host, ...auth]);
        assert.equal(out.rawHeaders[3], `Bearer ${VALUE}`, `${host} ${url}`);
        assert.deepEqual(out.notes, ['TOKEN added for api.bound.test']);
      }
    // No Host (HTTP/1.0): the request is for the connection's name, which the proxy then sends as Host.
    assert.equal(inject('GET', '/', auth).rawHeaders[1], `Bearer ${VALUE}`);
  });

  it('never for a target in absolute form, another or an empty Host, two Hosts, or TRACE; each noted', () => {
    const cases: [string, string, string[], string][] = [
      ['GET', 'https://evil.test/x', ['Host', 'api.bound.test'], 'TOKEN sent toward evil.test: not replaced'],
      ['GET', 'http://evil.test:80/x', ['Host', 'api.bound.test'], 'TOKEN sent toward evil.test: not replaced'],
      [
        'GET',
        'https://api.bound.test/x',
        ['Host', 'evil.test'],
        'TOKEN toward api.bound.test in a request in absolute form: not replaced',
      ],
      [
        'GET',
        '/',
        ['Host', 'api.bound.test', 'host', 'evil.test'],
        'TOKEN toward api.bound.test with 2 Host headers: not replaced',
      ],
      ['GET', '/', ['Host', 'evil.test', 'HOST', 'api.bound.test'], 'TOKEN sent toward evil.test: not replaced'],
      ['GET', '/', ['Host', ''], 'TOKEN sent toward an empty Host: not replaced'],
      ['GET', '/', ['Host', 'api.bound.test.evil.test'], 'TOKEN sent toward api.bound.test.evil.test: not replaced'],
      ['TRACE', '/', ['Host', 'api.bound.test'], 'TOKEN toward api.bound.test in a TRACE request: not replaced'],
      ['track', '/', ['Host', 'api.bound.test'], 'TOKEN toward api.bound.test in a TRACK request: not replaced'],
    ];
    for (const [method, url, hosts, note] of cases) {
      const out = inject(method, url, [...hosts, ...auth]);
      assert.ok(!out.rawHeaders.join('\n').includes(VALUE), `${method} ${url} ${hosts.join(' ')}`);
      assert.deepEqual(out.notes, [note]);
    }
  });

  it('keeps a note short whatever the Host holds', () => {
    const out = inject('GET', '/', ['Host', `${'a'.repeat(5000)}.test`, ...auth]);
    assert.ok(out.notes[0]!.length < 320, out.notes[0]);
  });
});

describe('bound secrets: a value a header cannot carry', function () {
  this.timeout(20_000);
  const broken = [{ secret, value: 'first-line\r\nX-Injected: yes' }];

  it('is never put in (it would end the header), and is noted without the value', () => {
    const out = injectSecrets(
      {
        host: 'api.bound.test',
        intercepted: true,
        method: 'GET',
        url: '/',
        rawHeaders: ['Host', 'api.bound.test', ...auth],
      },
      broken,
    );
    assert.equal(out.rawHeaders[3], `Bearer ${secret.placeholder}`);
    assert.deepEqual(out.notes, [
      'TOKEN for api.bound.test: not replaced, its value holds a line break or another character a header cannot carry',
    ]);
  });

  it('does not stop the proxy: the request goes on with the placeholder, and the next one is served', async () => {
    const upstreamCa = new SessionCa();
    const seen: string[] = [];
    const server = createHttpsServer(
      { SNICallback: (name, done) => done(null, upstreamCa.contextFor(name)) },
      (request, response) => {
        seen.push(String(request.headers.authorization));
        response.end('ok');
      },
    );
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const ca = new SessionCa();
    const proxy = new EgressProxy({
      allowlist: allowlistSchema.parse(['api.bound.test']),
      hosts: { 'api.bound.test': '127.0.0.1' },
      bound: { secrets: broken, ca, extraCa: [upstreamCa.certPem] },
    });
    await proxy.listen({ port: 0, host: '127.0.0.1' });
    try {
      const port = (server.address() as AddressInfo).port;
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect((proxy.server.address() as AddressInfo).port, '127.0.0.1', () =>
          socket.write(`CONNECT api.bound.test:${port} HTTP/1.1\r\n\r\n`),
        );
        socket.once('data', () => {
          const tls = tlsConnect({ socket, servername: 'api.bound.test', ca: ca.certPem }, () =>
            tls.write(
              `GET /1 HTTP/1.1\r\nHost: api.bound.test\r\n${auth.join(': ')}\r\n\r\nGET /2 HTTP/1.1\r\nHost: api.bound.test\r\nConnection: close\r\n\r\n`,
            ),
          );
          let text = '';
          tls.on('data', (data) => (text += data.toString()));
          tls.on('end', () => resolve(text));
          tls.on('error', reject);
        });
        socket.on('error', reject);
      });
      assert.equal(answer.match(/HTTP\/1\.1 200/g)?.length, 2, answer);
      assert.deepEqual(seen, [`Bearer ${secret.placeholder}`, 'undefined']);
    } finally {
      await proxy.close();
      server.close();
    }
  });
});
