/** Starts the built `agent-sandbox mcp` (dist/cli.js) as a child process and connects the MCP SDK's own client to it. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { CLI } from './cliRunner';
import { TEST_IMAGES } from './harness';

export interface McpServerProcess {
  client: Client;
  transport: StdioClientTransport;
  /** What the server wrote to stderr so far. */
  stderr(): string;
  /** The server's process id. */
  pid: number;
  /** Resolves with the exit code once the server process ended. */
  exited: Promise<number | null>;
  close(): Promise<void>;
}

/** The environment the server runs with: the local test images, no warm pool. */
function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
    AGENT_SANDBOX_IMAGE_NODE: TEST_IMAGES.node,
    AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash,
    AGENT_SANDBOX_IMAGE_LINUX: TEST_IMAGES.linux,
    AGENT_SANDBOX_POOL_SIZE: '0',
    ...extra,
  };
}

export async function startMcp(
  folder: string,
  flags: readonly string[] = [],
  options: {
    name?: string;
    env?: Record<string, string>;
    /** Answers the server's questions to the user (MCP elicitation); without it the client cannot be asked. */
    ask?: (request: ElicitRequest) => ElicitResult | Promise<ElicitResult>;
  } = {},
): Promise<McpServerProcess> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--folder', folder, ...flags],
    env: serverEnv(options.env),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client(
    { name: options.name ?? 'mcp-test', version: '1.0.0' },
    options.ask ? { capabilities: { elicitation: { form: {} } } } : {},
  );
  if (options.ask) client.setRequestHandler(ElicitRequestSchema, (request) => options.ask!(request));
  await client.connect(transport);
  const pid = transport.pid!;
  const exited = new Promise<number | null>((resolve) => {
    const poll = setInterval(() => {
      try {
        process.kill(pid, 0);
      } catch {
        clearInterval(poll);
        resolve(null);
      }
    }, 50);
  });
  return { client, transport, pid, exited, stderr: () => stderr, close: () => client.close() };
}

/** The text of a tool result, parts joined. */
export function resultText(result: unknown): string {
  return (result as CallToolResult).content
    .map((part) => (part.type === 'text' ? part.text : `[${part.type}]`))
    .join('');
}

/**
 * The server driven by hand, as a buggy or dying client would: raw lines on its stdin, every line
 * it writes on stdout kept (each must be a JSON-RPC message), its pipes closed in any order.
 */
export interface RawMcpServer {
  child: ChildProcessWithoutNullStreams;
  /** Writes one JSON-RPC message (or any text) as a line. */
  send(message: unknown): void;
  /** The messages written on stdout so far, parsed; a line that is not JSON throws. */
  messages(): unknown[];
  /** Resolves with the first message answering `id`. */
  response(id: number | string): Promise<{ result?: unknown; error?: { code: number; message: string } }>;
  stderr(): string;
  exited: Promise<number | null>;
}

export async function startRawMcp(folder: string, flags: readonly string[] = []): Promise<RawMcpServer> {
  const child = spawn(process.execPath, [CLI, 'mcp', '--folder', folder, ...flags], {
    env: serverEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiting: (() => void)[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const wake of waiting.splice(0)) wake();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.on('error', () => undefined); // the server may be gone before the test writes
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const messages = () =>
    stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as unknown);
  const server: RawMcpServer = {
    child,
    send: (message) => child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`),
    messages,
    stderr: () => stderr,
    exited,
    async response(id) {
      for (;;) {
        const found = messages().find((message) => (message as { id?: unknown }).id === id);
        if (found) return found as Awaited<ReturnType<RawMcpServer['response']>>;
        if (child.exitCode !== null) throw new Error(`the server ended without answering ${id}: ${stderr}`);
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          child.once('exit', () => resolve());
        });
      }
    },
  };
  server.send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  await server.response(0);
  server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return server;
}

/** A tools/call request as a raw message. */
export function toolCall(id: number, name: string, args: unknown, meta?: unknown): unknown {
  return {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
  };
}
