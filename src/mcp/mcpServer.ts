/**
 * One MCP connection: an SDK `Server` that lists the tools and runs calls through the caller it is
 * given (the CLI's policy-by-flags path, the same as `agent-sandbox tool`). Bad input is a protocol
 * error (InvalidParams), a failing environment an `isError` result that says what happened and what
 * to do; cancelling a request, or the connection ending, stops its calls.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type CallToolResult,
  type Implementation,
} from '@modelcontextprotocol/sdk/types.js';
import type { ProgressCallback } from '../core/engine/engine';
import { SandboxError, errorMessage } from '../core/errors';
import { reachSentence, type ReachKind } from '../core/tools/reach';
import { resultParts } from '../core/tools/resultParts';
import { INPUT_REASONS, ToolInputError, type ToolOutcome } from '../core/tools/runTool';
import { isToolName, TOOLS, type ToolName } from '../core/tools/toolList';
import { mcpToolList } from './mcpTools';

/** Runs one tool call for a connection; see src/cli/flagPolicyTools.ts. */
export interface McpCaller {
  call(
    name: ToolName,
    input: unknown,
    options: { signal: AbortSignal; onProgress?: ProgressCallback; granted?: readonly ReachKind[] },
  ): Promise<ToolOutcome>;
}

export interface McpConnectionOptions {
  /** The server's name and version, as the client sees them. */
  readonly version: string;
  /** What the model is told about this server (the policy, where sessions live). */
  readonly instructions: string;
  /** Whether the server's sandboxes may have the network (for the tools' hints). */
  readonly network: boolean;
  /** The flags that set the policy, for the question put to the user: "--workspace ro, no --network". */
  readonly flags: string;
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
      let outcome = await caller.call(name, input ?? {}, { signal, onProgress });
      // Beyond the flags: refused, unless the client can ask its user, and the user allows this one call.
      const refusal = outcome.refusal;
      if (refusal && canAsk(server) && (await allowed(server, name, refusal, options.flags, signal)))
        outcome = await caller.call(name, input ?? {}, { signal, onProgress, granted: refusal.wider });
      return {
        content: [
          ...resultParts(outcome.text).map((text) => ({ type: 'text' as const, text })),
          ...(outcome.images ?? []).map((image) => ({
            type: 'image' as const,
            data: Buffer.from(image.data).toString('base64'),
            mimeType: image.mime,
          })),
        ],
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

/** Whether the client can put a question to its user (MCP elicitation, form mode; an empty capability is form mode). */
function canAsk(server: Server): boolean {
  const elicitation = server.getClientCapabilities()?.elicitation as { form?: object; url?: object } | undefined;
  return Boolean(elicitation && (elicitation.form || !elicitation.url));
}

/** Asks the client's user whether this one call may reach further than the flags allow; no answer is no. */
async function allowed(
  server: Server,
  tool: string,
  refusal: NonNullable<ToolOutcome['refusal']>,
  flags: string,
  signal: AbortSignal,
): Promise<boolean> {
  try {
    const answer = await server.request(
      {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: `${tool} would use sandbox "${refusal.sandboxId}", which can ${reachSentence([...refusal.wider])}: more than agent-sandbox mcp allows (${flags}). Allow this one call?`,
          requestedSchema: {
            type: 'object',
            properties: {
              allow: { type: 'boolean', title: 'Allow this one call', default: false },
            },
            required: ['allow'],
          },
        },
      },
      ElicitResultSchema,
      { signal },
    );
    return answer.action === 'accept' && answer.content?.allow === true;
  } catch {
    return false;
  }
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
