/**
 * The allowlist proxy's cost (issue 18: under 1 ms added per request, 95% of loopback throughput for
 * a 100 MiB download). A real allowlist sandbox on the Docker engine reaches an HTTP server this
 * bench starts on the host's 127.0.0.1 through a `localhost:PORT` entry (host.docker.internal:PORT
 * inside), via the relay and the egress proxy process; the baseline is the same request from the
 * host straight to that server on loopback. Both sides use the same client (egressClient.py), a
 * long-lived python3 process that times each request itself, so no process start or docker exec is
 * in a sample. The sandbox also has a bound secret (issue 23: injection under 2 ms added per HTTPS
 * request): the same HTTPS GET to its domain, whose TLS the proxy ends to add the value, against the
 * same GET to a name no secret is bound to, a blind tunnel, both to an HTTPS server of the bench.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import type { Sandbox, SandboxProcess } from '../../src/core/engine/engine';
import { EGRESS_FILES } from '../../src/core/network/egressHost';
import { EXTRA_CA_ENV } from '../../src/core/network/egressHost';
import { EgressProxies } from '../../src/core/network/egressProcesses';
import { SessionCa } from '../../src/core/network/sessionCa';
import { boundFromHost, boundSecretsLayer, parseBinding } from '../../src/core/secrets/bound';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { RELAY_PORT } from '../../src/engines/docker/egress';
import { TEST_IMAGES } from '../../test/engine/harness';
import type { Group, GroupResult } from './measure';

const ROOT = resolve(__dirname, '..', '..');
const CLIENT = readFileSync(join(__dirname, 'egressClient.py'), 'utf8');
const SMALL = Buffer.from('x'.repeat(63) + '\n');
const BIG_BYTES = 100 * 1024 * 1024;
/** Requests per GET call: each on a new connection, each a sample. */
const GETS_PER_CALL = 20;

/** One line out, one line back, to a client on pipes (a host process or a process in the sandbox). */
class LineClient {
  private text = '';
  private waiting: ((line: string) => void) | undefined;

  constructor(
    private readonly write: (line: string) => void,
    readonly close: () => Promise<unknown>,
  ) {}

  take(chunk: Buffer): void {
    this.text += chunk.toString('utf8');
    const end = this.text.indexOf('\n');
    if (end < 0) return;
    const line = this.text.slice(0, end);
    this.text = this.text.slice(end + 1);
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(line);
  }

  /** Runs a command; the times of its requests, after checking the last response is `expected`. */
  async run(command: string, expected: Buffer): Promise<number[]> {
    const line = await new Promise<string>((done) => {
      this.waiting = done;
      this.write(`${command}\n`);
    });
    const [word, status, length, crc, ...times] = line.split(' ');
    if (word !== 'ok') throw new Error(`the client said: ${line.slice(0, 300)}`);
    if (status !== '200' || Number(length) !== expected.length || Number(crc) !== crc32(expected))
      throw new Error(`the client got HTTP ${status}, ${length} bytes, CRC ${crc}: not what the server sent`);
    return times.map(Number);
  }
}

function hostClient(): LineClient {
  const child: ChildProcessWithoutNullStreams = spawn('python3', ['-u', '-c', CLIENT]);
  const client = new LineClient(
    (line) => child.stdin.write(line),
    async () => {
      child.stdin.end();
      child.kill();
    },
  );
  child.stdout.on('data', (chunk: Buffer) => client.take(chunk));
  child.stderr.on('data', (chunk: Buffer) => process.stderr.write(`egress client (host): ${chunk.toString()}`));
  return client;
}

async function sandboxClient(sandbox: Sandbox): Promise<LineClient> {
  const child: SandboxProcess = await sandbox.openProcess!(['python3', '-u', '-c', CLIENT]);
  const client = new LineClient(
    (line) => child.write(line),
    () => child.close(),
  );
  child.onStdout((chunk) => client.take(chunk));
  child.onStderr((chunk) => process.stderr.write(`egress client (sandbox): ${chunk.toString()}`));
  return client;
}

export interface EgressBench {
  group: Group;
  /** What the report should say about the group's results (throughput in MB/s). */
  notes(result: GroupResult): string[];
  dispose(): Promise<void>;
}

