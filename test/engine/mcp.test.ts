/**
 * `agent-sandbox mcp` as MCP clients see it: the built CLI started as a child process and driven by
 * the SDK's own Client over stdio, against the real engine. The tools are the LM tools (one list);
 * bad input is a protocol error, a failing environment an isError result; the policy is the flags';
 * each connection has its own default sandbox, gone when the connection ends.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { runCliText } from './cliRunner';
import { startEngineProxy } from './engineProxy';
import { requireEngine, testEngine } from './harness';
import { resultText, startMcp, startRawMcp, toolCall, type McpServerProcess, type RawMcpServer } from './mcpHarness';

const engine = testEngine();

/** The sessions the engine holds for a folder (every scope), as the test sees them. */
async function sessionsOf(folder: string) {
  return engine.list({ workspaceFolder: folder });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, attempts = 600): Promise<T> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('agent-sandbox mcp (the SDK client over stdio, real engine)', function () {
  this.timeout(180_000);
  let folder: string;
  const servers: McpServerProcess[] = [];
  const raws: RawMcpServer[] = [];
  const startRaw = async (...args: Parameters<typeof startRawMcp>) => {
    const server = await startRawMcp(...args);
    raws.push(server);
    return server;
  };
  const start = async (...args: Parameters<typeof startMcp>) => {
    const server = await startMcp(...args);
    servers.push(server);
    return server;
  };

  before(async function () {
    await requireEngine(this);
  });
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-mcp-'));
    chmodSync(folder, 0o755); // readable by the sandbox user, as a project folder is
    writeFileSync(join(folder, 'data.txt'), 'from the host\n', { mode: 0o644 });
  });
  afterEach(async () => {
    await Promise.allSettled(servers.splice(0).map((server) => server.close()));
    for (const raw of raws.splice(0)) {
      raw.child.stdin.end();
      await raw.exited;
    }
    for (const session of await engine.list({ includeCompute: true }))
      if (session.workspaceFolder === folder) await engine.remove(session.id);
    rmSync(folder, { recursive: true, force: true });
  });
  after(() => engine.dispose());

  it('lists every tool with the schema and description of the LM tools manifest', async () => {
    const { client } = await start(folder);
    const { tools } = await client.listTools();
    const manifest = JSON.parse(readFileSync(resolve(__dirname, '../../package.json'), 'utf8')) as {
      contributes: { languageModelTools: { name: string; modelDescription: string; inputSchema: unknown }[] };
    };
    const lm = manifest.contributes.languageModelTools;
    assert.deepEqual(
      tools.map((tool) => tool.name),
      lm.map((tool) => tool.name),
    );
    for (const tool of tools) {
      const twin = lm.find((entry) => entry.name === tool.name)!;
      assert.deepEqual(tool.inputSchema, twin.inputSchema, `${tool.name}: the same input schema`);
      assert.equal(tool.description, twin.modelDescription, `${tool.name}: the same description`);
    }
    assert.equal(tools.find((tool) => tool.name === 'sandbox_fs_read')?.annotations?.readOnlyHint, true);
    assert.equal(tools.find((tool) => tool.name === 'sandbox_fs_delete')?.annotations?.destructiveHint, true);
    const instructions = client.getInstructions() ?? '';
    assert.match(instructions, /--workspace none, no --network/);
  });

  it('runs code: the headline and output come back as text, the exit code in it', async () => {
    const { client } = await start(folder);
    const ok = await client.callTool({ name: 'sandbox_run', arguments: { code: 'print(6 * 7)' } });
    assert.equal(ok.isError, undefined, resultText(ok));
    assert.match(resultText(ok), /exit code 0/);
    assert.match(resultText(ok), /42/);
    const failed = await client.callTool({
      name: 'sandbox_run',
      arguments: { code: 'import sys\nprint("x" * 300000)\nsys.exit(3)' },
    });
    const parts = (failed.content as { text: string }[]).map((part) => part.text);
    assert.match(parts[0]!, /exit code 3/, 'the headline is in the first part');
    assert.ok(
      parts.every((part) => part.length <= 8_000),
      'no part is longer than a client shows',
    );
  });

  it("open, write, exec, read, list, delete and close: one round trip in the connection's own sandbox", async () => {
    const { client } = await start(folder);
    const opened = resultText(await client.callTool({ name: 'sandbox_open', arguments: { runtime: 'bash' } }));
    const sandboxId = /agent:mcp-mcp-test-[0-9a-f]{6}\/default/.exec(opened)?.[0];
    assert.ok(sandboxId, `the default sandbox is this connection's: ${opened}`);
    await client.callTool({
      name: 'sandbox_fs_write',
      arguments: { files: [{ path: 'notes/a.txt', content: 'hello mcp\n' }] },
    });
    const cat = resultText(
      await client.callTool({
        name: 'sandbox_exec',
        arguments: { command: 'cat notes/a.txt' },
      }),
    );
    assert.match(cat, /hello mcp/);
    assert.match(
      resultText(await client.callTool({ name: 'sandbox_fs_read', arguments: { path: 'notes/a.txt' } })),
      /hello mcp/,
    );
    assert.match(
      resultText(await client.callTool({ name: 'sandbox_fs_list', arguments: { path: 'notes' } })),
      /a\.txt/,
    );
    await client.callTool({ name: 'sandbox_fs_delete', arguments: { path: 'notes/a.txt' } });
    const gone = await client.callTool({ name: 'sandbox_exec', arguments: { command: 'test -e notes/a.txt' } });
    assert.match(resultText(gone), /exit code 1/);
    const [session] = await sessionsOf(folder);
    assert.equal(session?.client, 'mcp');
    assert.equal(session?.owner?.pid, servers[0]!.pid, 'the session records the server process');
    assert.match(resultText(await client.callTool({ name: 'sandbox_close', arguments: {} })), /closed/i);
    assert.deepEqual(await sessionsOf(folder), []);
  });

  it('bad input is a protocol error naming the field; a missing file too', async () => {
    const { client } = await start(folder);
    await assert.rejects(
      client.callTool({ name: 'sandbox_run', arguments: { code: 5 } }),
      (error: unknown) =>
        error instanceof McpError && error.code === ErrorCode.InvalidParams && /code/.test(error.message),
    );
    await assert.rejects(
      client.callTool({ name: 'sandbox_nothing', arguments: {} }),
      (error: unknown) => error instanceof McpError && /Unknown tool "sandbox_nothing"/.test(error.message),
    );
    await assert.rejects(
      client.callTool({ name: 'sandbox_fs_read', arguments: { path: 'no/such/file' } }),
      (error: unknown) => error instanceof McpError && error.code === ErrorCode.InvalidParams,
    );
  });

  it('refuses a session opened with more than its flags allow, naming the flag; asks for less get less, said so', async () => {
    const opened = await runCliText(
      ['open', '--folder', folder, '--session', 'wide', '--workspace', 'rw', '--runtime', 'bash'],
      {
        stdin: '',
      },
    );
    assert.equal(opened.code, 0, opened.stderr);
    const { client } = await start(folder, ['--workspace', 'ro']);
    const read = await client.callTool({ name: 'sandbox_exec', arguments: { command: 'cat /workspace/data.txt' } });
    assert.match(resultText(read), /from the host/, 'the folder is mounted read-only, as --workspace ro allows');
    const refused = await client.callTool({
      name: 'sandbox_exec',
      arguments: { sandbox_id: 'wide', command: 'touch /workspace/x' },
    });
    assert.equal(refused.isError, true);
    assert.match(resultText(refused), /permission denied/);
    assert.match(resultText(refused), /more than agent-sandbox mcp allows \(--workspace ro, no --network\)/);
    assert.match(resultText(refused), /start agent-sandbox mcp with/);
    assert.equal(readFileSync(join(folder, 'data.txt'), 'utf8'), 'from the host\n');
    const less = resultText(
      await client.callTool({
        name: 'sandbox_open',
        arguments: { session: 'mine', runtime: 'bash', workspace_access: 'rw', network: true },
      }),
    );
    assert.match(less, /start agent-sandbox mcp with --workspace ro or rw/);
    assert.match(less, /start agent-sandbox mcp with --network/);
  });

  it("two connections never share their default sandbox; a named one is the folder's", async () => {
    const first = await start(folder, [], { name: 'first' });
    const second = await start(folder, [], { name: 'second' });
    await first.client.callTool({
      name: 'sandbox_fs_write',
      arguments: { files: [{ path: 'mine.txt', content: 'first' }] },
    });
    const seen = await second.client.callTool({ name: 'sandbox_exec', arguments: { command: 'ls' } });
    assert.doesNotMatch(resultText(seen), /mine\.txt/);
    await first.client.callTool({ name: 'sandbox_open', arguments: { session: 'shared', runtime: 'bash' } });
    await first.client.callTool({
      name: 'sandbox_fs_write',
      arguments: { sandbox_id: 'shared', files: [{ path: 's.txt', content: 'both' }] },
    });
    const shared = await second.client.callTool({
      name: 'sandbox_fs_read',
      arguments: { sandbox_id: 'shared', path: 's.txt' },
    });
    assert.match(resultText(shared), /both/);
    const ls = await runCliText(['ls', '--folder', folder, '--json'], { stdin: '' });
    const listed = (JSON.parse(ls.stdout) as { sessions: { name: string; scope: { key?: string } }[] }).sessions
      .map((session) => `${session.scope.key ?? 'workspace'}/${session.name}`)
      .sort();
    assert.equal(listed.length, 3, ls.stdout);
    assert.match(listed[0]!, /^mcp-first-[0-9a-f]{6}\/default$/);
    assert.match(listed[1]!, /^mcp-second-[0-9a-f]{6}\/default$/);
    assert.equal(listed[2], 'workspace/shared');
  });

  it('a client that disconnects mid-call: the call stops, its own sandbox is removed, the named one stays', async () => {
    const server = await start(folder);
    await server.client.callTool({ name: 'sandbox_open', arguments: { session: 'kept', runtime: 'bash' } });
    const running = server.client
      .callTool({ name: 'sandbox_exec', arguments: { command: 'sleep 120' } })
      .catch((error: unknown) => error);
    await until("the connection's sandbox", async () =>
      (await sessionsOf(folder)).find((session) => session.scope.kind === 'agent') ? true : undefined,
    );
    await server.close();
    assert.ok((await running) instanceof Error, 'the client sees the call end with the connection');
    await server.exited;
    const left = await sessionsOf(folder);
    assert.deepEqual(
      left.map((session) => session.name),
      ['kept'],
      `only the named sandbox is left; the server said: ${server.stderr()}`,
    );
    assert.match(server.stderr(), /closed this connection's sandboxes: agent:mcp-mcp-test-[0-9a-f]{6}\/default/);
  });

  it('a server killed outright leaves its sandbox to gc, which removes it from any folder', async () => {
    const server = await start(folder);
    await server.client.callTool({ name: 'sandbox_exec', arguments: { command: 'true' } });
    const [session] = await sessionsOf(folder);
    assert.ok(session);
    process.kill(server.pid, 'SIGKILL');
    await server.exited;
    const elsewhere = mkdtempSync(join(tmpdir(), 'agent-sandbox-gc-'));
    const gc = await runCliText(['gc', '--folder', elsewhere], { stdin: '' });
    assert.equal(gc.code, 0, gc.stderr);
    assert.match(gc.stdout, new RegExp(`an MCP connection's session of process ${server.pid}, which is gone`));
    assert.deepEqual(await sessionsOf(folder), []);
    rmSync(elsewhere, { recursive: true, force: true });
  });

  it('an engine that dies mid-call: the call returns an isError result that says what happened', async () => {
    const proxy = await startEngineProxy();
    const { client } = await start(folder, ['--engine', 'docker', '--engine-host', proxy.host]);
    await client.callTool({ name: 'sandbox_exec', arguments: { command: 'true' } });
    const running = client.callTool({ name: 'sandbox_exec', arguments: { command: 'sleep 60' } });
    const [session] = await sessionsOf(folder);
    await until('the command to run', async () => {
      const top = (await engine.docker.getContainer(session!.id).top()) as { Processes?: string[][] };
      return top.Processes?.some((row) => row.join(' ').includes('sleep 60')) ? true : undefined;
    });
    await proxy.kill();
    const result = await running;
    assert.equal(result.isError, true, resultText(result));
    assert.match(resultText(result), /^failed · engine/);
    const next = await client.callTool({ name: 'sandbox_run', arguments: { code: 'print(1)' } });
    assert.equal(next.isError, true);
    assert.match(resultText(next), /engine/i);
  });

  it('floods of output (one 5 MiB line, binary, ANSI escapes, a large file) come back bounded as agent-sandbox tool returns them', async () => {
    const { client } = await start(folder);
    const floods = [
      { name: 'sandbox_exec', arguments: { command: "head -c 5242880 /dev/zero | tr '\\0' a" } },
      { name: 'sandbox_exec', arguments: { command: 'head -c 3000000 /dev/urandom' } },
      {
        name: 'sandbox_exec',
        arguments: { command: 'yes "$(printf \'\\033[31mred\\033]0;title\\007\\033[2J\')" | head -c 2000000' },
      },
      { name: 'sandbox_run', arguments: { code: "print('b' * 5 * 1024 * 1024)" } },
      { name: 'sandbox_exec', arguments: { command: 'head -c 3000000 /dev/urandom | base64 -w0 > big.txt' } },
      { name: 'sandbox_fs_read', arguments: { path: 'big.txt', max_bytes: 5_000_000 } },
    ];
    for (const call of floods) {
      const result = await client.callTool(call);
      const parts = (result.content as { text: string }[]).map((part) => part.text);
      const total = parts.reduce((sum, part) => sum + part.length, 0);
      const what = JSON.stringify(call.arguments);
      assert.ok(
        parts.every((part) => part.length <= 8_000),
        `${what}: parts of at most 8,000 characters`,
      );
      assert.ok(total <= 48_000, `${what}: at most 48,000 characters in all, not ${total}`);
      assert.doesNotMatch(parts[0]!, /^failed/, `${what}: ${parts[0]}`);
    }
  });

  it('a client that stops reading (our stdout closed) ends the connection as closing stdin does: its own sandbox is removed', async () => {
    const server = await startRaw(folder);
    server.send(toolCall(1, 'sandbox_exec', { command: 'true' }));
    await server.response(1);
    assert.equal((await sessionsOf(folder)).length, 1, "the connection's sandbox is open");
    server.child.stdout.destroy();
    // Its answer cannot be written any more: the connection has ended, as when a client dies mid-call.
    server.send(toolCall(2, 'sandbox_exec', { command: 'sleep 1' }));
    await server.exited;
    assert.deepEqual(
      (await sessionsOf(folder)).map((session) => session.name),
      [],
      `nothing of the connection is left; the server said: ${server.stderr()}`,
    );
    assert.match(server.stderr(), /closed this connection's sandboxes: agent:mcp-raw-[0-9a-f]{6}\/default/);
  });

  it('a malformed request (params null, an object as progress token, JSON-RPC 1.0) is answered with Invalid Request, not left waiting', async () => {
    const server = await startRaw(folder);
    server.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: null });
    server.send(toolCall(2, 'sandbox_run', { code: 'print(2)' }, { progressToken: { not: 'a token' } }));
    server.send({ jsonrpc: '1.0', id: 3, method: 'ping' });
    server.send('not json at all');
    server.send(toolCall(4, 'sandbox_run', { code: 'print(6 * 7)' }));
    const expected = [/params: .*expected object, received null/, /params\._meta\.progressToken/, /jsonrpc: .*"2\.0"/];
    for (const [index, pattern] of expected.entries()) {
      const { error } = await server.response(index + 1);
      assert.equal(error?.code, ErrorCode.InvalidRequest, JSON.stringify(error));
      assert.match(error.message, pattern);
    }
    const { result } = await server.response(4);
    assert.match(resultText(result), /42/, 'the connection goes on');
    assert.match(server.stderr(), /not understood: .*not valid JSON/, 'what could not be answered is said on stderr');
  });
});
