import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxError } from '../../src/core/errors';
import { connectionError, defaultSockets, podmanSockets, resolveEndpoint } from '../../src/engines/docker/connection';

describe('engine endpoint', () => {
  it('uses the default socket without DOCKER_HOST', () => {
    const endpoint = resolveEndpoint(undefined, {}, { exists: () => false });
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

describe('engine endpoint: Podman, when no Docker socket exists', () => {
  const on = (...paths: string[]) => ({ exists: (path: string) => paths.includes(path), uid: 1000 });
  const rootless = '/run/user/1000/podman/podman.sock';

  it("finds the user's own Podman socket (rootless), then the system's (rootful)", () => {
    const user = resolveEndpoint(undefined, { XDG_RUNTIME_DIR: '/run/user/1000' }, on(rootless));
    assert.equal(user.description, `unix://${rootless}`);
    assert.equal(user.source, 'the Podman socket');
    assert.equal(user.local, true);
    const system = resolveEndpoint(undefined, {}, on('/run/podman/podman.sock'));
    assert.deepEqual(system.options, { socketPath: '/run/podman/podman.sock' });
    assert.deepEqual(podmanSockets({}, 1000), [rootless, '/run/podman/podman.sock']);
    // root runs the system service; its own runtime folder comes second.
    assert.deepEqual(podmanSockets({ XDG_RUNTIME_DIR: '/run/user/0' }, 0), [
      '/run/podman/podman.sock',
      '/run/user/0/podman/podman.sock',
    ]);
  });

  it('reads CONTAINER_HOST as Podman does, unix or tcp', () => {
    const unix = resolveEndpoint(undefined, { CONTAINER_HOST: 'unix:///tmp/p.sock' }, on(rootless));
    assert.deepEqual(unix.options, { socketPath: '/tmp/p.sock' });
    assert.equal(unix.source, 'CONTAINER_HOST (Podman)');
    const tcp = resolveEndpoint(undefined, { CONTAINER_HOST: 'tcp://127.0.0.1:8888' }, on());
    assert.deepEqual(tcp.options, { protocol: 'http', host: '127.0.0.1', port: '8888' });
    assert.equal(tcp.local, true);
  });

  it('refuses Podman over ssh, saying what to use instead', () => {
    assert.throws(
      () => resolveEndpoint(undefined, { CONTAINER_HOST: 'ssh://me@far:22/run/user/1000/podman/podman.sock' }, on()),
      (error: unknown) =>
        SandboxError.is(error, 'engine-unavailable') &&
        /Podman over ssh is not supported/.test(error.message) &&
        /unset CONTAINER_HOST/.test(error.hint!),
    );
  });

  it("keeps Docker first: its socket, DOCKER_HOST and contexts come before Podman's", () => {
    const docker = defaultSockets()[0]!;
    const both = resolveEndpoint(undefined, { CONTAINER_HOST: 'unix:///tmp/p.sock' }, on(docker, rootless));
    assert.equal(both.description, `unix://${docker}`);
    assert.equal(both.source, 'the default socket');
    const host = resolveEndpoint(undefined, { DOCKER_HOST: 'unix:///d.sock', CONTAINER_HOST: 'unix:///p.sock' }, on());
    assert.equal(host.source, 'DOCKER_HOST');
    const setting = resolveEndpoint('unix:///s.sock', { CONTAINER_HOST: 'unix:///p.sock' }, on(rootless));
    assert.equal(setting.description, 'unix:///s.sock');
  });

  it("names Docker's default socket when neither engine has one", () => {
    const none = resolveEndpoint(undefined, {}, on());
    assert.equal(none.description, `unix://${defaultSockets()[0]}`);
    assert.equal(none.source, 'the default socket');
  });
});
