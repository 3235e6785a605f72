/**
 * The allowlist network tier on the Docker Engine. The sandbox is made with no network at all (only
 * loopback, no DNS); a small relay container joins its network and process namespaces, listens on
 * 127.0.0.1:3128 there and relays each connection byte for byte to the egress proxy, a process on
 * this machine (core/network/egressProcesses.ts) reached through a unix socket mounted into the
 * relay alone. The sandbox's HTTP_PROXY and friends point at the relay, so pip, npm, curl and
 * Python's urllib work unchanged; anything else finds no route.
 *
 * The relay lives exactly as long as the sandbox: it is in the sandbox's process namespace, so the
 * kernel kills it when the sandbox's init ends, and the engine then removes it (AutoRemove). The proxy
 * process ends when the relay's lifeline socket closes, and is stopped at once when the sandbox is
 * removed here. The relay runs as a user of its own, so the sandbox's user cannot signal or trace it.
 */
import type Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { OpenOptions, ProgressCallback } from '../../core/engine/engine';
import { SandboxError, abortError } from '../../core/errors';
import { networkTier } from '../../core/network/allowlist';
import type { DecisionQuery, NetworkDecisionPage } from '../../core/network/decisionLog';
import type { EgressProxies } from '../../core/network/egressProcesses';
import type { SandboxSpec } from '../../core/spec/spec';
import type { Endpoint } from './connection';
import { listContainers, withSignal } from './engineCalls';
import { execInContainer } from './exec';
import { SESSION_CA_BUNDLE } from '../../core/secrets/bound';
import { CONTAINER_PREFIX, LABEL } from './labels';

export const RELAY_PORT = 3128;
/** Where images keep their system authorities (Debian and Alpine, then Fedora's). */
const SYSTEM_CA_BUNDLES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt'];
/** Where the proxy's sockets are mounted in the relay. */
const RELAY_SOCKETS = '/run/agent-sandbox-egress';
const RELAY_UID = 65532;
const RELAY_READY_TIMEOUT_MS = 30_000;
/** Package installs take at most 15 minutes (packages.ts); the index stays allowed a little longer. */
const INSTALL_WINDOW_MS = 16 * 60_000;
const INDEX_NAMES = { pip: ['pypi.org', 'files.pythonhosted.org'], npm: ['registry.npmjs.org'] } as const;

/** Most bytes of each of a relayed connection's two read buffers toward the sandbox (see readsInto in egressPipe.ts). */
const RELAY_READ_BYTES = 256 * 1024;

/**
 * The relay, as `node -e`. It listens only once its lifeline to the proxy process is up, says so on
 * stdout ("ready", or "failed" with the error code), and keeps the lifeline up (again after a drop,
 * when the proxy process is started anew) for as long as it lives. Bytes toward the sandbox are read
 * into two buffers in turn and passed on as readsInto does (core/network/egressPipe.ts, which this
 * script cannot import); a connection's close lets the other end send what it holds before it ends,
 * as tieEnds does.
 */
const RELAY_SCRIPT = `
process.title = 'agent-sandbox-egress';
const net = require('net');
const dir = ${JSON.stringify(RELAY_SOCKETS)};
let ready = false;
const say = (text) => process.stdout.write('agent-sandbox-egress ' + text + '\\n');
function readsInto(to, from) {
  let size = 64 * 1024;
  const buffers = [undefined, undefined];
  const writing = [false, false];
  let next = 0;
  let waitingFor = -1;
  return {
    buffer: () => {
      if (!buffers[next] || buffers[next].length < size) buffers[next] = Buffer.allocUnsafe(size);
      return buffers[next];
    },
    callback: (length, chunk) => {
      const index = next;
      writing[index] = true;
      if (length === chunk.length) size = Math.min(${RELAY_READ_BYTES}, size * 4);
      to.write(chunk.subarray(0, length), () => {
        writing[index] = false;
        if (waitingFor === index) { waitingFor = -1; from().resume(); }
      });
      next = 1 - index;
      if (!writing[next]) return true;
      waitingFor = next;
      return false;
    },
  };
}
const server = net.createServer({ allowHalfOpen: true }, (client) => {
  client.setNoDelay(true);
  const upstream = net.connect({ path: dir + '/proxy.sock', allowHalfOpen: true, onread: readsInto(client, () => upstream) });
  client.pipe(upstream);
  upstream.on('end', () => client.end());
  const fail = () => { client.destroy(); upstream.destroy(); };
  for (const [socket, other] of [[client, upstream], [upstream, client]]) {
    socket.on('error', fail);
    socket.on('close', () => other.end(() => other.destroy()));
  }
});
server.on('error', (error) => { say('failed ' + error.code); process.exit(1); });
function lifeline() {
  const line = net.connect(dir + '/life.sock');
  line.on('connect', () => {
    if (ready) return;
    ready = true;
    server.listen(${RELAY_PORT}, '127.0.0.1', () => say('ready'));
  });
  line.on('error', (error) => { if (!ready) { say('failed ' + error.code); process.exit(1); } });
  line.on('close', () => { if (ready) setTimeout(lifeline, 1000); });
  line.resume();
}
lifeline();
`;

