/**
 * `agent-sandbox mcp`: the tools as a Model Context Protocol server over standard input and output,
 * for agents outside VS Code's tool API. The policy is what the flags allow, as for `tool`; each
 * connection has its own default sandbox (scope agent:mcp-CLIENT-XXXXXX), closed when the
 * connection ends, while named sandboxes are the workspace's, shared with VS Code and the CLI.
 */
import { randomBytes } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Implementation } from '@modelcontextprotocol/sdk/types.js';
import { version } from '../../package.json';
import type { SandboxEngine, SessionScope } from '../core/engine/engine';
import { engineLabel } from '../core/engine/engineCapabilities';
import { errorMessage } from '../core/errors';
import type { Settings } from '../core/spec/settings';
import { describeSecret } from '../core/secrets/catalog';
import { sandboxIdOf } from '../core/sessions/sessions';
import { serveHttp, type HttpConnection } from '../mcp/httpServer';
import { answerInvalidRequests } from '../mcp/invalidRequests';
import { mcpConnection, type McpCaller } from '../mcp/mcpServer';
import { usageError } from './args';
import type { CommandContext } from './commands';
import { flagPolicyTools, flagsText, networkWords, type FlagPolicyTools } from './flagPolicyTools';
import { toolSettings } from './toolCommand';

const COMMAND = 'agent-sandbox mcp';

/** A scope key for one connection: the client's name and a random part ("mcp-claude-code-3f9a1c"). */
export function connectionKey(client: Implementation | undefined): string {
  const name = (client?.name ?? 'client')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `mcp-${name || 'client'}-${randomBytes(3).toString('hex')}`;
}

/** What the model is told about this server when it connects. */
function instructions(settings: Settings, folder: string, engine: string): string {
  const access = {
    none: 'not visible to sandboxes',
    copy: 'copied (minus what .gitignore excludes) into a private /workspace when a sandbox opens, never written',
    ro: 'mounted read-only',
    rw: 'mounted read-write',
  }[settings.workspaceAccess];
  return [
    `Agent Sandbox runs code in hardened, throwaway sandboxes on this machine (engine: ${engine}), never on the host itself.`,
    `This server's policy, set by the flags it was started with (${flagsText(settings)}): the workspace folder ${folder} is ${access} at /workspace; the network is ${networkWords(settings)}. A call that needs more is refused, and the message names the flag the user would change.`,
    ...(settings.secrets.length
      ? [
          `Secrets offered to sandboxes (ask for them by name with sandbox_open's or sandbox_run's secrets): ${settings.secrets.map(describeSecret).join('; ')}. A bound secret's variable holds a placeholder; the proxy adds the value only in requests to its domains.`,
        ]
      : []),
    'sandbox_run runs a snippet in a one-off sandbox. sandbox_exec and the sandbox_fs_* tools use this connection’s own default sandbox, opened on first use and closed when the connection ends; a sandbox opened with a session name (sandbox_open) is shared with VS Code and the agent-sandbox command line in the same folder.',
  ].join('\n');
}

/** One connection's calls, counted so that its sessions are closed only after they have settled. */
class Connection {
  private tools: FlagPolicyTools | undefined;
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly make: (scope: SessionScope) => FlagPolicyTools) {}

  caller(client: Implementation | undefined): McpCaller {
    this.tools ??= this.make({ kind: 'agent', key: connectionKey(client) });
    const tools = this.tools;
    return {
      call: (name, input, options) => {
        const call = tools.call(name, input, options);
        this.pending.add(call);
        void call.catch(() => undefined).finally(() => this.pending.delete(call));
        return call;
      },
    };
  }

  /**
   * Closes the connection's own sessions at once (a call still running in one ends with it), then
   * again once every call has settled, for a session a call was opening meanwhile; their sandbox_ids.
   */
  async end(): Promise<string[]> {
    if (!this.tools) return [];
    const first = await this.tools.service.closeDefaultScope();
    await Promise.allSettled([...this.pending]);
    const late = await this.tools.service.closeDefaultScope();
    // Work after a result (a cut output saved in a named session, which stays) ends before the process.
    await this.tools.service.settled();
    // Interpreters in named sessions (which stay) end with the connection that started them.
    await this.tools.service.closeInterpreters();
    return [...first, ...late].map(sandboxIdOf);
  }
}

