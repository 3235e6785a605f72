/**
 * The floors: the same work done straight through dockerode and through the docker CLI, with the same
 * limits as our sandboxes (taken from containerConfig.ts, so the two cannot drift apart).
 */
import { execFile } from 'node:child_process';
import type { Duplex } from 'node:stream';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { extract } from 'tar-stream';
import { containerCreateOptions } from '../../src/engines/docker/containerConfig';
import { buildTar, type TarEntry } from '../../src/engines/docker/tar';
import type { SandboxSpec } from '../../src/core/spec/spec';

const run = promisify(execFile);
const USER = '1000:1000';

/** HostConfig of our sandbox for this spec: memory without swap, CPU, pids, caps, no-new-privileges, init, ulimits. */
export function sandboxHostConfig(
  spec: SandboxSpec,
  image: string,
  dialect: 'docker' | 'podman' = 'docker',
): Docker.HostConfig {
  const options = containerCreateOptions({
    name: 'bench',
    image,
    spec,
    user: { uid: 1000, gid: 1000 },
    createdAt: '',
    notices: [],
    dialect,
  });
  return options.HostConfig!;
}

/** create, start, wait, logs, remove: a one-shot through the API, NetworkDisabled like ours. */
export async function rawOneShot(
  docker: Docker,
  image: string,
  hostConfig: Docker.HostConfig,
  argv: string[],
): Promise<string> {
  const container = await docker.createContainer({
    Image: image,
    Cmd: argv,
    User: USER,
    NetworkDisabled: true,
    HostConfig: { ...hostConfig, LogConfig: { Type: 'json-file', Config: {} } },
  });
  try {
    await container.start();
    await container.wait();
    const logs = (await container.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
    return logs.toString('latin1');
  } finally {
    await container.remove({ force: true });
  }
}

/** `docker run --rm` with the same limits; the CLI has no NetworkDisabled, so `--network none`. */
export async function cliOneShot(
  image: string,
  spec: SandboxSpec,
  argv: string[],
  /** The CLI: docker, or podman (which takes the same flags). */
  binary: 'docker' | 'podman' = 'docker',
): Promise<string> {
  const { limits } = spec;
  const args = [
    'run',
    '--rm',
    '--network',
    'none',
    '--init',
    '--user',
    USER,
    '--memory',
    String(limits.memoryBytes),
    '--memory-swap',
    String(limits.memoryBytes),
    '--cpus',
    String(limits.cpus),
    '--pids-limit',
    String(limits.pids),
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
    '--ipc',
    'private',
    '--ulimit',
    'nofile=4096:4096',
    '--ulimit',
    'nproc=4096:4096',
    '--ulimit',
    'core=0',
    image,
    ...argv,
  ];
  return (await run(binary, args)).stdout;
}

/** exec create, start (attached), demux, inspect: what any exec-based client does. */
export async function rawExec(
  docker: Docker,
  container: Docker.Container,
  argv: string[],
): Promise<{ stdout: string; exitCode: number | null }> {
  const exec = await container.exec({
    Cmd: argv,
    User: USER,
    WorkingDir: '/workspace',
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  let stdout = '';
  docker.modem.demuxStream(
    stream,
    { write: (chunk: Buffer) => ((stdout += chunk.toString()), true) } as unknown as NodeJS.WritableStream,
    { write: () => true } as unknown as NodeJS.WritableStream,
  );
  await new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
  });
  const info = await exec.inspect();
  return { stdout, exitCode: info.ExitCode ?? null };
}

export async function cliExec(
  containerId: string,
  argv: string[],
  binary: 'docker' | 'podman' = 'docker',
): Promise<string> {
  return (await run(binary, ['exec', '-u', USER, '-w', '/workspace', containerId, ...argv])).stdout;
}

/**
 * A container for the archive API's floor: the session's image and limits, but a writable root and
 * a plain /workspace directory in it. Our sandboxes have a read-only root with tmpfs places, which
 * the archive API refuses ("container rootfs is marked read-only") or cannot see.
 */
export async function rawArchiveContainer(
  docker: Docker,
  image: string,
  hostConfig: Docker.HostConfig,
): Promise<Docker.Container> {
  const container = await docker.createContainer({
    Image: image,
    Entrypoint: ['sleep'],
    Cmd: ['infinity'],
    User: USER,
    // Created by the engine; the archive API writes as root, so its owner does not matter.
    WorkingDir: '/workspace',
    NetworkDisabled: true,
    Labels: { 'org.agent-sandbox.bench': 'archive-floor' },
    HostConfig: { ...hostConfig, ReadonlyRootfs: false, Tmpfs: {}, Mounts: [], AutoRemove: false },
  });
  await container.start();
  return container;
}

/** A tar of the files (built here, as a client would) put under /workspace. */
export async function rawPut(container: Docker.Container, files: { name: string; data: Uint8Array }[]): Promise<void> {
  const entries: TarEntry[] = files.map((file) => ({
    name: file.name,
    type: 'file',
    data: file.data,
    mode: 0o644,
    uid: 1000,
    gid: 1000,
  }));
  await container.putArchive(await buildTar(entries), { path: '/workspace' });
}

/** getArchive of one file, unpacked from its tar. */
export async function rawGet(container: Docker.Container, path: string): Promise<Buffer> {
  const stream = (await container.getArchive({ path })) as unknown as NodeJS.ReadableStream;
  return new Promise<Buffer>((resolve, reject) => {
    const unpack = extract();
    const chunks: Buffer[] = [];
    unpack.on('entry', (_header, entry, next) => {
      entry.on('data', (chunk: unknown) => void chunks.push(chunk as Buffer));
      entry.on('end', next);
      entry.resume();
    });
    unpack.on('finish', () => resolve(Buffer.concat(chunks)));
    unpack.on('error', reject);
    stream.pipe(unpack);
  });
}

/**
 * A prototype of the long-lived channel the issue asks about (not product code): one attached `sh`
 * in the session that runs each command line and prints an end marker with the exit code. It keeps
 * none of exec's semantics (separate cwd, env, stdin per call, output pipes that close with the
 * command, kill by marker, concurrent calls); it only shows the floor such a channel would have.
 */
export class ShellChannel {
  private buffer = '';
  private waiter: (() => void) | undefined;

  private constructor(private readonly stream: Duplex) {}

  static async open(docker: Docker, container: Docker.Container): Promise<ShellChannel> {
    const exec = await container.exec({
      Cmd: ['sh'],
      User: USER,
      WorkingDir: '/workspace',
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    const stream = (await exec.start({ hijack: true, stdin: true })) as Duplex;
    const channel = new ShellChannel(stream);
    const sink = {
      write: (chunk: Buffer) => ((channel.buffer += chunk.toString()), channel.waiter?.(), true),
    } as unknown as NodeJS.WritableStream;
    docker.modem.demuxStream(stream, sink, sink);
    return channel;
  }

  async run(command: string): Promise<string> {
    this.buffer = '';
    const marker = `__end_${Math.random().toString(36).slice(2)}__`;
    await new Promise<void>((resolve) => {
      this.waiter = () => {
        if (this.buffer.includes(marker)) resolve();
      };
      this.stream.write(`${command}; echo "${marker} $?"\n`);
    });
    return this.buffer.slice(0, this.buffer.indexOf(marker));
  }

  close(): void {
    this.stream.end('exit\n');
    this.stream.destroy();
  }
}
