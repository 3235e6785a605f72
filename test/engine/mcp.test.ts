/**
 * `agent-sandbox mcp` as MCP clients see it: the built CLI started as a child process and driven by
 * the SDK's own Client over stdio, against the real engine. The tools are the LM tools (one list);
 * bad input is a protocol error, a failing environment an isError result; the policy is the flags';
 * each connection has its own default sandbox, gone when the connection ends.
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { CLI, runCliText } from './cliRunner';
import { startEngineProxy } from './engineProxy';
import { TEST_IMAGES, requireEngine, testEngine } from './harness';
import { resultText, startMcp, startRawMcp, toolCall, type McpServerProcess, type RawMcpServer } from './mcpHarness';
import { PNG_MAKER } from './pngMaker';
import { seeded } from '../seed';
import { GENERATOR, generatorCommand, type Shape } from '../vscode/suite/outputShapes';

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

  it('beyond its flags, asks a client that can ask its user: a no refuses, a yes allows that one call', async () => {
    // The folder belongs to whoever runs code in the sandbox: the user, or 1000 when the tests run as root.
    if (process.getuid?.() === 0) chownSync(folder, 1000, 1000);
    const opened = await runCliText(
      ['open', '--folder', folder, '--session', 'wide', '--workspace', 'rw', '--runtime', 'bash'],
      { stdin: '' },
    );
    assert.equal(opened.code, 0, opened.stderr);
    const questions: string[] = [];
    let answer = false;
    const { client } = await start(folder, [], {
      ask: (request) => {
        questions.push(request.params.message);
        return { action: 'accept', content: { allow: answer } };
      },
    });
    const call = {
      name: 'sandbox_exec',
      arguments: { sandbox_id: 'wide', command: 'echo made > /workspace/made.txt' },
    };
    const declined = await client.callTool(call);
    assert.equal(declined.isError, true);
    assert.match(resultText(declined), /more than agent-sandbox mcp allows \(--workspace none, no --network\)/);
    assert.equal(questions.length, 1);
    assert.match(
      questions[0]!,
      /sandbox_exec would use sandbox "wide", which can read your workspace folder and change files in your workspace folder: more than agent-sandbox mcp allows \(--workspace none, no --network\)\. Allow this one call\?/,
    );
    assert.ok(!existsSync(join(folder, 'made.txt')), 'nothing was written on a no');
    answer = true;
    const allowed = await client.callTool(call);
    assert.equal(allowed.isError, undefined, resultText(allowed));
    assert.equal(readFileSync(join(folder, 'made.txt'), 'utf8'), 'made\n');
    answer = false;
    const again = await client.callTool(call);
    assert.equal(again.isError, true, 'the yes was for that one call');
    assert.equal(questions.length, 3);
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
    // Not even by naming it, nor by its container id.
    const firstId = /agent:mcp-first-[0-9a-f]{6}\/default/.exec(
      resultText(await first.client.callTool({ name: 'sandbox_open', arguments: {} })),
    )?.[0];
    assert.ok(firstId);
    const container = (await sessionsOf(folder)).find((session) => session.scope.key?.startsWith('mcp-first-'))!.id;
    for (const sandboxId of [firstId, container.slice(0, 12)]) {
      for (const call of [
        { name: 'sandbox_exec', arguments: { sandbox_id: sandboxId, command: 'cat mine.txt' } },
        { name: 'sandbox_close', arguments: { sandbox_id: sandboxId } },
      ]) {
        const refused = await second.client.callTool(call);
        assert.equal(refused.isError, true, `${call.name} ${sandboxId}: ${resultText(refused)}`);
        assert.match(resultText(refused), /belongs to another MCP connection/);
      }
    }
    assert.ok(
      (await sessionsOf(folder)).some((session) => session.id === container),
      'still open',
    );
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
    assert.match(server.stderr(), /closed the connection's sandboxes: agent:mcp-mcp-test-[0-9a-f]{6}\/default/);
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
    assert.match(server.stderr(), /closed the connection's sandboxes: agent:mcp-raw-[0-9a-f]{6}\/default/);
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

  it('over Streamable HTTP on 127.0.0.1: a bearer token, a Host check, and a session that ends with its sandbox', async () => {
    const child = spawn(process.execPath, [CLI, 'mcp', '--folder', folder, '--http', '0'], {
      env: { ...process.env, AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash, AGENT_SANDBOX_POOL_SIZE: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const { url, token } = await until('the server to print its address and token', async () => {
        const address = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr)?.[1];
        const secret = /bearer token: (\S+)/.exec(stderr)?.[1];
        return address && secret ? { url: address, token: secret } : undefined;
      });
      const unauthorized = await fetch(url, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(unauthorized.status, 401);
      // fetch will not send another Host header: node:http will, as a browser tricked by DNS rebinding would.
      const rebound = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            host: 'evil.example',
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        });
        request.on('response', (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on('error', reject);
        request.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
          }),
        );
      });
      assert.equal(rebound, 403, 'a request for another host name (DNS rebinding) is refused');

      const client = new Client({ name: 'http-test', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      });
      await client.connect(transport);
      assert.equal((await client.listTools()).tools.length, 10);
      const ran = await client.callTool({ name: 'sandbox_exec', arguments: { command: 'echo over http' } });
      assert.match(resultText(ran), /over http/);
      assert.equal((await sessionsOf(folder)).length, 1);
      await transport.terminateSession();
      await client.close();
      await until("the session's sandbox to go", async () => ((await sessionsOf(folder)).length ? undefined : true));
      // Said once the close has returned, which may trail the container's removal (Podman's does).
      await until('the server to say so', async () =>
        /closed the connection's sandboxes: agent:mcp-http-test-[0-9a-f]{6}\/default/.test(stderr) ? true : undefined,
      );
    } finally {
      child.kill('SIGTERM');
      assert.equal(await exited, 0, stderr);
    }
    assert.equal(stdout, '', 'nothing but logs, on stderr');
  });

  it('no output shape hangs a call over MCP: 5 MiB on one line, base64, ANSI with carriage returns, on both streams', async function () {
    const { seed, hint } = seeded();
    console.log(`      ${hint}`);
    const { client } = await start(folder);
    await client.callTool({
      name: 'sandbox_fs_write',
      arguments: { files: [{ path: 'gen.py', content: GENERATOR }] },
    });
    const cases: [Shape, number, 'stdout' | 'stderr'][] = [
      ['run', 5 * 1024 * 1024, 'stdout'],
      ['base64', 5 * 1024 * 1024, 'stderr'],
      ['json', 1024 * 1024, 'stdout'],
      ['ansi', 1024 * 1024, 'stderr'],
      ['lines', 100_000, 'stdout'],
    ];
    for (const [shape, size, stream] of cases) {
      const result = await client.callTool(
        { name: 'sandbox_exec', arguments: { command: generatorCommand('gen.py', shape, size, stream, 3, seed) } },
        undefined,
        { timeout: 240_000 },
      );
      const parts = (result.content as { text: string }[]).map((part) => part.text);
      const what = `${shape} ${size} on ${stream} (${hint})`;
      assert.match(parts[0]!, /^failed · exit code 3 /, `${what}: the headline first`);
      assert.ok(
        parts.every((part) => part.length <= 8_000),
        `${what}: parts a client shows whole`,
      );
      assert.ok(parts.join('').length <= 48_000 + 1_000, `${what}: within the result budget`);
    }
  });

  it('a cancelled request (notifications/cancelled) stops the sandboxed process', async () => {
    const { client } = await start(folder);
    await client.callTool({ name: 'sandbox_exec', arguments: { command: 'true' } });
    const [session] = await sessionsOf(folder);
    const sleeping = () =>
      engine.docker
        .getContainer(session!.id)
        .top()
        .then((top) =>
          ((top as { Processes?: string[][] }).Processes ?? []).some((row) => row.join(' ').includes('sleep 97')),
        );
    const controller = new AbortController();
    const call = client
      .callTool({ name: 'sandbox_exec', arguments: { command: 'sleep 97' } }, undefined, { signal: controller.signal })
      .catch((error: unknown) => error);
    await until('the command to run', async () => ((await sleeping()) ? true : undefined));
    controller.abort(new Error('the user stopped the request'));
    assert.ok((await call) instanceof Error);
    await until('the process to stop', async () => ((await sleeping()) ? undefined : true));
    // The session lives on for the next call.
    assert.match(
      resultText(await client.callTool({ name: 'sandbox_exec', arguments: { command: 'echo still here' } })),
      /still here/,
    );
  });

  it('output shown in a terminal by the client cannot drive it: no escape sequence from the sandbox reaches it', async () => {
    const { client } = await start(folder);
    const result = await client.callTool({
      name: 'sandbox_exec',
      arguments: {
        command:
          "printf '\\033]52;c;cHduZWQ=\\007\\033]0;title\\007\\033[2J\\033[31mred\\033[0m bell\\007 end\\n' | tee out.txt",
      },
    });
    const text = resultText(result);
    assert.match(text, /red bell\u2407 end/);
    assert.doesNotMatch(text, /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/, 'no control character but tab and line breaks');
    const read = resultText(await client.callTool({ name: 'sandbox_fs_read', arguments: { path: 'out.txt' } }));
    assert.match(read, /red bell\u2407 end/);
    assert.doesNotMatch(read, /\x1b/);
  });

  it("keeps a Python interpreter's state between calls of a connection (sandbox_exec with code)", async () => {
    const { client } = await start(folder);
    await client.callTool({ name: 'sandbox_exec', arguments: { code: 'rows = [i * i for i in range(10)]' } });
    const summed = resultText(await client.callTool({ name: 'sandbox_exec', arguments: { code: 'sum(rows)' } }));
    assert.match(summed, /^python 3\.[\d.]+ \(persistent\) .*\nvalue:\n285$/);
  });

  it('returns a picture the code made as MCP image content', async () => {
    const { client } = await start(folder);
    await client.callTool({ name: 'sandbox_exec', arguments: { code: PNG_MAKER } });
    const result = await client.callTool({ name: 'sandbox_exec', arguments: { code: 'Picture(64, 48)' } });
    const content = result.content as { type: string; data?: string; mimeType?: string; text?: string }[];
    const image = content.find((part) => part.type === 'image');
    assert.ok(image, JSON.stringify(content).slice(0, 500));
    assert.equal(image.mimeType, 'image/png');
    const png = Buffer.from(image.data!, 'base64');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [64, 48]);
    assert.equal(content[0]!.type, 'text', 'the text, headline first, comes before the image');
  });
});
