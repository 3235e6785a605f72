/**
 * One MCP connection: an SDK `Server` that lists the tools and runs calls through the caller it is
 * given (the CLI's policy-by-flags path, the same as `agent-sandbox tool`). Bad input is a protocol
 * error (InvalidParams), a failing environment an `isError` result that says what happened and what
 * to do; cancelling a request, or the connection ending, stops its calls.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type CallToolResult,
  type Implementation,
} from '@modelcontextprotocol/sdk/types.js';
import type { ProgressCallback } from '../core/engine/engine';
import { SandboxError, errorMessage } from '../core/errors';
import type { TextBudget } from '../core/tools/fitBudget';
import { DEFAULT_RESULT_CHARS, resultParts } from '../core/tools/resultParts';
import { INPUT_REASONS, ToolInputError, type ToolOutcome } from '../core/tools/runTool';
import { isToolName, TOOLS, type ToolName } from '../core/tools/toolList';
import { mcpToolList } from './mcpTools';

/** Runs one tool call for a connection; see src/cli/flagPolicyTools.ts. */
export interface McpCaller {
  call(
    name: ToolName,
    input: unknown,
    options: { signal: AbortSignal; budget: TextBudget; onProgress?: ProgressCallback },
  ): Promise<ToolOutcome>;
}

export interface McpConnectionOptions {
  /** The server's name and version, as the client sees them. */
  readonly version: string;
  /** What the model is told about this server (the policy, where sessions live). */
  readonly instructions: string;
  /** Whether the server's sandboxes may have the network (for the tools' hints). */
  readonly network: boolean;
  /** The caller for this connection, made once the client has said who it is. */
  caller(client: Implementation | undefined): McpCaller;
  /** Ends every call of this connection (it closed, or the server is stopping). */
  readonly signal: AbortSignal;
  log(message: string): void;
}

export function mcpConnection(options: McpConnectionOptions): Server {
  const server = new Server(
    { name: 'agent-sandbox', title: 'Agent Sandbox', version: options.version },
    { capabilities: { tools: { listChanged: false } }, instructions: options.instructions },
  );
  let caller: McpCaller | undefined;
  const tools = mcpToolList({ network: options.network });

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: input } = request.params;
    if (!isToolName(name))
      throw new InvalidParams(`Unknown tool "${name}". Tools: ${TOOLS.map((tool) => tool.name).join(', ')}.`);
    caller ??= options.caller(server.getClientVersion());
    const signal = AbortSignal.any([extra.signal, options.signal]);
    const progressToken = request.params._meta?.progressToken;
    let progress = 0;
    const onProgress: ProgressCallback | undefined =
      progressToken === undefined
        ? undefined
        : ({ message }) => {
            void extra
              .sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress: ++progress, message },
              })
              .catch(() => undefined);
          };
    try {
      // MCP gives no token budget: a result holds what VS Code and `agent-sandbox tool` give at most.
      const budget = { maxChars: DEFAULT_RESULT_CHARS, signal };
      const outcome = await caller.call(name, input ?? {}, { signal, budget, onProgress });
      return {
        content: resultParts(outcome.text).map((text) => ({ type: 'text' as const, text })),
        ...(outcome.failure ? { isError: true } : {}),
      };
    } catch (error) {
      if (isBadInput(error)) throw new InvalidParams((error as Error).message);
      // Not the input's fault and not a known failure of the environment: still a result the model can read.
      options.log(`${name} failed: ${errorMessage(error)}`);
      return { content: [{ type: 'text', text: `failed · internal error\n${errorMessage(error)}` }], isError: true };
    }
  });
  return server;
}

/** A JSON-RPC "invalid params" error whose message is the tool's own (McpError would prefix "MCP error -32602:" twice). */
class InvalidParams extends Error {
  readonly code = ErrorCode.InvalidParams;
}

/** A call the model must fix: its input does not match the schema, or names a path or sandbox that is not there. */
function isBadInput(error: unknown): boolean {
  if (error instanceof ToolInputError) return true;
  const cause = (error as Error | undefined)?.cause;
  return SandboxError.is(cause) && INPUT_REASONS.has(cause.reason);
}
