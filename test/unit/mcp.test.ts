// The MCP server's pure parts: the tool list (one source with the LM tools), the connection's scope
// key, the settings VS Code passes to the server it offers, and when an MCP connection's session is
// an orphan.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { connectionKey } from '../../src/cli/mcpCommand';
import type { SessionInfo } from '../../src/core/engine/engine';
import { orphanReason, type OrphanCheck } from '../../src/core/sessions/orphans';
import { parseSandboxId } from '../../src/core/sessions/sessions';
import { parseSettings } from '../../src/core/spec/settings';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { settingsInvocation } from '../../src/core/spec/settingsFlags';
import { parseCommandLine } from '../../src/cli/args';
import { toolSettings } from '../../src/cli/toolCommand';
import { mcpToolList } from '../../src/mcp/mcpTools';

describe('MCP server', () => {
  it('lists the LM tools of the manifest: names, descriptions and schemas from one list', () => {
    const manifest = JSON.parse(readFileSync(resolve(__dirname, '../../package.json'), 'utf8')) as {
      contributes: { languageModelTools: { name: string; modelDescription: string; inputSchema: unknown }[] };
    };
    const tools = mcpToolList({ network: false });
    assert.deepEqual(
      tools.map((tool) => [tool.name, tool.description, tool.inputSchema]),
      manifest.contributes.languageModelTools.map((tool) => [tool.name, tool.modelDescription, tool.inputSchema]),
    );
    assert.ok(tools.every((tool) => tool.annotations?.openWorldHint === false));
    assert.equal(
      mcpToolList({ network: true }).find((tool) => tool.name === 'sandbox_exec')?.annotations?.openWorldHint,
      true,
    );
  });

  it('gives each connection a scope key that is a valid sandbox_id part, from the client name', () => {
    const key = connectionKey({ name: 'Claude Code (VS Code) ÷ ünïcode', version: '1' });
    assert.match(key, /^mcp-claude-code-vs-code-n-code-[0-9a-f]{6}$/);
    assert.deepEqual(parseSandboxId(`agent:${key}/default`).scope, { kind: 'agent', key });
    assert.match(connectionKey(undefined), /^mcp-client-[0-9a-f]{6}$/);
    assert.match(connectionKey({ name: '!!!', version: '1' }), /^mcp-client-[0-9a-f]{6}$/);
    assert.match(connectionKey({ name: 'x'.repeat(200), version: '1' }), /^mcp-x{40}-[0-9a-f]{6}$/);
    assert.notEqual(connectionKey(undefined), connectionKey(undefined));
  });

  it('starts the server VS Code offers with exactly the policy and limits of the settings', () => {
    const folder = '/home/me/project';
    const settings = parseSettings({
      workspaceAccess: 'ro',
      network: { mode: 'full' },
      configWritesAllowedIn: [folder],
      engine: 'auto',
      images: { python: 'my/python:1' },
      timeoutSeconds: 90,
      limits: { memory: '1g', cpus: 2, pids: 128, disk: '2g', inodes: 5000 },
    });
    const { args, env } = settingsInvocation(settings, folder);
    assert.deepEqual(env, {
      AGENT_SANDBOX_ENV_PREFIXES: 'AGENT_SANDBOX_ENV_,STN_CODE_',
      AGENT_SANDBOX_IMAGE_PYTHON: 'my/python:1',
    });
    // Read back by the CLI's own flag parsing, the settings come out the same.
    const parsed = parseCommandLine(['mcp', ...args]);
    assert.equal(parsed.values.engine, 'docker', '"auto" never falls back to the virtual engine unasked');
    const back = toolSettings(parsed.values, folder);
    assert.equal(back.workspaceAccess, 'ro');
    assert.deepEqual(back.network, settings.network);
    assert.deepEqual(back.configWritesAllowedIn, [folder]);
    assert.equal(back.timeoutSeconds, 90);
    assert.deepEqual(back.limits, settings.limits);
    const plain = settingsInvocation(parseSettings({}), folder).args;
    assert.deepEqual(plain.slice(0, 4), ['--folder', folder, '--workspace', 'none']);
    assert.ok(!plain.includes('--network') && !plain.includes('--allow-config-writes'));
    // An allowlist, with the user's own host names, reaches the server as its flags and comes back whole.
    const listed = parseSettings({
      network: { mode: 'allowlist', allow: ['pypi.org', '*.pythonhosted.org'], hosts: { 'pypi.internal': '10.0.0.5' } },
    });
    const listedArgs = settingsInvocation(listed, folder).args;
    assert.ok(!listedArgs.includes('--network'));
    assert.deepEqual(toolSettings(parseCommandLine(['mcp', ...listedArgs]).values, folder).network, listed.network);
  });

  it("an MCP connection's session is an orphan once its server process is gone, whatever its folder", () => {
    const spec = resolveSpec({ mode: 'code' });
    const session: SessionInfo = {
      id: 'c0ffee',
      name: 'default',
      engine: 'docker',
      mode: 'code',
      runtime: 'python',
      image: 'i',
      spec,
      workspaceAccess: 'none',
      workspaceFolder: '/somewhere',
      scope: { kind: 'agent', key: 'mcp-x-123456' },
      client: 'mcp',
      network: false,
      createdAt: new Date().toISOString(),
      state: 'running',
      notices: [],
      owner: { pid: 777, host: 'here', pooled: false },
    };
    const check = (alive: boolean): OrphanCheck => ({
      now: Date.now(),
      graceMs: 1000,
      lease: () => undefined,
      folderExists: () => true,
      host: 'here',
      processAlive: () => alive,
    });
    assert.equal(orphanReason(session, check(true)), undefined);
    assert.equal(
      orphanReason(session, check(false)),
      "it is an MCP connection's session of process 777, which is gone",
    );
    const { owner: _owner, ...named } = session;
    assert.equal(orphanReason({ ...named, client: 'mcp' }, check(false)), undefined, "a named one is the folder's");
  });
});
