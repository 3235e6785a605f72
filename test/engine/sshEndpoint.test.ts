/**
 * An engine reached over ssh:// with the built CLI: the test starts its own SSH server on 127.0.0.1
 * (ssh2's server, a host key from ssh-keygen) that answers `docker system dial-stdio` as the docker
 * CLI on a remote machine does, by joining the channel to the test engine's socket. The host key is
 * checked as ssh checks it: listed in the user's known_hosts (here a HOME of the test's own), the
 * engine answers; not listed, or listed with another key, or @revoked, the CLI refuses to use it and
 * says how to record the key. An ssh engine counts as another machine: ro is refused, copy offered.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveEndpoint } from '../../src/engines/docker/connection';
import { runCliText } from './cliRunner';
import { TEST_IMAGES, requireEngine } from './harness';

// ssh2 ships no types here; its server is only used by this test.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Server } = require('ssh2') as {
  Server: new (config: object, listener: (client: SshClient) => void) => SshServer;
};

interface SshServer {
  listen(port: number, host: string, done: () => void): void;
  address(): { port: number };
  close(done?: () => void): void;
}
interface SshClient {
  on(event: 'authentication', listener: (context: { accept(): void }) => void): SshClient;
  on(event: 'ready', listener: () => void): SshClient;
  on(event: 'session', listener: (accept: () => SshSession) => void): SshClient;
  on(event: 'error', listener: () => void): SshClient;
}
interface SshSession {
  on(
    event: 'exec',
    listener: (accept: () => SshChannel, reject: () => void, info: { command: string }) => void,
  ): SshSession;
}
interface SshChannel extends NodeJS.ReadWriteStream {
  exit(code: number): void;
  end(): this;
}

describe('remote engines: ssh:// with the host key checked (real engine)', function () {
  this.timeout(120_000);
  const work = mkdtempSync(join(tmpdir(), 'agent-sandbox-ssh-'));
  const home = join(work, 'home');
  const folder = join(work, 'folder');
  const sockets: Socket[] = [];
  const commands: string[] = [];
  let server: SshServer;
  let port = 0;
  let hostKeyLine = '';
  const cli = (args: string[]) =>
    runCliText([args[0]!, '--folder', folder, '--engine', 'docker', ...args.slice(1)], {
      env: {
        HOME: home,
        DOCKER_HOST: `ssh://tester@127.0.0.1:${port}`,
        DOCKER_CONFIG: join(work, 'no-docker-config'),
        SSH_AUTH_SOCK: '',
        AGENT_SANDBOX_STATE_DIR: join(work, 'state'),
        AGENT_SANDBOX_POOL_SIZE: '0',
        AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash,
      },
      stdin: '',
    });
  const knownHosts = (text: string) => writeFileSync(join(home, '.ssh', 'known_hosts'), text, { mode: 0o600 });

  before(async function () {
    await requireEngine(this);
    mkdirSync(join(home, '.ssh'), { recursive: true, mode: 0o700 });
    mkdirSync(folder, { recursive: true });
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(work, 'host_key')]);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(work, 'other_key')]);
    const socketPath = resolveEndpoint(undefined).options.socketPath;
    assert.ok(socketPath, 'the test engine is reached through a socket');
    server = new Server({ hostKeys: [readFileSync(join(work, 'host_key'))] }, (client) => {
      client.on('error', () => undefined);
      // Who may log in is not what this test is about: every client is let in.
      client.on('authentication', (context) => context.accept());
      client.on('session', (accept) => {
        accept().on('exec', (acceptExec, reject, info) => {
          commands.push(info.command);
          if (info.command !== 'docker system dial-stdio') return reject();
          const channel = acceptExec();
          const engine = connect(socketPath);
          sockets.push(engine);
          channel.pipe(engine).pipe(channel);
          engine.on('error', () => channel.end());
          engine.on('close', () => {
            channel.exit(0);
            channel.end();
          });
        });
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = server.address().port;
    const [type, blob] = readFileSync(join(work, 'host_key.pub'), 'utf8').trim().split(/\s+/);
    hostKeyLine = `[127.0.0.1]:${port} ${type} ${blob}\n`;
  });

  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((done) => server?.close(() => done()));
  });

  it('an unknown host key is refused: nothing runs, and the message says how to record the key', async () => {
    knownHosts('');
    commands.length = 0;
    const run = await cli(['run', '--runtime', 'bash', '--code', 'echo should not run']);
    assert.equal(run.code, 125, run.stdout);
    assert.match(run.stderr, new RegExp(`host key of \\[127\\.0\\.0\\.1\\]:${port} is not in .*known_hosts`));
    assert.match(run.stderr, /ssh USER@HOST/);
    assert.deepEqual(commands, [], 'no command reached the server');
  });

  it('another key listed for the host, or the key @revoked, is refused too', async () => {
    const [type, other] = readFileSync(join(work, 'other_key.pub'), 'utf8').trim().split(/\s+/);
    knownHosts(`[127.0.0.1]:${port} ${type} ${other}\n`);
    const changed = await cli(['engine']);
    assert.notEqual(changed.code, 0);
    assert.match(changed.stderr, /is not the one .* lists for it/);
    knownHosts(`${hostKeyLine}@revoked ${hostKeyLine}`);
    const revoked = await cli(['engine']);
    assert.notEqual(revoked.code, 0);
    assert.match(revoked.stderr, /marked @revoked/);
  });

  it('with the key in known_hosts (hashed, as ssh-keygen -H writes it) the engine answers and run runs', async () => {
    knownHosts(hostKeyLine);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', join(home, '.ssh', 'known_hosts')], { stdio: 'pipe' });
    assert.match(readFileSync(join(home, '.ssh', 'known_hosts'), 'utf8'), /^\|1\|/);
    const engine = await cli(['engine']);
    assert.equal(engine.code, 0, engine.stderr);
    assert.match(engine.stdout, new RegExp(`ssh://tester@127\\.0\\.0\\.1:${port} \\(from DOCKER_HOST\\)`));
    const run = await cli(['run', '--runtime', 'bash', '--code', 'echo over ssh']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'over ssh\n');
    assert.ok(commands.every((command) => command === 'docker system dial-stdio'));
  });

  it('an ssh engine is another machine: ro is refused with copy offered', async () => {
    knownHosts(hostKeyLine);
    const ro = await cli(['open', '--session', 'far', '--workspace', 'ro', '--runtime', 'bash']);
    assert.equal(ro.code, 125, ro.stdout);
    assert.match(ro.stderr, /runs on another machine, which cannot see it/);
  });
});
