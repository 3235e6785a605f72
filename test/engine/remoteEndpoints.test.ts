/**
 * Engines reached over TCP with TLS, and through Docker contexts, with the built CLI: a TLS endpoint
 * the test starts on 127.0.0.1 and 127.0.0.2 (its own CA from openssl; client certificates required,
 * as dockerd --tlsverify does), relaying to the test engine's socket. DOCKER_HOST with
 * DOCKER_TLS_VERIFY and DOCKER_CERT_PATH reaches it; a client without a certificate is refused with
 * an error that names the endpoint; a Docker context (config.json's current one, or DOCKER_CONTEXT)
 * is resolved as the docker CLI does, TLS files included; an engine on another machine (here
 * 127.0.0.2, not a loopback name) refuses ro/rw access, which would mount a folder it cannot see,
 * and offers copy, which works through the archive API. Needs dist/ (node esbuild.mjs).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import { resolveEndpoint } from '../../src/engines/docker/connection';
import { CLI, runCliText } from './cliRunner';
import { TEST_IMAGES, requireEngine } from './harness';

/** A CA, a server certificate for 127.0.0.1 and 127.0.0.2, and a client certificate, in `dir`. */
function certificates(dir: string): void {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca-key.pem',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=engine test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  const leaf = (name: string, ext: string) => {
    ssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}-key.pem`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${name}`,
    );
    writeFileSync(join(dir, `${name}.ext`), ext);
    ssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    );
  };
  leaf('server', 'subjectAltName=IP:127.0.0.1,IP:127.0.0.2\nextendedKeyUsage=serverAuth\n');
  leaf('client', 'extendedKeyUsage=clientAuth\n');
}

