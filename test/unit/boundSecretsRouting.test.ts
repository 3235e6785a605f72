// Bound secrets: a request inside the bound domain's TLS gets the value only when what a server
// behind a shared address routes by names the bound domain too (the hostile suite,
// test/hostile/boundSecrets.test.ts, attacks the same through the real proxy).
import assert from 'node:assert/strict';
import { injectSecrets } from '../../src/core/network/secretInjection';
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