export async function egressGroup(iterations: number, warmup: number): Promise<EgressBench> {
  const big = randomBytes(BIG_BYTES);
  const server: Server = createServer((request, response) => {
    const body = request.url === '/big' ? big : SMALL;
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
    response.end(body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  // HTTPS under the bench's own CA, for a bound domain and an unbound one (both mapped to 127.0.0.1).
  const value = `bench-${randomBytes(8).toString('hex')}`;
  const benchCa = new SessionCa();
  const secure = createHttpsServer(
    { SNICallback: (name, done) => done(null, benchCa.contextFor(name)) },
    (request, response) => {
      const bound = request.headers.host?.startsWith('bound.bench');
      const added = request.headers.authorization === `Bearer ${value}`;
      // The bound name must get the value, the other the placeholder: else the client sees 403.
      response.writeHead(bound === added ? 200 : 403, { 'content-length': SMALL.length });
      response.end(SMALL);
    },
  );
  await new Promise<void>((done) => secure.listen(0, '127.0.0.1', done));
  const securePort = (secure.address() as AddressInfo).port;
  const root = mkdtempSync(join(tmpdir(), 'agent-sandbox-bench-egress-'));
  const benchCaFile = join(root, 'bench-ca.pem');
  writeFileSync(benchCaFile, benchCa.certPem);
  process.env[EXTRA_CA_ENV] = benchCaFile;
  const proxies = new EgressProxies({ nodePath: process.execPath, cliPath: join(ROOT, 'dist', 'cli.js'), root });
  const engine = new DockerEngine({ images: TEST_IMAGES, egressProxies: proxies, poolSize: 0 });
  const bound = boundFromHost([parseBinding('TOKEN=bound.bench:header:Authorization: Bearer {value}')], {
    TOKEN: value,
  });
  const { networkAllow, ...boundLayer } = boundSecretsLayer(bound.secrets);
  const spec = resolveSpec(
    {
      mode: 'code',
      runtime: 'python',
      networkAllow: [`localhost:${port}`, 'other.bench', ...networkAllow],
      networkHosts: { 'bound.bench': '127.0.0.1', 'other.bench': '127.0.0.1' },
    } as never,
    { ...boundLayer, env: { ...boundLayer.env, BENCH_CA: '/home/sandbox/bench-ca.pem' } },
  );
  const cleanUp = async () => {
    await engine.dispose();
    await new Promise((done) => server.close(done));
    await new Promise((done) => secure.close(done));
    delete process.env[EXTRA_CA_ENV];
    rmSync(root, { recursive: true, force: true });
  };
  let sandbox: Sandbox;
  let inside: LineClient;
  try {
    sandbox = await engine.open(spec, {
      name: `bench-egress-${randomBytes(3).toString('hex')}`,
      files: [{ path: '/home/sandbox/bench-ca.pem', data: Buffer.from(benchCa.certPem) }],
      boundSecretValues: bound.values,
    });
    inside = await sandboxClient(sandbox);
  } catch (error) {
    await cleanUp();
    throw error;
  }
  const host = hostClient();
  const target = `host.docker.internal ${port}`;
  const proxy = `127.0.0.1 ${RELAY_PORT} ${target}`;
  const direct = `127.0.0.1 ${port} 127.0.0.1 ${port}`;
  // The proxy process alone, without the relay and the container's network: its unix socket, from the host.
  const unix = `${join(proxies.folder(sandbox.info.id), EGRESS_FILES.proxySocket)} 0 localhost ${port}`;
  const get = (client: LineClient, how: string) => () =>
    client.run(`${how.replace('COUNT', String(GETS_PER_CALL))} /small`, SMALL);
  const download = (client: LineClient, how: string) => () => client.run(`${how.replace('COUNT', '1')} /big`, big);
  const names = {
    getHttp: 'GET 64 B: sandbox, through the proxy (plain HTTP)',
    getConnect: 'GET 64 B: sandbox, through the proxy (CONNECT tunnel)',
    getUnix: "GET 64 B: host, to the proxy's unix socket (no relay)",
    getDirect: 'GET 64 B: host, direct on loopback',
    getBound: 'HTTPS GET 64 B: sandbox, a bound secret`s domain (TLS ended by the proxy, value added)',
    getTunnel: 'HTTPS GET 64 B: sandbox, a domain no secret is bound to (CONNECT tunnel)',
    bigHttp: '100 MiB: sandbox, through the proxy (plain HTTP)',
    bigConnect: '100 MiB: sandbox, through the proxy (CONNECT tunnel)',
    bigUnix: "100 MiB: host, to the proxy's unix socket (no relay)",
    bigDirect: '100 MiB: host, direct on loopback',
  };
  const many = { samplesPerCall: GETS_PER_CALL };
  const group: Group = {
    id: 'egress',
    title: 'allowlist proxy: GET on a new connection, 100 MiB download',
    unit: `ms per request on a new connection, timed by the client (${GETS_PER_CALL} GETs per call, each a sample; one download per call)`,
    arms: [
      { name: names.getHttp, run: get(inside, `http COUNT ${proxy}`), ...many },
      { name: names.getConnect, run: get(inside, `connect COUNT ${proxy}`), ...many },
      { name: names.getUnix, run: get(host, `http COUNT ${unix}`), ...many },
      { name: names.getDirect, run: get(host, `direct COUNT ${direct}`), ...many },
      {
        name: names.getBound,
        run: get(inside, `tls COUNT 127.0.0.1 ${RELAY_PORT} bound.bench ${securePort}`),
        ...many,
      },
      {
        name: names.getTunnel,
        run: get(inside, `tls COUNT 127.0.0.1 ${RELAY_PORT} other.bench ${securePort}`),
        ...many,
      },
      { name: names.bigHttp, run: download(inside, `http COUNT ${proxy}`) },
      { name: names.bigConnect, run: download(inside, `connect COUNT ${proxy}`) },
      { name: names.bigUnix, run: download(host, `http COUNT ${unix}`) },
      { name: names.bigDirect, run: download(host, `direct COUNT ${direct}`) },
    ],
    comparisons: [
      { ours: names.getHttp, baseline: names.getDirect, kind: 'added', target: 1 },
      { ours: names.getConnect, baseline: names.getDirect, kind: 'added', target: 1 },
      { ours: names.getUnix, baseline: names.getDirect, kind: 'added' },
      { ours: names.getBound, baseline: names.getTunnel, kind: 'added', target: 2 },
      { ours: names.bigHttp, baseline: names.bigDirect, kind: 'throughput', target: 0.95 },
      { ours: names.bigConnect, baseline: names.bigDirect, kind: 'throughput', target: 0.95 },
      { ours: names.bigUnix, baseline: names.bigDirect, kind: 'throughput' },
    ],
    iterations,
    warmup,
  };
  const megabytesPerSecond = (result: GroupResult, name: string) => {
    const p50 = result.arms.find((arm) => arm.name === name)?.summary.p50 ?? Number.NaN;
    return `${((BIG_BYTES / 1e6 / p50) * 1000).toFixed(0)} MB/s`;
  };
  return {
    group,
    notes: (result) => [
      `Egress: an allowlist sandbox on the Docker engine (\`localhost:${port}\` allowed; python image, 1 CPU) reaches an HTTP server of the bench on the host's 127.0.0.1:${port} as host.docker.internal:${port}, through its relay (127.0.0.1:${RELAY_PORT} in the sandbox) and the egress proxy process on this machine; the baseline is the same request from the host to 127.0.0.1:${port}. Both sides run the same long-lived python3 client (scripts/bench/egressClient.py), which times each request itself from before connect() to the last byte of the body, on a new connection each time (no docker exec, no process start in a sample), and checks the status, length and CRC-32 of what arrived. A CONNECT request's time includes the CONNECT round trip before the GET, as an HTTPS client's would. The server runs in the bench process. The arms to the proxy's unix socket show the proxy process alone: the host's client sends the same request (for localhost:${port}) straight to it, without the relay or the container's network. 'ms added' is p50(proxy) − p50(direct) over all requests; throughput is p50(direct) / p50(proxy) of the download time.`,
      `Egress, 100 MiB download at p50: plain HTTP through the proxy ${megabytesPerSecond(result, names.bigHttp)}, CONNECT tunnel ${megabytesPerSecond(result, names.bigConnect)}, the proxy's unix socket from the host ${megabytesPerSecond(result, names.bigUnix)}, direct on loopback ${megabytesPerSecond(result, names.bigDirect)}.`,
    ],
    dispose: async () => {
      await inside.close().catch(() => undefined);
      await host.close();
      await sandbox.close().catch(() => undefined);
      await cleanUp();
    },
  };
}