describe('remote engines: TCP with TLS, and Docker contexts (real engine)', function () {
  /** A TLS endpoint (client certificates required, as dockerd --tlsverify) joining each connection to the engine's socket. */
  const relay = (
    socketPath: string,
    allowHalfOpen: boolean,
    /** Drops the connection both ways once a compute run's request has gone through (a connection lost mid-run). */
    cutAfterRequest = false,
  ): Server => {
    const relayed = createServer(
      {
        key: readFileSync(join(certs, 'server-key.pem')),
        cert: readFileSync(join(certs, 'server.pem')),
        ca: readFileSync(join(certs, 'ca.pem')),
        requestCert: true,
        rejectUnauthorized: true,
        allowHalfOpen,
      },
      (client) => {
        const engine = connect(socketPath);
        sockets.push(client, engine);
        client.pipe(engine).pipe(client);
        if (cutAfterRequest) {
          let seen = '';
          client.on('data', (chunk: Buffer) => {
            seen = (seen + chunk.toString('latin1')).slice(-4096);
            if (/(^|[^0-9a-f])[0-9a-f]{32} \d+\n/.test(seen))
              setImmediate(() => {
                client.destroy();
                engine.destroy();
              });
          });
        }
        client.on('error', () => engine.destroy());
        engine.on('error', () => client.destroy());
      },
    );
    relayed.on('tlsClientError', () => undefined);
    return relayed;
  };
  this.timeout(180_000);
  const work = mkdtempSync(join(tmpdir(), 'agent-sandbox-remote-'));
  const certs = join(work, 'certs');
  const folder = join(work, 'folder');
  const sockets: Socket[] = [];
  let server: Server;
  let port = 0;
  const base: NodeJS.ProcessEnv = {};
  const cli = (args: string[], env: NodeJS.ProcessEnv) =>
    runCliText([args[0]!, '--folder', folder, '--engine', 'docker', ...args.slice(1)], {
      env: { ...base, ...env },
      stdin: '',
    });

  before(async function () {
    await requireEngine(this);
    assert.ok(existsSync(CLI), `build the CLI first (node esbuild.mjs): ${CLI}`);
    mkdirSync(certs, { recursive: true });
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'hello.txt'), 'hello from the folder\n');
    certificates(certs);
    const socketPath = resolveEndpoint(undefined).options.socketPath;
    assert.ok(socketPath, 'the test engine is reached through a socket');
    // Half-open as dockerd's TLS listener is: a client that ends its side (stdin done) still reads.
    server = relay(socketPath, true);
    // One port for both loopback addresses.
    await new Promise<void>((done) => server.listen(0, '0.0.0.0', done));
    port = (server.address() as { port: number }).port;
    // The CLI starts with a clean environment but for the images and the state folder.
    Object.assign(base, {
      DOCKER_HOST: '',
      DOCKER_CONFIG: join(work, 'no-docker-config'),
      AGENT_SANDBOX_STATE_DIR: join(work, 'state'),
      AGENT_SANDBOX_POOL_SIZE: '0',
      AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash,
      AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
    });
  });

  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((done) => server?.close(done));
  });

  const tlsEnv = (host: string): NodeJS.ProcessEnv => ({
    DOCKER_HOST: `tcp://${host}:${port}`,
    DOCKER_TLS_VERIFY: '1',
    DOCKER_CERT_PATH: join(work, 'client-certs'),
  });

  it('DOCKER_HOST with DOCKER_TLS_VERIFY and DOCKER_CERT_PATH: engine shows the endpoint, and run runs', async () => {
    mkdirSync(join(work, 'client-certs'), { recursive: true });
    copyFileSync(join(certs, 'ca.pem'), join(work, 'client-certs', 'ca.pem'));
    copyFileSync(join(certs, 'client.pem'), join(work, 'client-certs', 'cert.pem'));
    copyFileSync(join(certs, 'client-key.pem'), join(work, 'client-certs', 'key.pem'));
    const engine = await cli(['engine'], tlsEnv('127.0.0.1'));
    assert.equal(engine.code, 0, engine.stderr);
    assert.match(engine.stdout, new RegExp(`tcp://127\\.0\\.0\\.1:${port} \\(TLS\\)`));
    const run = await cli(['run', '--runtime', 'bash', '--code', 'echo over TLS'], tlsEnv('127.0.0.1'));
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'over TLS\n');
  });

  it('through a relay that closes both ways when the client ends its side, a run still gets all its output', async () => {
    // Not how dockerd's TLS listener behaves (it is half-open), but a proxy in between may: a request
    // that ended the client's side would lose the output. The runner takes exactly the request's bytes,
    // so the client's side stays open until the output is in.
    const strict = relay(resolveEndpoint(undefined).options.socketPath!, false);
    await new Promise<void>((done) => strict.listen(0, '127.0.0.1', done));
    try {
      const strictPort = (strict.address() as { port: number }).port;
      const run = await cli(['run', '--json', '--runtime', 'bash', '--code', 'echo kept'], {
        ...tlsEnv('127.0.0.1'),
        DOCKER_HOST: `tcp://127.0.0.1:${strictPort}`,
        AGENT_SANDBOX_POOL_SIZE: '0',
      });
      const result = JSON.parse(run.stdout) as { stdout: string; notices: string[] };
      assert.equal(result.stdout, 'kept\n', run.stdout + run.stderr);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => strict.close(done));
    }
  });

  it('a connection lost in the middle of a run: the result says its output may be cut', async () => {
    const cutting = relay(resolveEndpoint(undefined).options.socketPath!, true, true);
    await new Promise<void>((done) => cutting.listen(0, '127.0.0.1', done));
    try {
      const cuttingPort = (cutting.address() as { port: number }).port;
      const run = await cli(['run', '--json', '--runtime', 'bash', '--code', 'sleep 2; echo lost'], {
        ...tlsEnv('127.0.0.1'),
        DOCKER_HOST: `tcp://127.0.0.1:${cuttingPort}`,
        AGENT_SANDBOX_POOL_SIZE: '0',
      });
      const result = JSON.parse(run.stdout) as { stdout: string; notices: string[] };
      assert.equal(result.stdout, '');
      assert.ok(
        result.notices.some((notice) => /output ended before the sandbox’s end marker/.test(notice)),
        run.stdout,
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => cutting.close(done));
    }
  });

  it('a client without a certificate is refused, and the error names the endpoint and its source', async () => {
    const run = await cli(['run', '--runtime', 'bash', '--code', 'echo no'], {
      DOCKER_HOST: `tcp://127.0.0.1:${port}`,
      DOCKER_TLS_VERIFY: '1',
      DOCKER_CERT_PATH: join(work, 'empty-certs'),
    });
    assert.equal(run.code, 125, run.stdout);
    assert.match(run.stderr, /DOCKER_CERT_PATH must hold ca\.pem, cert\.pem and key\.pem/);
    mkdirSync(join(work, 'ca-only'), { recursive: true });
    copyFileSync(join(certs, 'ca.pem'), join(work, 'ca-only', 'ca.pem'));
    // A certificate this endpoint never signed: the handshake fails and the CLI says where.
    copyFileSync(join(certs, 'server.pem'), join(work, 'ca-only', 'cert.pem'));
    copyFileSync(join(certs, 'server-key.pem'), join(work, 'ca-only', 'key.pem'));
    const refused = await cli(['run', '--runtime', 'bash', '--code', 'echo no'], {
      ...tlsEnv('127.0.0.1'),
      DOCKER_CERT_PATH: join(work, 'ca-only'),
    });
    assert.equal(refused.code, 125, refused.stdout);
    assert.match(refused.stderr, new RegExp(`tcp://127\\.0\\.0\\.1:${port} \\(TLS\\) \\(from DOCKER_HOST\\)`));
  });

  it('a Docker context (config.json`s current one, or DOCKER_CONTEXT) is resolved with its TLS files', async () => {
    const config = join(work, 'docker-config');
    const id = createHash('sha256').update('tls-box').digest('hex');
    mkdirSync(join(config, 'contexts', 'meta', id), { recursive: true });
    mkdirSync(join(config, 'contexts', 'tls', id, 'docker'), { recursive: true });
    writeFileSync(
      join(config, 'contexts', 'meta', id, 'meta.json'),
      JSON.stringify({
        Name: 'tls-box',
        Metadata: {},
        Endpoints: { docker: { Host: `tcp://127.0.0.1:${port}`, SkipTLSVerify: false } },
      }),
    );
    copyFileSync(join(certs, 'ca.pem'), join(config, 'contexts', 'tls', id, 'docker', 'ca.pem'));
    copyFileSync(join(certs, 'client.pem'), join(config, 'contexts', 'tls', id, 'docker', 'cert.pem'));
    copyFileSync(join(certs, 'client-key.pem'), join(config, 'contexts', 'tls', id, 'docker', 'key.pem'));
    writeFileSync(join(config, 'config.json'), JSON.stringify({ currentContext: 'tls-box' }));
    const engine = await cli(['engine'], { DOCKER_CONFIG: config });
    assert.equal(engine.code, 0, engine.stderr);
    assert.match(engine.stdout, /Docker context "tls-box"/);
    const run = await cli(['run', '--runtime', 'bash', '--code', 'echo through a context'], { DOCKER_CONFIG: config });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'through a context\n');
    const missing = await cli(['engine'], { DOCKER_CONFIG: config, DOCKER_CONTEXT: 'nope' });
    assert.notEqual(missing.code, 0);
    assert.match(missing.stdout + missing.stderr, /context "nope" \(from DOCKER_CONTEXT\) does not exist/);
    assert.match(missing.stdout + missing.stderr, /docker context ls/);
  });

  it('an engine on another machine refuses ro and rw, offering copy, which works', async () => {
    const remote = tlsEnv('127.0.0.2');
    const ro = await cli(['open', '--session', 'far', '--workspace', 'ro', '--runtime', 'bash'], remote);
    assert.equal(ro.code, 125, ro.stdout);
    assert.match(ro.stderr, /runs on another machine, which cannot see it/);
    assert.match(ro.stderr, /Use workspace access "copy"/);
    const copy = await cli(['open', '--session', 'far', '--workspace', 'copy', '--runtime', 'bash'], remote);
    assert.equal(copy.code, 0, copy.stderr);
    const read = await cli(['exec', '--session', 'far', '--', 'cat', '/workspace/hello.txt'], remote);
    assert.equal(read.stdout, 'hello from the folder\n', read.stderr);
    const closed = await cli(['close', '--session', 'far'], remote);
    assert.equal(closed.code, 0, closed.stderr);
  });
});
