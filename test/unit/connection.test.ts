import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxError } from '../../src/core/errors';
import { connectionError, resolveEndpoint } from '../../src/engines/docker/connection';

describe('engine endpoint', () => {
  it('uses the default socket without DOCKER_HOST', () => {
    const endpoint = resolveEndpoint(undefined, {});
    assert.match(endpoint.description, /^unix:\/\/.*docker\.sock$/);
    assert.equal(endpoint.source, 'the default socket');
  });

  it('reads unix and tcp DOCKER_HOST', () => {
    assert.deepEqual(resolveEndpoint(undefined, { DOCKER_HOST: 'unix:///tmp/podman.sock' }).options, {
      socketPath: '/tmp/podman.sock',
    });
    const tcp = resolveEndpoint(undefined, { DOCKER_HOST: 'tcp://10.0.0.5:2375' });
    assert.deepEqual(tcp.options, { protocol: 'http', host: '10.0.0.5', port: '2375' });
    assert.equal(tcp.source, 'DOCKER_HOST');
  });

  it('reads TLS variables for tcp', () => {
    const dir = mkdtempSync(join(tmpdir(), 'certs-'));
    for (const file of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(join(dir, file), file);
    const endpoint = resolveEndpoint(undefined, {
      DOCKER_HOST: 'tcp://engine:2376',
      DOCKER_TLS_VERIFY: '1',
      DOCKER_CERT_PATH: dir,
    });
    assert.equal(endpoint.options.protocol, 'https');
    assert.equal(String(endpoint.options.ca), 'ca.pem');
    assert.equal(endpoint.description, 'tcp://engine:2376 (TLS)');
    assert.throws(
      () =>
        resolveEndpoint(undefined, {
          DOCKER_HOST: 'tcp://engine:2376',
          DOCKER_TLS_VERIFY: '1',
          DOCKER_CERT_PATH: '/nonexistent',
        }),
      /Cannot read the TLS certificates/,
    );
  });

  it('prefers the setting over DOCKER_HOST', () => {
    const endpoint = resolveEndpoint('unix:///run/user/1000/docker.sock', { DOCKER_HOST: 'tcp://x:2375' });
    assert.equal(endpoint.description, 'unix:///run/user/1000/docker.sock');
    assert.equal(endpoint.source, 'the setting agentSandbox.engineHost');
  });

  it('explains connection failures with the fix', () => {
    const endpoint = resolveEndpoint(undefined, { DOCKER_HOST: 'unix:///nope.sock' });
    const missing = connectionError(Object.assign(new Error('connect ENOENT'), { code: 'ENOENT' }), endpoint);
    assert.ok(SandboxError.is(missing, 'engine-unavailable'));
    assert.match(missing.message, /unix:\/\/\/nope\.sock \(from DOCKER_HOST\).*does not exist/);
    assert.match(missing.hint!, /Start Docker/);
    const denied = connectionError(Object.assign(new Error('connect EACCES'), { code: 'EACCES' }), endpoint);
    assert.ok(SandboxError.is(denied, 'engine-permission'));
    assert.match(denied.hint!, /usermod -aG docker/);
  });
});
