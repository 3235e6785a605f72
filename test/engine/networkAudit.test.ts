/**
 * The allowlist as the user and the agent see it, through the built command line on a real engine:
 * a tool result names the connections its call made and each refused name with its reason, and
 * `agent-sandbox log` gives the folder's tool calls and network decisions as JSON Lines. Traffic
 * goes only to a server this test starts on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { lookup } from 'node:dns/promises';
import { join } from 'node:path';
import { runCliText } from './cliRunner';
import { TEST_IMAGES, requireEngine } from './harness';

describe('the network allowlist in tool results and the audit log (real engine, command line)', function () {
  this.timeout(180_000);
  let server: Server;
  let port: number;
  let folder: string;
  let state: string;
  const env = () => ({
    AGENT_SANDBOX_ENGINE: 'docker',
    AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
    AGENT_SANDBOX_IMAGE_NODE: TEST_IMAGES.node,
    AGENT_SANDBOX_STATE_DIR: state,
  });
  const tool = (input: object, ...names: string[]) =>
    runCliText(
      [
        'tool',
        'sandbox_exec',
        '--folder',
        folder,
        '--allow-domain',
        `localhost:${port}`,
        ...names.flatMap((name) => ['--allow-domain', name]),
        JSON.stringify(input),
      ],
      { env: env() },
    );
  const fetch = (url: string) =>
    `import urllib.request, urllib.error\ntry:\n    print(urllib.request.urlopen("${url}", timeout=20).read().decode().strip())\nexcept urllib.error.HTTPError as e:\n    print(e.code, e.read().decode().strip())`;

  before(async function () {
    await requireEngine(this);
    server = createServer((_request, response) => response.end('hello from the test server\n'));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
    folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-network-audit-'));
    state = mkdtempSync(join(tmpdir(), 'agent-sandbox-network-state-'));
  });
  after(async () => {
    await runCliText(['close', '--all', '--folder', folder], { env: env() });
    await new Promise((done) => server?.close(done));
  });

  it('says which names a call reached and which it was refused, and why', async () => {
    const allowed = await tool({ code: fetch(`http://host.docker.internal:${port}/`) });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stdout, /hello from the test server/);
    assert.match(
      allowed.stdout,
      new RegExp(`Network: 1 connection through the allowlist \\(host\\.docker\\.internal:${port}\\)\\.`),
    );
    const refused = await tool({ code: fetch('http://not-listed.example/') });
    assert.match(
      refused.stdout,
      /403 Agent Sandbox refused this connection: not-listed\.example is not on the allowlist/,
    );
    assert.match(
      refused.stdout,
      /Network refused 1 connection: not-listed\.example:80 \(not-listed\.example is not on the allowlist\)\. Retrying will not help/,
    );
  });

  it('agent-sandbox log gives the tool calls and the network decisions, oldest first', async () => {
    const log = await runCliText(['log', '--folder', folder], { env: env() });
    assert.equal(log.code, 0, log.stderr);
    const records = log.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const tools = records.filter((record) => record.kind === 'tool');
    assert.deepEqual(
      tools.map((record) => [record.tool, record.client, record.folder, record.sandboxId]),
      [
        ['sandbox_exec', 'cli', folder, 'default'],
        ['sandbox_exec', 'cli', folder, 'default'],
      ],
    );
    const network = records.filter((record) => record.kind === 'network');
    assert.deepEqual(
      network.map((record) => [record.sandboxId, record.host, record.allowed]),
      [
        ['default', 'host.docker.internal', true],
        ['default', 'not-listed.example', false],
      ],
    );
    assert.ok((network[0]!.bytesReceived as number) > 0);
    const times = records.map((record) => record.at as string);
    assert.deepEqual(times, [...times].sort(), 'oldest first');
  });

  it('names a tunnel a call made and closed (CONNECT, decided when the connection ends)', async () => {
    // A CONNECT tunnel is decided when both its ends have closed: the sandbox's close reaches the
    // proxy through the relay, another process, so the call waits for it before it reads the log.
    const tunnel = [
      'import http.client, os',
      'connection = http.client.HTTPConnection("127.0.0.1", int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1]), timeout=20)',
      `connection.set_tunnel("host.docker.internal", ${port})`,
      'connection.request("GET", "/")',
      'print(connection.getresponse().read().decode().strip())',
      'connection.close()',
    ].join('\n');
    for (const input of [{ code: tunnel }, { command: `python3 -c '${tunnel}'` }]) {
      const answer = await tool(input);
      assert.equal(answer.code, 0, answer.stderr);
      assert.match(answer.stdout, /hello from the test server/);
      assert.match(
        answer.stdout,
        new RegExp(`Network: 1 connection through the allowlist \\(host\\.docker\\.internal:${port}\\)\\.`),
        JSON.stringify(input),
      );
    }
  });

  it('refuses a listed name that resolves to this machine (DNS rebinding), naming the address', async () => {
    // This machine's own name resolves to a loopback address through /etc/hosts: a name an attacker
    // would point at 127.0.0.1, with no DNS server needed.
    const name = hostname().toLowerCase();
    const addresses = (await lookup(name, { all: true })).map((entry) => entry.address);
    assert.ok(
      addresses.some((address) => /^127\.|^::1$/.test(address)),
      `${name} resolves to ${addresses.join(', ')}`,
    );
    // A new session, opened with this name on its allowlist.
    await runCliText(['close', '--all', '--folder', folder], { env: env() });
    const answer = await tool({ code: fetch(`http://${name}:${port}/`) }, name);
    assert.match(
      answer.stdout,
      new RegExp(
        `403 Agent Sandbox refused this connection: ${name} resolves to (127\\.[\\d.]+|::1), an internal address`,
      ),
    );
    assert.doesNotMatch(answer.stdout, /hello from the test server/);
  });
});
