/** Starts the built `agent-sandbox mcp` (dist/cli.js) as a child process and connects the MCP SDK's own client to it. */
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
    env: {
      ...(process.env as Record<string, string>),
      AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
      AGENT_SANDBOX_IMAGE_NODE: TEST_IMAGES.node,
      AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash,
      AGENT_SANDBOX_IMAGE_LINUX: TEST_IMAGES.linux,
      AGENT_SANDBOX_POOL_SIZE: '0',
      ...options.env,
    },
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
