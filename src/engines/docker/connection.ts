/**
 * Where the Docker Engine is: an explicit host (setting or flag), DOCKER_HOST (unix, tcp, tcp with
 * TLS variables, ssh), or the default sockets; when no Docker socket exists, Podman's (CONTAINER_HOST,
 * then its sockets). Connection failures become errors that name what was tried and how to fix it.
 */
import Docker from 'dockerode';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { SandboxError } from '../../core/errors';
import { resolveDockerContext, type ContextEndpoint } from './dockerContext';
import { engineHostVerifier } from './knownHosts';

export interface Endpoint {
  /** As a person would write it: unix:///var/run/docker.sock, tcp://host:2376 (TLS). */
  description: string;
  /** Where the host came from, for error messages. */
  source: string;
  options: Docker.DockerOptions;
  /** For ssh://: why the host's key was refused, once a connection tried. */
  hostKeyProblem?: () => string | undefined;
  /** The engine runs on this machine and sees its disk (a socket, or TCP to this machine's loopback name): folders can be mounted. */
  local: boolean;
}

/** Loopback addresses as written in an engine address; another name or address counts as another machine. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function defaultSockets(): string[] {
  return ['/var/run/docker.sock', join(homedir(), '.docker', 'run', 'docker.sock')];
}

/** Podman's own API socket: root's system service first for root, the user's own (rootless) first for anyone else. */
export function podmanSockets(env: NodeJS.ProcessEnv, uid: number | undefined): string[] {
  const runtimeDir = env.XDG_RUNTIME_DIR?.trim() || (uid !== undefined ? `/run/user/${uid}` : undefined);
  const rootless = runtimeDir ? [join(runtimeDir, 'podman', 'podman.sock')] : [];
  const rootful = ['/run/podman/podman.sock'];
  return [...new Set(uid === 0 ? [...rootful, ...rootless] : [...rootless, ...rootful])];
}

/** What the engine address is looked for in, beside the environment; tests give their own. */
export interface LocalSockets {
  exists(path: string): boolean;
  uid?: number;
}

const HOST_SOCKETS: LocalSockets = { exists: existsSync, uid: process.getuid?.() };

/**
 * The engine's address, in the docker CLI's order: an explicit host (setting or flag), DOCKER_HOST,
 * the Docker context (DOCKER_CONTEXT, else the config's current one; see dockerContext.ts), the
 * default sockets. Where none of those exists, Podman's: CONTAINER_HOST, else its sockets (so a
 * machine with both keeps using Docker, as the docker CLI would).
 */
export function resolveEndpoint(
  explicitHost: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  sockets: LocalSockets = HOST_SOCKETS,
): Endpoint {
  let host = explicitHost?.trim() || env.DOCKER_HOST?.trim();
  let source = explicitHost?.trim()
    ? 'the setting agentSandbox.engineHost'
    : env.DOCKER_HOST
      ? 'DOCKER_HOST'
      : 'the default socket';
  let tls: ContextEndpoint['tls'];
  if (!host) {
    const context = resolveDockerContext(env);
    if (context) {
      host = context.host;
      source = `the Docker context "${context.name}" (from ${context.from})`;
      tls = context.tls;
    }
  }
  if (!host) {
    const docker = defaultSockets().find((path) => sockets.exists(path));
    const podman = podmanSockets(env, sockets.uid).find((path) => sockets.exists(path));
    if (!docker && env.CONTAINER_HOST?.trim()) {
      host = env.CONTAINER_HOST.trim();
      source = 'CONTAINER_HOST (Podman)';
    } else {
      const socketPath = docker ?? podman ?? defaultSockets()[0]!;
      source = docker || !podman ? source : 'the Podman socket';
      return { description: `unix://${socketPath}`, source, options: { socketPath }, local: true };
    }
  }
  if (host.startsWith('unix://')) {
    const socketPath = host.slice('unix://'.length) || defaultSockets()[0]!;
    return { description: `unix://${socketPath}`, source, options: { socketPath }, local: true };
  }
  if (host.startsWith('npipe://')) {
    const socketPath = host.slice('npipe://'.length) || '//./pipe/docker_engine';
    return { description: `npipe://${socketPath}`, source, options: { socketPath }, local: true };
  }
  let url: URL;
  try {
    url = new URL(host.includes('://') ? host : `tcp://${host}`);
  } catch {
    throw new SandboxError(
      'engine-unavailable',
      `"${host}" (from ${source}) is not an engine address.`,
      'Write it like unix:///var/run/docker.sock, tcp://127.0.0.1:2375 or ssh://user@host.',
    );
  }
  // Podman's ssh:// names the socket on the far side and is served by no `docker system dial-stdio` there.
  if (url.protocol === 'ssh:' && source.startsWith('CONTAINER_HOST'))
    throw new SandboxError(
      'engine-unavailable',
      `CONTAINER_HOST is ${host}: Podman over ssh is not supported.`,
      'Run Podman on this machine (unset CONTAINER_HOST and its socket is found), or set DOCKER_HOST to a Docker Engine over ssh://.',
    );
  if (url.protocol === 'ssh:') {
    const port = Number(url.port || 22);
    const hostKey = engineHostVerifier(url.hostname, port, env);
    return {
      description: `ssh://${url.username ? `${url.username}@` : ''}${url.hostname}${url.port ? `:${url.port}` : ''}`,
      source,
      options: {
        protocol: 'ssh',
        host: url.hostname,
        port,
        username: url.username || undefined,
        // The host key is checked against known_hosts, as ssh does (ssh2 would take any).
        sshOptions: { agent: env.SSH_AUTH_SOCK, hostVerifier: hostKey.verify },
      } as Docker.DockerOptions,
      local: false,
      hostKeyProblem: hostKey.problem,
    };
  }
  if (url.protocol !== 'tcp:' && url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SandboxError(
      'engine-unavailable',
      `The engine address "${host}" (from ${source}) uses ${url.protocol}, which is not supported.`,
      'Use unix://, tcp://, or ssh://.',
    );
  }
  // TLS as the context says (its files), else as DOCKER_TLS_VERIFY and DOCKER_CERT_PATH say.
  const verify = tls ? Boolean(tls.ca || tls.cert) : env.DOCKER_TLS_VERIFY === '1';
  const port = url.port || (verify ? '2376' : '2375');
  const secure = verify || url.protocol === 'https:' || port === '2376';
  const files = tls ?? (secure && env.DOCKER_CERT_PATH ? certPathFiles(env.DOCKER_CERT_PATH) : undefined);
  return {
    description: `tcp://${url.hostname}:${port}${secure ? ' (TLS)' : ''}`,
    source,
    options: {
      protocol: secure ? 'https' : 'http',
      host: url.hostname,
      port,
      ...(files?.ca ? { ca: files.ca } : {}),
      ...(files?.cert ? { cert: files.cert } : {}),
      ...(files?.key ? { key: files.key } : {}),
    },
    local: LOOPBACK.has(url.hostname),
  };
}

