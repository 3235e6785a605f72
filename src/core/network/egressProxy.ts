/**
 * The egress proxy of the `allowlist` network tier: the only way out of such a sandbox. It takes
 * HTTP CONNECT (HTTPS and any TCP) and plain HTTP requests in absolute form, matches the requested
 * name against the allowlist, resolves the name itself and refuses internal addresses (so DNS
 * rebinding cannot reach the user's machine or network), then connects to the address it checked.
 * A refusal is an HTTP 403 whose body names the rule, so the program and the agent can tell why.
 * Every decision is reported with its byte counts.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AllowEntry } from './allowlist';
import { decisionOf, egressTarget, type EgressTarget } from './egressTarget';
import { refusalBody } from './refusal';
import { readsInto, tieEnds } from './egressPipe';
import { Interceptor, type BoundSecrets } from './interception';
import { headersObject } from './secretInjection';

export interface NetworkDecision {
  host: string;
  port: number;
  allowed: boolean;
  /** The allowlist entry that let it through. */
  rule?: string;
  /** Why it was refused. */
  reason?: string;
  /** The address an allowed connection went to (the name's, the user's mapping, or the machine's for `localhost:PORT`). */
  address?: string;
  /** Bytes the sandbox sent: through a CONNECT tunnel, or a plain HTTP request with its head. */
  bytesSent: number;
  /** Bytes that came back to it, the same way. */
  bytesReceived: number;
  /** What happened to bound secrets' placeholders: "TOKEN added for api.example.com", "TOKEN sent toward other.example: not replaced". */
  secrets?: string[];
  at: string;
}

export interface EgressProxyOptions {
  /** The entries, or a function asked at each decision (entries that hold for a while, such as a package install's). */
  allowlist: readonly AllowEntry[] | (() => readonly AllowEntry[]);
  /**
   * Names the user mapped to addresses themselves (like /etc/hosts): such a name, when the allowlist
   * lets it through, leads to that address, which may be internal (the user chose it).
   */
  hosts?: Readonly<Record<string, string>>;
  /** Every address of a name (the system resolver when not given). */
  lookup?(host: string): Promise<string[]>;
  /** Where `localhost:PORT` entries lead: the user's machine (127.0.0.1 when not given). */
  localAddress?: string;
  /** Told of every decision when its connection ends (or at once, for a refusal). */
  onDecision?(decision: NetworkDecision): void;
  /**
   * Told when the allowed connections not yet decided change: when each began (ms since the epoch).
   * Each is in it before the sandbox gets an answer on it, and leaves it once told to onDecision.
   */
  onUnderWay?(startedAt: readonly number[]): void;
  /** Bound secrets with their values: CONNECTs to their domains are intercepted (interception.ts). */
  bound?: BoundSecrets;
}

const HOP_BY_HOP = ['connection', 'proxy-connection', 'proxy-authorization', 'keep-alive', 'te', 'trailer', 'upgrade'];

type Target = EgressTarget;

export class EgressProxy {
  readonly server: Server;
  private readonly sockets = new Set<Duplex>();
  /** Allowed connections whose decision is not yet told, with when each began. */
  private readonly underWay = new Map<object, number>();
  private readonly interceptor: Interceptor | undefined;

