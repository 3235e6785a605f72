/**
 * The egress proxy's side for the domains a secret is bound to: instead of a blind tunnel, it ends
 * the sandbox's TLS with a leaf of the session's CA (sessionCa.ts), reads each HTTP/1.1 request,
 * puts the secrets in (secretInjection.ts), and sends it on over TLS to the address the allowlist
 * checked, verifying the real server's certificate for the name (the system's authorities, and any
 * extra ones the host gave). Only such domains are intercepted; every other CONNECT stays a tunnel.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { TLSSocket, checkServerIdentity, createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import type { SessionCa } from './sessionCa';
import { bodyWatcher, headersObject, injectSecrets, type SecretWithValue } from './secretInjection';
import { normalName } from './egressTarget';

const HOP_BY_HOP = ['connection', 'proxy-connection', 'proxy-authorization', 'keep-alive', 'te', 'trailer', 'upgrade'];

export interface BoundSecrets {
  secrets: readonly SecretWithValue[];
  ca: SessionCa;
  /** Authorities trusted for the real servers besides the system's (PEM). */
  extraCa?: readonly string[];
}

interface Connection {
  host: string;
  port: number;
  address: string;
  notes: Set<string>;
}

export class Interceptor {
  private readonly server: Server;
  private readonly connections = new WeakMap<object, Connection>();
  /**
   * Connections to the real servers, kept for the next request (one TLS handshake fewer), made with
   * one context of the trusted authorities (a context per request would parse them all each time: about 20 ms).
   */
  private readonly agent: Agent;

  constructor(private readonly bound: BoundSecrets) {
    const trusted: SecureContext = createSecureContext({ ca: [...rootCertificates, ...(bound.extraCa ?? [])] });
    this.agent = new Agent({ keepAlive: true, maxFreeSockets: 16, timeout: 30_000, secureContext: trusted });
    this.server = createServer((request, response) => this.forward(request, response));
  }

  /** Closes the kept connections to the real servers. */
  close(): void {
    this.agent.destroy();
  }

  /** Whether requests for this name are intercepted: a secret is bound to it. */
  intercepts(host: string): boolean {
    const name = normalName(host);
    return this.bound.secrets.some(({ secret }) => secret.domains.includes(name));
  }

  /** Serves one CONNECT whose 200 was sent; `done` gets what happened to placeholders once it closes. */
  serve(client: Socket, host: string, port: number, address: string, done: (notes: string[]) => void): void {
    const tls = new TLSSocket(client, { isServer: true, secureContext: this.bound.ca.contextFor(normalName(host)) });
    const connection: Connection = { host, port, address, notes: new Set() };
    this.connections.set(tls, connection);
    tls.on('error', () => tls.destroy());
    client.on('error', () => tls.destroy());
    tls.once('close', () => {
      client.destroy();
      done([...connection.notes]);
    });
    this.server.emit('connection', tls);
  }

  /**
   * Notes of a plain HTTP request (never intercepted, never given a value): the placeholders its
   * head carries, and those of its body as it is read (added to the array returned).
   */
  notesOf(request: IncomingMessage, host: string): string[] {
    const notes = injectSecrets(
      { host, intercepted: false, method: request.method, url: request.url ?? '', rawHeaders: request.rawHeaders },
      this.bound.secrets,
    ).notes;
    request.on(
      'data',
      bodyWatcher(this.bound.secrets, host, (note) => notes.push(note)),
    );
    return notes;
  }

  private forward(request: IncomingMessage, response: ServerResponse): void {
    const connection = this.connections.get(request.socket);
    if (!connection) return void response.writeHead(500).end();
    const { host, port, notes } = connection;
    const injected = injectSecrets(
      { host, intercepted: true, method: request.method, url: request.url ?? '/', rawHeaders: request.rawHeaders },
      this.bound.secrets,
    );
    const headers = headersObject(injected.rawHeaders, HOP_BY_HOP);
    // A request without Host (HTTP/1.0) is for the name the sandbox connected to: say so, so that no server guesses.
    headers.host ??= port === 443 ? normalName(host) : `${normalName(host)}:${port}`;
    for (const note of injected.notes) notes.add(note);
    request.on(
      'data',
      bodyWatcher(this.bound.secrets, host, (note) => notes.add(note)),
    );
    let upstream: ReturnType<typeof httpsRequest>;
    try {
      upstream = this.upstream(request, response, connection, headers);
    } catch (error) {
      // Node refuses what it cannot send (its message names the header, never its value): this request fails, not the proxy.
      notes.add(`${host}: ${(error as Error).message}`);
      response
        .writeHead(502, { 'content-type': 'text/plain' })
        .end(`Agent Sandbox proxy: ${(error as Error).message}\n`);
      return;
    }
    upstream.once('error', (error) => {
      notes.add(`${host}: ${error.message}`);
      if (!response.headersSent)
        response.writeHead(502, { 'content-type': 'text/plain' }).end(`Agent Sandbox proxy: ${error.message}\n`);
      else response.destroy();
    });
    request.pipe(upstream);
  }

  /** The request to the real server, at the address the allowlist checked, verifying its certificate for the name. */
  private upstream(
    request: IncomingMessage,
    response: ServerResponse,
    { host, port, address }: Connection,
    headers: Record<string, string | string[]>,
  ): ReturnType<typeof httpsRequest> {
    return httpsRequest(
      {
        host: address,
        port,
        servername: normalName(host),
        method: request.method,
        path: request.url,
        headers,
        setHost: false,
        agent: this.agent,
        checkServerIdentity: (_, cert) => checkServerIdentity(normalName(host), cert),
      },
      (answer) => {
        // Hop-by-hop headers are the kept upstream connection's own, not the sandbox's.
        response.writeHead(
          answer.statusCode ?? 502,
          answer.statusMessage,
          headersObject(answer.rawHeaders, HOP_BY_HOP),
        );
        answer.pipe(response);
      },
    );
  }
}