/** ca.pem, cert.pem and key.pem of DOCKER_CERT_PATH. */
function certPathFiles(certPath: string): NonNullable<ContextEndpoint['tls']> {
  try {
    return {
      ca: readFileSync(join(certPath, 'ca.pem')),
      cert: readFileSync(join(certPath, 'cert.pem')),
      key: readFileSync(join(certPath, 'key.pem')),
    };
  } catch (error) {
    throw new SandboxError(
      'engine-unavailable',
      `Cannot read the TLS certificates in ${certPath} (DOCKER_CERT_PATH): ${(error as Error).message}.`,
      'DOCKER_CERT_PATH must hold ca.pem, cert.pem and key.pem.',
    );
  }
}

const NETWORK_CODES = new Set([
  'ENOENT',
  'ECONNREFUSED',
  'EACCES',
  'EPERM',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/** True when the error means the engine could not be reached at all (as opposed to an API error). */
export function isConnectionError(error: unknown): boolean {
  const { code, level } = (error ?? {}) as { code?: string; level?: string };
  // ssh2's failures (ssh://) carry a level instead: the socket, the handshake (a refused host key), authentication.
  if (typeof level === 'string' && SSH_LEVELS.has(level)) return true;
  return typeof code === 'string' && NETWORK_CODES.has(code);
}

const SSH_LEVELS = new Set(['client-socket', 'client-timeout', 'handshake', 'protocol', 'client-authentication']);

/** Turns a connection failure into an error naming the endpoint and the fix. */
export function connectionError(error: unknown, endpoint: Endpoint): SandboxError {
  const code = (error as { code?: string }).code;
  const where = `${endpoint.description} (from ${endpoint.source})`;
  const hostKey = endpoint.hostKeyProblem?.();
  if (hostKey)
    return new SandboxError(
      'engine-unavailable',
      `Refused to use the Docker Engine at ${where}: ${hostKey}.`,
      'Check the host, then record its key as ssh does: connect once with `ssh USER@HOST` (or `ssh-keyscan`, checking the fingerprint), and try again.',
      { cause: error },
    );
  const chooseOther = 'or point the setting agentSandbox.engineHost or the variable DOCKER_HOST at a running engine';
  switch (code) {
    case 'ENOENT':
      return new SandboxError(
        'engine-unavailable',
        `No Docker Engine answers at ${where}: the socket does not exist.`,
        `Start Docker (Docker Desktop, or \`sudo systemctl start docker\` on Linux), ${chooseOther}.`,
        { cause: error },
      );
    case 'EACCES':
    case 'EPERM':
      return new SandboxError(
        'engine-permission',
        `Permission denied on the Docker socket ${where}.`,
        'Add your user to the docker group (`sudo usermod -aG docker $USER`, then log out and in again), or use rootless Docker and set DOCKER_HOST to its socket.',
        { cause: error },
      );
    case 'ECONNREFUSED':
      return new SandboxError(
        'engine-unavailable',
        `The Docker Engine at ${where} refused the connection: it is not running.`,
        `Start Docker, ${chooseOther}.`,
        { cause: error },
      );
    default:
      return new SandboxError(
        'engine-unavailable',
        `Cannot reach the Docker Engine at ${where}: ${(error as Error).message}.`,
        `Check that the engine runs and the address is right, ${chooseOther}.`,
        { cause: error },
      );
  }
}