  constructor(private readonly options: EgressProxyOptions) {
    this.interceptor = options.bound?.secrets.length ? new Interceptor(options.bound) : undefined;
    this.server = createServer((request, response) => void this.forward(request, response));
    this.server.on(
      'connect',
      (request: IncomingMessage, socket: Duplex, head: Buffer) => void this.tunnel(request, socket, head),
    );
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Listens on a TCP port of an address, or on a unix socket path. */
  listen(at: { port: number; host: string } | { path: string }): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(at, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.interceptor?.close();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Decides, then resolves and checks the addresses: the one address the connection will use, or why not. */
  private target(host: string, port: number): Promise<Target> {
    const { allowlist, hosts } = this.options;
    return egressTarget(typeof allowlist === 'function' ? allowlist() : allowlist, host, port, {
      hosts,
      localAddress: this.options.localAddress ?? '127.0.0.1',
      lookup: this.options.lookup,
    });
  }

  private record(host: string, port: number, target: Target, sent = 0, received = 0, secrets: string[] = []): void {
    const decision = decisionOf(host, port, target, sent, received);
    this.options.onDecision?.(secrets.length ? { ...decision, secrets } : decision);
  }

  /** Counts an allowed connection as under way; the function returned ends that (once). */
  private begin(): () => void {
    const key = {};
    this.underWay.set(key, Date.now());
    this.options.onUnderWay?.([...this.underWay.values()]);
    return () => {
      if (this.underWay.delete(key)) this.options.onUnderWay?.([...this.underWay.values()]);
    };
  }

  private async tunnel(request: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const { host, port } = splitAuthority(request.url ?? '', 443);
    const target = host ? await this.target(host, port) : { refused: 'CONNECT needs host:port' };
    if ('refused' in target) {
      this.record(host, port, target);
      client.end(refusal(target.refused));
      return;
    }
    const ended = this.begin();
    if (this.interceptor?.intercepts(host) && head.length === 0) {
      const socket = client as Socket;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      this.interceptor.serve(socket, host, port, target.address, (notes) => {
        this.record(host, port, target, socket.bytesRead, socket.bytesWritten, notes);
        ended();
      });
      return;
    }
    let received = 0;
    let connected = false;
    const upstream: Socket = connect({
      host: target.address,
      port,
      noDelay: true,
      onread: readsInto(
        client,
        () => upstream,
        (bytes) => (received += bytes),
      ),
    });
    upstream.once('connect', () => {
      connected = true;
      if (client.destroyed) return void upstream.destroy();
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      client.pipe(upstream);
    });
    upstream.once('end', () => client.end());
    upstream.once('error', () => {
      if (!connected && !client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
    });
    // Sent: what reached the upstream connection, the head included.
    tieEnds(client, upstream, () => {
      this.record(host, port, target, upstream.bytesWritten, received);
      ended();
    });
  }

  private async forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(request.url ?? '');
      if (url.protocol !== 'http:') throw new Error('not http');
    } catch {
      response
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('Agent Sandbox proxy: send requests in absolute form (http://host/path), or use CONNECT.\n');
      return;
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port || 80);
    const target = await this.target(host, port);
    // Plain HTTP is never given a secret: a placeholder in it is only noted.
    const notes = this.interceptor?.notesOf(request, host) ?? [];
    if ('refused' in target) {
      this.record(host, port, target, 0, 0, notes);
      const body = refusalBody(target.refused);
      response.writeHead(403, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) }).end(body);
      return;
    }
    const ended = this.begin();
    // A client gone before the answer ends is no call's to wait for (its decision comes when the answer ends).
    response.once('close', ended);
    const headers = { ...request.headers };
    for (const name of HOP_BY_HOP) delete headers[name];
    // Header bytes count too: a request without a body still carries what its URL and headers say.
    let sent = headBytes(`${request.method} ${request.url} HTTP/${request.httpVersion}`, request.rawHeaders);
    let received = 0;
    const upstream = httpRequest(
      {
        host: target.address,
        port,
        method: request.method,
        path: `${url.pathname}${url.search}`,
        headers,
        setHost: false,
      },
      (answer) => {
        received = headBytes(
          `HTTP/${answer.httpVersion} ${answer.statusCode} ${answer.statusMessage}`,
          answer.rawHeaders,
        );
        // Hop-by-hop headers are the upstream connection's own (its keep-alive would hold the client's open).
        response.writeHead(answer.statusCode ?? 502, headersObject(answer.rawHeaders, HOP_BY_HOP));
        answer.on('data', (chunk: Buffer) => (received += chunk.length));
        answer.pipe(response);
        answer.once('end', () => {
          this.record(host, port, target, sent, received, notes);
          ended();
        });
      },
    );
    request.on('data', (chunk: Buffer) => (sent += chunk.length));
    upstream.once('error', () => {
      this.record(host, port, target, sent, received, notes);
      ended();
      if (!response.headersSent) response.writeHead(502).end();
      else response.destroy();
    });
    request.pipe(upstream);
  }
}

/** The size of an HTTP message's head: its first line and headers as they came, with their line ends. */
function headBytes(firstLine: string, rawHeaders: readonly string[]): number {
  let bytes = Buffer.byteLength(firstLine) + 4;
  for (let index = 0; index + 1 < rawHeaders.length; index += 2)
    bytes += Buffer.byteLength(rawHeaders[index]!) + Buffer.byteLength(rawHeaders[index + 1]!) + 4;
  return bytes;
}

function splitAuthority(authority: string, fallbackPort: number): { host: string; port: number } {
  const match = /^\[?([^\]]*?)\]?(?::(\d+))?$/.exec(authority);
  return { host: match?.[1] ?? '', port: match?.[2] ? Number(match[2]) : fallbackPort };
}

function refusal(reason: string): string {
  const body = refusalBody(reason);
  return `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
