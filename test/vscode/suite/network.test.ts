// The network allowlist in the real host: the user's settings allow one port of this machine; an
// agent's sandbox asks in our dialog naming it, a call's result says what it reached and what was
// refused, and the Sandbox panel shows both decisions. Traffic goes only to a server this test
// starts on 127.0.0.1.
import * as assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as vscode from 'vscode';
import { invoke, invokeAllowing, lookUntil, screenshot } from './helpers';

suite('Network allowlist', () => {
  let server: Server;
  let port: number;
  const config = () => vscode.workspace.getConfiguration('agentSandbox');

  suiteSetup(async () => {
    await vscode.extensions.getExtension('agent-sandbox.agent-sandbox')!.activate();
    server = createServer((_request, response) => response.end('hello from the host\n'));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
    await config().update('network.allow', [`localhost:${port}`], vscode.ConfigurationTarget.Global);
    await config().update('network.mode', 'allowlist', vscode.ConfigurationTarget.Global);
  });

  suiteTeardown(async () => {
    await invoke('sandbox_close', { sandbox_id: 'allowlisted' }).catch(() => undefined);
    await config().update('network.mode', undefined, vscode.ConfigurationTarget.Global);
    await config().update('network.allow', undefined, vscode.ConfigurationTarget.Global);
    await new Promise((done) => server.close(done));
  });

  test('asks naming the names, tells the call what it reached and what was refused, and the panel shows it', async function () {
    this.timeout(180_000);
    const opened = await invokeAllowing('Allow for This Sandbox', 'sandbox_open', {
      session: 'allowlisted',
      runtime: 'python',
    });
    assert.match(opened.asked, /reach the names on its network allowlist/);
    assert.match(opened.asked, new RegExp(`Network: only localhost:${port}`));
    assert.match(opened.text, new RegExp(`network: only localhost:${port}, through a proxy`));
    const fetch = (url: string) =>
      `import urllib.request, urllib.error\ntry:\n    print(urllib.request.urlopen("${url}", timeout=20).read().decode().strip())\nexcept urllib.error.HTTPError as e:\n    print(e.code, e.read().decode().strip())`;
    const reached = await invoke('sandbox_exec', {
      sandbox_id: 'allowlisted',
      code: `${fetch(`http://host.docker.internal:${port}/`)}\n${fetch('http://elsewhere.example/')}`,
    });
    assert.match(reached, /hello from the host/);
    assert.match(reached, /403 Agent Sandbox refused this connection: elsewhere\.example is not on the allowlist/);
    assert.match(
      reached,
      new RegExp(`Network: 1 connection through the allowlist \\(host\\.docker\\.internal:${port}\\)`),
    );
    assert.match(reached, /Network refused 1 connection: elsewhere\.example:80/);

    await vscode.commands.executeCommand('agentSandbox.showPanel');
    await vscode.commands.executeCommand('workbench.action.toggleMaximizedPanel');
    try {
      const seen = await lookUntil('panel', /elsewhere\.example:80 refused/, 'the refused connection in the panel');
      assert.match(seen.text, new RegExp(`host\\.docker\\.internal:${port} allowed \\(localhost:${port}\\)`));
      assert.match(seen.aria, /network: allowlist \(1\)/);
      await screenshot('panel-network-decisions');
    } finally {
      await vscode.commands.executeCommand('workbench.action.toggleMaximizedPanel');
    }
  });
});
