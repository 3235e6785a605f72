/**
 * The MCP server's own cost: sandbox_run over MCP (the SDK client, stdio, a long-lived
 * `agent-sandbox mcp` child process) beside the same call through the `tool` command's path in this
 * process (flagPolicyTools, the code `agent-sandbox tool` runs). Both have their own engine with a
 * warm pool of the same size, so what differs is the protocol round trip and the second process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { flagPolicyTools } from '../../src/cli/flagPolicyTools';
import { parseSettings } from '../../src/core/spec/settings';
import { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { TEST_IMAGES } from '../../test/engine/harness';
import type { Group } from './measure';

const CLI = resolve(__dirname, '..', '..', 'dist', 'cli.js');

export async function mcpGroup(
  iterations: number,
  warmup: number,
  poolSize: number,
): Promise<{ group: Group; dispose(): Promise<void> }> {
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-bench-mcp-'));
  const engine = new DockerEngine({ images: TEST_IMAGES, poolSize });
  const settings = parseSettings({ images: TEST_IMAGES, pool: { size: poolSize } });
  const tools = flagPolicyTools({
    engine,
    folder,
    settings,
    client: 'cli',
    command: 'this command',
    withFlag: 'run the command with',
  });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--folder', folder],
    env: {
      ...(process.env as Record<string, string>),
      AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
      AGENT_SANDBOX_POOL_SIZE: String(poolSize),
    },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport);
  const input = { code: 'print(6 * 7)' };
  const check = (text: string) => {
    if (!/^exit code 0/.test(text) || !text.includes('42')) throw new Error(text.slice(0, 300));
  };
  return {
    group: {
      id: 'mcp',
      title: 'sandbox_run over MCP (stdio) beside the tool command path in one process',
      arms: [
        {
          name: 'tool command path, in process',
          run: async () =>
            check((await tools.call('sandbox_run', input, { signal: new AbortController().signal })).text),
        },
        {
          name: 'over MCP: SDK client, stdio',
          run: async () => {
            const result = (await client.callTool({ name: 'sandbox_run', arguments: input })) as CallToolResult;
            check(result.content.map((part) => (part.type === 'text' ? part.text : '')).join(''));
          },
        },
      ],
      comparisons: [{ ours: 'over MCP: SDK client, stdio', baseline: 'tool command path, in process', target: 1.1 }],
      iterations,
      warmup,
      // Both pools refill between calls, as they would during an agent's think time.
      settle: async () => {
        await engine.computeRuns.pool.settled();
        await new Promise((resolve) => setTimeout(resolve, 800));
      },
    },
    dispose: async () => {
      await client.close();
      await engine.dispose();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
