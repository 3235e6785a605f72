/**
 * The MCP server over Streamable HTTP, for clients that cannot start a process: on 127.0.0.1 only,
 * every request carrying `Authorization: Bearer <token>`, Host and Origin checked against DNS
 * rebinding. Each MCP session (initialize to DELETE) is one connection, with its own SDK Server and
 * default sandbox, ended when the session closes or the server stops.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

/** One connection: its SDK server, and what ends it (closing its own sandboxes). */
export interface HttpConnection {
  readonly server: Server;
  end(): Promise<void>;
}

export interface HttpServing {
  /** The endpoint clients connect to: http://127.0.0.1:PORT/mcp. */
  readonly url: string;
  /** Stops accepting requests and ends every connection. */
  close(): Promise<void>;
}

/** Largest JSON request body taken (a tool call with files in it). */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export async function serveHttp(options: {
  port: number;
  token: string;
  connect(): HttpConnection;
  log(message: string): void;
}): Promise<HttpServing> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; connection: HttpConnection }>();
  const expected = Buffer.from(`Bearer ${options.token}`);
  let allowedHosts: string[] = [];

  const end = async (sessionId: string) => {
    const session = sessions.get(sessionId);
    if (!session) return;
    sessions.delete(sessionId);
    await session.connection.end().catch((error: unknown) => options.log(`ending ${sessionId}: ${String(error)}`));
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== '/mcp')
      return reply(response, 404, 'Not found: the MCP endpoint is /mcp.');
    const given = Buffer.from(request.headers.authorization ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return reply(
        response,
        401,
        'Missing or wrong bearer token: send the token agent-sandbox mcp printed at start, as Authorization: Bearer <token>.',
      );
    const sessionId = request.headers['mcp-session-id'];
    const known = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (known) return known.transport.handleRequest(request, response);
    if (request.method !== 'POST')
      return reply(response, 400, 'No MCP session with that id: start one with an initialize request.');
    const body = await readJson(request);
    if (!isInitializeRequest(body))
      return reply(response, 400, 'No MCP session with that id: start one with an initialize request.');
    const connection = options.connect();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableDnsRebindingProtection: true,
      allowedHosts,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, connection });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) void end(transport.sessionId);
    };
    await connection.server.connect(transport);
    await transport.handleRequest(request, response, body);
  };

  const http = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      options.log(`request failed: ${(error as Error).message}`);
      if (!response.headersSent) reply(response, error instanceof BodyError ? 413 : 400, (error as Error).message);
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => http.once('error', reject).listen(options.port, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      await Promise.all([...sessions.keys()].map(end));
    },
  };
}

class BodyError extends Error {}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyError(`The request is larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB.`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new Error('The request body is not JSON.');
  }
}

function reply(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}