export async function mcpCommand(engine: SandboxEngine, context: CommandContext, folder: string): Promise<number> {
  const settings = toolSettings(context.args.values, folder);
  const log = (message: string) => process.stderr.write(`agent-sandbox mcp: ${context.secrets.redact(message)}\n`);
  const label = engineLabel(engine.kind, engine.capabilities);
  const serving = `${folder} (${flagsText(settings)}; engine ${label})`;

  /** A new connection: its own server, scope and calls; `end` stops its calls and closes its own sandboxes. */
  const connect = () => {
    const ended = new AbortController();
    const connection = new Connection((scope) =>
      flagPolicyTools({
        engine,
        folder,
        settings,
        client: 'mcp',
        command: COMMAND,
        withFlag: `start ${COMMAND} with`,
        // One per process, as the CLI's other commands: every connection's results are redacted.
        secrets: context.secrets,
        defaultScope: scope,
        log: (_level, message) => log(message),
        // Two connections never share their default sandboxes: not even by naming the other's.
        notOurs: (other) =>
          other.kind === 'agent' && other.key?.startsWith('mcp-') && other.key !== scope.key
            ? `Sandbox agent:${other.key}/… belongs to another MCP connection: its files and processes are not this connection's to use or close.`
            : undefined,
      }),
    );
    const server = mcpConnection({
      version,
      instructions: instructions(settings, folder, label),
      network: settings.network.mode !== 'off',
      flags: flagsText(settings),
      caller: (client) => connection.caller(client),
      signal: AbortSignal.any([context.signal, ended.signal]),
      log,
    });
    return {
      server,
      end: async () => {
        ended.abort(new Error('The MCP connection ended.'));
        const sessions = await connection.end();
        if (sessions.length) log(`closed the connection's sandboxes: ${sessions.join(', ')}`);
      },
    };
  };

  const http = context.args.values.http;
  if (http !== undefined) return serveOverHttp(http, connect, context.signal, serving, log);

  const { server, end } = connect();
  // A malformed request is answered (the SDK would drop it and its caller wait forever), and a line
  // the transport refuses, such as one over its size limit, is said on stderr.
  const requests = process.stdin.pipe(answerInvalidRequests((line) => process.stdout.write(line)));
  const transport = new StdioServerTransport(requests, process.stdout);
  server.onerror = (error) =>
    log(`a message from the client was not understood: ${errorMessage(error).replace(/\s+/g, ' ').slice(0, 500)}`);
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  // The client closing our standard input ends the connection; so do Ctrl-C and SIGTERM (main aborts
  // context.signal), and a client that stops reading (EPIPE): its answers are lost, its sandboxes must not be.
  let closing = false;
  const close = () => {
    if (closing) return;
    closing = true;
    void transport.close().catch(() => undefined);
  };
  process.stdin.once('end', close);
  process.stdout.on('error', (error) => {
    if (!closing) log(`standard output failed (${errorMessage(error)}): ending the connection`);
    close();
  });
  context.signal.addEventListener('abort', close, { once: true });
  await server.connect(transport);
  log(`serving ${serving} on standard input and output`);
  await closed;
  // Nothing more is read: a client that keeps our stdin open must not keep this process alive.
  process.stdin.unpipe(requests);
  process.stdin.pause();
  await end();
  return 0;
}

/** --http PORT: Streamable HTTP on 127.0.0.1 until Ctrl-C or SIGTERM, with a bearer token (AGENT_SANDBOX_MCP_TOKEN, else a random one). */
async function serveOverHttp(
  portText: string,
  connect: () => HttpConnection,
  signal: AbortSignal,
  serving: string,
  log: (message: string) => void,
): Promise<number> {
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw usageError(`--http takes a port number (0 picks a free one), not "${portText}".`);
  const fixed = process.env.AGENT_SANDBOX_MCP_TOKEN;
  if (fixed !== undefined && fixed.length < 16)
    throw usageError('AGENT_SANDBOX_MCP_TOKEN must be at least 16 characters; unset it for a random token.');
  const token = fixed ?? randomBytes(24).toString('base64url');
  const server = await serveHttp({ port, token, connect, log });
  log(`serving ${serving} at ${server.url} (127.0.0.1 only)`);
  log(
    fixed !== undefined
      ? 'bearer token: the value of AGENT_SANDBOX_MCP_TOKEN'
      : `bearer token: ${token}  (send it as Authorization: Bearer <token>; set AGENT_SANDBOX_MCP_TOKEN to choose one)`,
  );
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.close();
  return 0;
}