/** What the sandbox's programs read to find the proxy (npm reads its own names). */
export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${RELAY_PORT}`;
  const direct = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    NO_PROXY: direct,
    no_proxy: direct,
    npm_config_proxy: url,
    npm_config_https_proxy: url,
    npm_config_noproxy: direct,
  };
}

export interface RelayPlan {
  sandboxId: string;
  image: string;
  /** The proxy's socket folder on this machine. */
  sockets: string;
  /** The sandbox's user: the relay's is another. */
  sandboxUser: string;
}

/** The relay's create request: hardened like a sandbox, and smaller. */
export function relayCreateOptions(plan: RelayPlan): Docker.ContainerCreateOptions {
  const uid = plan.sandboxUser.startsWith(`${RELAY_UID}:`) ? RELAY_UID + 1 : RELAY_UID;
  return {
    name: `${CONTAINER_PREFIX}egress-${plan.sandboxId.slice(0, 12)}-${randomBytes(2).toString('hex')}`,
    Image: plan.image,
    Entrypoint: ['node', '--max-old-space-size=16', '--max-semi-space-size=1', '-e', RELAY_SCRIPT],
    Cmd: [],
    User: `${uid}:${uid}`,
    WorkingDir: '/',
    // Fewer malloc arenas and a small young generation keep the relay's memory low under load.
    Env: ['MALLOC_ARENA_MAX=2'],
    // Not the managed label: a relay is never a session, and its death is its sandbox's.
    Labels: { [LABEL.egressFor]: plan.sandboxId, [LABEL.created]: new Date().toISOString() },
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    HostConfig: {
      NetworkMode: `container:${plan.sandboxId}`,
      PidMode: `container:${plan.sandboxId}`,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      // Node takes about 50 MiB idle and about 75 MiB relaying four 1 GiB downloads at once (measured).
      Memory: 128 * 1024 * 1024,
      MemorySwap: 128 * 1024 * 1024,
      NanoCpus: 1e9,
      PidsLimit: 32,
      // Explicit, as a sandbox's: Podman cannot start a container without nofile and nproc within the host's hard limits.
      Ulimits: [
        { Name: 'nofile', Soft: 4096, Hard: 4096 },
        { Name: 'nproc', Soft: 4096, Hard: 4096 },
        { Name: 'core', Soft: 0, Hard: 0 },
      ],
      IpcMode: 'private',
      ReadonlyRootfs: true,
      Mounts: [{ Type: 'bind', Source: plan.sockets, Target: RELAY_SOCKETS, ReadOnly: true }],
      LogConfig: { Type: 'none', Config: {} },
      RestartPolicy: { Name: 'no' },
      AutoRemove: true,
    },
  };
}

export interface EgressDeps {
  docker: Docker;
  endpoint: Endpoint;
  /** The proxy processes; absent where this program has no script to run them from. */
  proxies?: EgressProxies;
  /** The image of the node runtime (these images, else the engine's settings, flags, environment), pulled when missing. */
  nodeImage(
    images: OpenOptions['images'] | undefined,
    signal?: AbortSignal,
    onProgress?: ProgressCallback,
  ): Promise<string>;
}

export class DockerEgress {
  constructor(private readonly deps: EgressDeps) {}

  /** Why this engine cannot enforce an allowlist here, or undefined when it can. */
  get problem(): string | undefined {
    if (process.platform !== 'linux')
      return 'the Docker Engine runs in a virtual machine here, which cannot reach a socket of this machine';
    if (!this.deps.endpoint.description.startsWith('unix://'))
      return `the Docker Engine at ${this.deps.endpoint.description} does not run on this machine`;
    if (!this.deps.proxies) return 'this program has no proxy to run (dist/cli.js is missing)';
    return undefined;
  }

  /** Refuses an allowlist this engine cannot enforce: never widened to the whole network, nor narrowed to none. */
  check(spec: SandboxSpec): void {
    const problem = networkTier(spec) === 'allowlist' ? this.problem : undefined;
    if (!problem) return;
    throw new SandboxError(
      'unsupported',
      `The sandbox's network cannot be limited to its allowlist (${spec.networkAllow.join(', ')}): ${problem}.`,
      'Use a Docker Engine on this Linux machine for the allowlist, or run without network.',
    );
  }

  /** Starts the proxy process and the relay of a started sandbox; resolves once the relay is linked. */
  async start(
    sandboxId: string,
    spec: SandboxSpec,
    sandboxUser: string,
    options: Pick<OpenOptions, 'images' | 'signal' | 'onProgress' | 'boundSecretValues'> = {},
  ): Promise<void> {
    const { signal, onProgress } = options;
    const image = await this.deps.nodeImage(options.images, signal, onProgress);
    onProgress?.({ message: 'Starting the network allowlist proxy' });
    const sockets = await this.proxies().start(
      sandboxId,
      { allow: spec.networkAllow, hosts: spec.networkHosts, bound: spec.boundSecrets ?? [] },
      signal,
      options.boundSecretValues,
    );
    await startRelay(this.deps.docker, relayCreateOptions({ sandboxId, image, sockets, sandboxUser }), signal);
  }

  /**
   * Starts again what is missing for a running sandbox (its proxy process was killed, say); best
   * effort: without them the sandbox has no network at all, never more.
   */
  /** Starts the sandbox's proxy (and relay) again when they are gone; says why when it cannot. */
  async ensure(
    sandboxId: string,
    spec: SandboxSpec,
    sandboxUser: string,
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    if (this.problem || this.proxies().isServing(sandboxId)) return undefined;
    try {
      const image = await this.deps.nodeImage(undefined, signal);
      // Started again without the bound secrets' values (they were never kept): their placeholders stay as they are.
      const sockets = await this.proxies().start(
        sandboxId,
        { allow: spec.networkAllow, hosts: spec.networkHosts, bound: spec.boundSecrets ?? [] },
        signal,
      );
      const relays = await listContainers(this.deps.docker, [`${LABEL.egressFor}=${sandboxId}`], signal);
      // A living relay links to the new process by itself within a second.
      if (relays.some((relay) => relay.State === 'running')) return undefined;
      await startRelay(this.deps.docker, relayCreateOptions({ sandboxId, image, sockets, sandboxUser }), signal);
      return undefined;
    } catch (error) {
      // Left as it is: no way out, which is what a broken allowlist must mean; but said.
      return `The network allowlist of this sandbox could not be restored (${(error as Error).message.split('\n')[0]}): it reaches nothing until it is reopened (sandbox_close, then sandbox_open).`;
    }
  }

  /** Lets the package index through while the sandbox's packages install; the function returned ends it. */
  duringInstall(sandboxId: string, spec: SandboxSpec): () => void {
    const names = [
      ...(spec.pipPackages.length ? INDEX_NAMES.pip : []),
      ...(spec.npmPackages.length ? INDEX_NAMES.npm : []),
    ];
    if (networkTier(spec) !== 'allowlist' || !names.length || !this.deps.proxies) return () => undefined;
    return this.deps.proxies.allowDuringInstall(sandboxId, names, INSTALL_WINDOW_MS);
  }

  /**
   * Stops the proxy process of a sandbox (connections are refused from now on) and removes its relays
   * (unless told there are none to look for).
   */
  async remove(sandboxId: string, options: { relays?: boolean; signal?: AbortSignal } = {}): Promise<void> {
    await this.deps.proxies?.stop(sandboxId).catch(() => undefined);
    if (options.relays === false) return;
    const relays = await listContainers(this.deps.docker, [`${LABEL.egressFor}=${sandboxId}`], options.signal).catch(
      () => [],
    );
    for (const relay of relays) {
      await this.deps.docker
        .getContainer(relay.Id)
        .remove(withSignal({ force: true }, options.signal))
        .catch(() => undefined);
    }
  }

  /**
   * Makes a sandbox with bound secrets trust its session CA: one file with the image's own
   * authorities and the CA's certificate (never its key), where the spec's CA variables point.
   */
  async trustSessionCa(
    container: Docker.Container,
    spec: SandboxSpec,
    user: string,
    signal?: AbortSignal,
  ): Promise<void> {
    if (!spec.boundSecrets?.length) return;
    const ca = this.proxies().caCertificate(container.id);
    if (!ca) throw new SandboxError('engine-error', "The bound secrets' proxy did not make its certificate authority.");
    const script = `umask 022; { for f in ${SYSTEM_CA_BUNDLES.join(' ')}; do [ -r "$f" ] && { cat "$f"; echo; break; }; done; cat; } > ${SESSION_CA_BUNDLE}`;
    const outcome = await execInContainer({
      docker: this.deps.docker,
      container,
      argv: ['/bin/sh', '-c', script],
      user,
      cwd: '/',
      env: [],
      stdin: Buffer.from(ca),
      stdoutCap: 4096,
      stderrCap: 4096,
      timeoutMs: 30_000,
      signal,
    });
    if (outcome.exitCode !== 0)
      throw new SandboxError(
        'engine-error',
        `The sandbox could not be made to trust its session CA: ${Buffer.from(outcome.stderr.bytes()).toString().trim().slice(0, 300)}`,
      );
  }

  async decisions(sandboxId: string, query?: DecisionQuery): Promise<NetworkDecisionPage> {
    if (!this.deps.proxies) return { decisions: [], cursor: 0, truncated: false };
    return this.deps.proxies.decisions(sandboxId, query);
  }

  private proxies(): EgressProxies {
    if (!this.deps.proxies)
      throw new SandboxError('unsupported', `The network allowlist cannot be enforced: ${this.problem}.`);
    return this.deps.proxies;
  }
}

