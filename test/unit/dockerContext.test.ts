// Where the engine is, in the docker CLI's order: explicit host, DOCKER_HOST, the Docker context
// (DOCKER_CONTEXT, else config.json's currentContext, with its TLS files), the default socket. Real
// files in a temporary DOCKER_CONFIG, laid out as `docker context create` lays them out.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxError } from '../../src/core/errors';
import { resolveEndpoint } from '../../src/engines/docker/connection';

function dockerConfig(current: string | undefined, contexts: Record<string, { host: string; tls?: boolean }>) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-sandbox-docker-config-'));
  if (current !== undefined) writeFileSync(join(dir, 'config.json'), JSON.stringify({ currentContext: current }));
  for (const [name, context] of Object.entries(contexts)) {
    const id = createHash('sha256').update(name).digest('hex');
    mkdirSync(join(dir, 'contexts', 'meta', id), { recursive: true });
    writeFileSync(
      join(dir, 'contexts', 'meta', id, 'meta.json'),
      JSON.stringify({ Name: name, Metadata: {}, Endpoints: { docker: { Host: context.host, SkipTLSVerify: false } } }),
    );
    if (context.tls) {
      mkdirSync(join(dir, 'contexts', 'tls', id, 'docker'), { recursive: true });
      for (const file of ['ca.pem', 'cert.pem', 'key.pem'])
        writeFileSync(join(dir, 'contexts', 'tls', id, 'docker', file), `${name} ${file}`);
    }
  }
  return dir;
}

describe('engine address: Docker contexts', () => {
  const contexts = {
    desktop: { host: 'unix:///home/me/.docker/run/docker.sock' },
    remote: { host: 'tcp://engine.example:2376', tls: true },
  };

  it('takes the current context of config.json: its socket, named in the source', () => {
    const endpoint = resolveEndpoint(undefined, { DOCKER_CONFIG: dockerConfig('desktop', contexts) });
    assert.equal(endpoint.description, 'unix:///home/me/.docker/run/docker.sock');
    assert.match(endpoint.source, /^the Docker context "desktop" \(from .*config\.json\)$/);
    assert.equal(endpoint.local, true);
  });

  it('DOCKER_CONTEXT wins over config.json; a TLS context gets its files and counts as another machine', () => {
    const endpoint = resolveEndpoint(undefined, {
      DOCKER_CONFIG: dockerConfig('desktop', contexts),
      DOCKER_CONTEXT: 'remote',
    });
    assert.equal(endpoint.description, 'tcp://engine.example:2376 (TLS)');
    assert.equal(endpoint.source, 'the Docker context "remote" (from DOCKER_CONTEXT)');
    assert.equal(String(endpoint.options.ca), 'remote ca.pem');
    assert.equal(String(endpoint.options.cert), 'remote cert.pem');
    assert.equal(String(endpoint.options.key), 'remote key.pem');
    assert.equal(endpoint.options.protocol, 'https');
    assert.equal(endpoint.local, false);
  });

  it('DOCKER_HOST and an explicit host win over any context; "default" means none', () => {
    const config = dockerConfig('remote', contexts);
    assert.equal(
      resolveEndpoint(undefined, { DOCKER_CONFIG: config, DOCKER_HOST: 'unix:///run/x.sock' }).description,
      'unix:///run/x.sock',
    );
    assert.equal(resolveEndpoint('tcp://127.0.0.1:2375', { DOCKER_CONFIG: config }).local, true);
    const none = resolveEndpoint(undefined, { DOCKER_CONFIG: dockerConfig('default', contexts) });
    assert.equal(none.source, 'the default socket');
  });

  it('a context that does not exist is an engine error saying how to pick one', () => {
    assert.throws(
      () => resolveEndpoint(undefined, { DOCKER_CONFIG: dockerConfig(undefined, contexts), DOCKER_CONTEXT: 'gone' }),
      (error: unknown) =>
        SandboxError.is(error, 'engine-unavailable') &&
        /context "gone" \(from DOCKER_CONTEXT\) does not exist/.test(error.message) &&
        /docker context ls/.test(error.hint ?? ''),
    );
  });

  it('counts only loopback names as this machine for TCP, and ssh as another machine', () => {
    assert.equal(resolveEndpoint('tcp://localhost:2375', {}).local, true);
    assert.equal(resolveEndpoint('tcp://[::1]:2375', {}).local, true);
    assert.equal(resolveEndpoint('tcp://127.0.0.2:2376', {}).local, false);
    assert.equal(resolveEndpoint('tcp://build-box:2376', {}).local, false);
    assert.equal(resolveEndpoint('ssh://me@build-box', {}).local, false);
  });
});
