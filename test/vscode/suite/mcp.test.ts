// The MCP server VS Code is offered when the user turns it on (agentSandbox.mcp.enabled): started as
// VS Code starts a stdio server definition, driven by the MCP SDK's client, with the policy of the
// settings; its sandbox shows in the panel like any other, tagged MCP, and goes when it disconnects.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import * as vscode from 'vscode';
import { lookUntil, setWorkspaceAccess } from './helpers';

interface Api {
  mcpServerDefinitions(): vscode.McpStdioServerDefinition[];
}

suite('MCP server for VS Code', () => {
  let api: Api;
  const config = () => vscode.workspace.getConfiguration('agentSandbox');
  suiteSetup(async () => {
    api = (await vscode.extensions.getExtension('agent-sandbox.agent-sandbox')!.activate()) as Api;
  });
  suiteTeardown(async () => {
    await config().update('mcp.enabled', undefined, vscode.ConfigurationTarget.Global);
    await setWorkspaceAccess('none');
  });

  test('is offered only when turned on, with the policy of the settings', async () => {
    assert.deepEqual(api.mcpServerDefinitions(), [], 'off by default');
    await config().update('mcp.enabled', true, vscode.ConfigurationTarget.Global);
    await setWorkspaceAccess('ro');
    const [definition, ...more] = api.mcpServerDefinitions();
    assert.ok(definition, 'one server once turned on');
    assert.equal(more.length, 0);
    assert.equal(definition.label, 'Agent Sandbox');
    const folder = fs.realpathSync(vscode.workspace.workspaceFolders![0]!.uri.fsPath);
    const args = definition.args.join(' ');
    assert.match(args, /dist\/cli\.js mcp --folder /);
    assert.ok(args.includes(`--folder ${folder} --workspace ro`), args);
    assert.doesNotMatch(args, /--network|--allow-config-writes/);
  });

  test('runs as VS Code would start it; its sandbox shows in the panel tagged MCP and goes when it disconnects', async function () {
    this.timeout(120_000);
    const [definition] = api.mcpServerDefinitions();
    assert.ok(definition);
    const transport = new StdioClientTransport({
      command: definition.command,
      args: definition.args,
      env: { ...(process.env as Record<string, string>), ...(definition.env as Record<string, string>) },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'vscode-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = (await client.callTool({
        name: 'sandbox_exec',
        arguments: { command: 'ls /workspace && echo from-mcp' },
      })) as { content: { type: string; text?: string }[] };
      const text = result.content.map((part) => part.text ?? '').join('');
      assert.match(text, /from-mcp/);
      const sandboxId = /agent:mcp-vscode-test-[0-9a-f]{6}\/default/.exec(text)?.[0];
      assert.ok(sandboxId, text);
      await vscode.commands.executeCommand('agentSandbox.showPanel');
      await lookUntil('panel', /status: connected/, 'the engine connected in the panel');
      const seen = await lookUntil(
        'panel',
        new RegExp(`listitem "Session ${sandboxId}, `),
        'the MCP sandbox in the panel',
      );
      const card = seen.aria.split('\n').filter((line) => line.includes(sandboxId) || /MCP/.test(line));
      assert.ok(
        card.some((line) => /\bMCP\b/.test(line)),
        `the card is tagged MCP:\n${seen.aria}`,
      );
      await client.close();
      await lookUntil(
        'panel',
        /^(?![\s\S]*agent:mcp-vscode-test-)/,
        'the MCP sandbox gone from the panel once the client disconnected',
      );
    } finally {
      await client.close().catch(() => undefined);
    }
  });
});