/** Creates and starts a relay, and waits for it to say it is linked to the proxy; removes it when it is not. */
async function startRelay(docker: Docker, options: Docker.ContainerCreateOptions, signal?: AbortSignal): Promise<void> {
  const container = await docker.createContainer(withSignal(options, signal));
  let stream: Duplex | undefined;
  try {
    stream = (await container.attach(withSignal({ stream: true, stdout: true, stderr: true }, signal))) as Duplex;
    const said = firstWord(stream, signal);
    await container.start(withSignal({}, signal));
    const word = await said;
    if (signal?.aborted) throw abortError(signal);
    if (word === 'ready') return;
    throw new SandboxError(
      'unsupported',
      `The sandbox's network relay could not reach the allowlist proxy on this machine (${word}), so the sandbox was not opened. The Docker Engine may run in a virtual machine, or be confined so that it cannot mount a socket of this machine.`,
      'Use a Docker Engine that runs on this Linux machine for the allowlist, or run without network.',
    );
  } catch (error) {
    await container.remove({ force: true }).catch(() => undefined);
    throw error;
  } finally {
    stream?.destroy();
  }
}

/** What the relay says first: "ready", "failed CODE", or why it said nothing. */
function firstWord(stream: Duplex, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const done = (word: string) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
      resolve(word);
    };
    const aborted = () => done('cancelled');
    const timer = setTimeout(() => done(`no answer within ${RELAY_READY_TIMEOUT_MS / 1000} s`), RELAY_READY_TIMEOUT_MS);
    signal?.addEventListener('abort', aborted, { once: true });
    stream.on('data', (chunk: Buffer) => {
      // Frames of the multiplexed stream: the relay's words are plain text within them.
      text += chunk.toString('latin1');
      const said = /agent-sandbox-egress (ready|failed \S+)\n/.exec(text);
      if (said) done(said[1]!);
    });
    stream.on('error', () => done('its output could not be read'));
    stream.on('end', () => done('it stopped'));
  });
}
