/**
 * A Docker Engine that a test can kill: a Unix socket forwarding every connection to the real
 * engine's socket. `kill()` cuts every open connection and stops answering, which is what a
 * process using the engine sees when dockerd dies, without stopping the engine the other tests use.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface EngineProxy {
  /** DOCKER_HOST / --engine-host value for the proxy. */
  readonly host: string;
  kill(): Promise<void>;
}

export async function startEngineProxy(
  target = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, ''),
): Promise<EngineProxy> {
  const path = join(mkdtempSync(join(tmpdir(), 'agent-sandbox-engine-proxy-')), 'docker.sock');
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection(target);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(path, resolve));
  return {
    host: `unix://${path}`,
    kill: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        sockets.clear();
      }),
  };
}
