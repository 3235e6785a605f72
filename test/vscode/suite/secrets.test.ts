// Secrets the user offers, in the real host: Add Secret keeps the value in SecretStorage and the
// binding in user settings; an agent's sandbox_open asks for them by name and the user confirms in
// our dialog, which names each binding; a bound secret's value reaches only the bound HTTPS server
// (on 127.0.0.1, with this test's own CA, under a name the settings map), the sandbox holds a
// placeholder, and neither the values nor the placeholder appear in any result, the panel or the
// exported audit log. The canary values are random and printed.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { testCertificates } from '../../engine/boundServers';
import { clickDialogButton, invoke, invokeAllowing, look, lookUntil } from './helpers';

const BOUND = `vsc-bound-${randomBytes(12).toString('hex')}`;
const INSIDE = `vsc-inside-${randomBytes(12).toString('hex')}`;

suite('Secrets offered by name', () => {
  const config = () => vscode.workspace.getConfiguration('agentSandbox');
  const seen: { server: string; headers: IncomingHttpHeaders }[] = [];
  let server: Server;
  let port: number;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-sandbox-vsc-secrets-'));

  suiteSetup(async function () {
    this.timeout(60_000);
    await vscode.extensions.getExtension('agent-sandbox.agent-sandbox')!.activate();
    process.stdout.write(`      canary values: bound ${BOUND}, inside ${INSIDE}\n`);
    const certs = testCertificates(work);
    // The proxy this window starts trusts the test's CA for the upstream, as the engine tests do.
    process.env.AGENT_SANDBOX_EGRESS_EXTRA_CA = certs.ca;
    server = createServer({ key: certs.key, cert: certs.cert }, (request, response) => {
      seen.push({ server: request.headers.host ?? '', headers: request.headers });
      response.end('hello from the bound server');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
    await config().update(
      'network.hosts',
      { 'api.bound.test': '127.0.0.1', 'other.test': '127.0.0.1' },
      vscode.ConfigurationTarget.Global,
    );
    await config().update('network.allow', ['other.test'], vscode.ConfigurationTarget.Global);
    await config().update('network.mode', 'allowlist', vscode.ConfigurationTarget.Global);
    // xterm's DOM renderer, so that the runner can read what the terminal shows.
    await vscode.workspace
      .getConfiguration('terminal.integrated')
      .update('gpuAcceleration', 'off', vscode.ConfigurationTarget.Global);
  });

  suiteTeardown(async () => {
    await invoke('sandbox_close', { sandbox_id: 'with-secrets' }).catch(() => undefined);
    for (const name of ['TOKEN', 'DB_PASSWORD']) {
      const removing = vscode.commands.executeCommand('agentSandbox.removeSecret', name);
      await clickDialogButton('Remove Secret').catch(() => undefined);
      await removing;
    }
    for (const key of ['network.mode', 'network.allow', 'network.hosts', 'secrets'])
      await config().update(key, undefined, vscode.ConfigurationTarget.Global);
    delete process.env.AGENT_SANDBOX_EGRESS_EXTRA_CA;
    await vscode.workspace
      .getConfiguration('terminal.integrated')
      .update('gpuAcceleration', undefined, vscode.ConfigurationTarget.Global);
    await new Promise((done) => server.close(done));
  });

  test('Add Secret asks the user to confirm when run with arguments, and keeps the binding in user settings', async function () {
    this.timeout(60_000);
    const declined = vscode.commands.executeCommand('agentSandbox.addSecret', {
      name: 'TOKEN',
      domains: ['api.bound.test'],
      value: BOUND,
    });
    assert.match(await clickDialogButton('Cancel'), /TOKEN → api\.bound\.test \(Authorization header\)/);
    assert.equal(await declined, undefined);
    assert.equal(config().inspect('secrets')?.globalValue, undefined, 'nothing was added');

    const added = vscode.commands.executeCommand('agentSandbox.addSecret', {
      name: 'TOKEN',
      domains: ['api.bound.test'],
      value: BOUND,
    });
    await clickDialogButton('Add Secret');
    assert.equal(await added, 'TOKEN');
    const inside = vscode.commands.executeCommand('agentSandbox.addSecret', {
      name: 'DB_PASSWORD',
      inside: true,
      value: INSIDE,
    });
    assert.match(await clickDialogButton('Add Secret'), /DB_PASSWORD \(its value enters the sandbox\)/);
    assert.equal(await inside, 'DB_PASSWORD');
    const stored = JSON.stringify(config().inspect('secrets')?.globalValue);
    assert.ok(stored.includes('api.bound.test') && stored.includes('DB_PASSWORD'), stored);
    assert.ok(!stored.includes(BOUND) && !stored.includes(INSIDE), 'no value in settings');
  });

  test('a sandbox asks for them by name; the value reaches only the bound server; no output channel shows a value', async function () {
    this.timeout(240_000);
    await assert.rejects(
      invoke('sandbox_open', { session: 'with-secrets', secrets: ['NOPE'] }),
      /no secret named "NOPE".*TOKEN, DB_PASSWORD/s,
    );

    const opened = await invokeAllowing('Allow for This Sandbox', 'sandbox_open', {
      session: 'with-secrets',
      runtime: 'python',
      secrets: ['TOKEN', 'DB_PASSWORD'],
    });
    assert.match(opened.asked, /use secrets you offer to sandboxes/);
    assert.match(opened.asked, /TOKEN → api\.bound\.test \(Authorization header\)/);
    assert.match(opened.asked, /DB_PASSWORD \(its value enters the sandbox\)/);
    assert.match(opened.text, /api\.bound\.test/);

    // The bound name is intercepted (the sandbox trusts the session's CA); another name is a tunnel to
    // the test's server, whose CA the sandbox does not know: that one is fetched without verifying.
    const get = (host: string, verify: boolean) =>
      `import os, ssl, urllib.request\nc = ssl.create_default_context() if ${verify ? 'True' : 'False'} else ssl._create_unverified_context()\nr = urllib.request.Request("https://${host}:${port}/", headers={"Authorization": "Bearer " + os.environ["TOKEN"]})\nprint(urllib.request.urlopen(r, timeout=20, context=c).read().decode())`;
    const bound = await invoke('sandbox_exec', { sandbox_id: 'with-secrets', code: get('api.bound.test', true) });
    assert.match(bound, /hello from the bound server/);
    const other = await invoke('sandbox_exec', { sandbox_id: 'with-secrets', code: get('other.test', false) });
    assert.match(other, /hello from the bound server/);
    const boundSeen = seen.find((request) => request.server.startsWith('api.bound.test'));
    const otherSeen = seen.find((request) => request.server.startsWith('other.test'));
    assert.equal(boundSeen?.headers.authorization, `Bearer ${BOUND}`, 'the bound server got the value');
    assert.match(String(otherSeen?.headers.authorization), /^Bearer agent-sandbox-placeholder-[0-9a-f]{32}$/);
    const placeholder = String(otherSeen!.headers.authorization).slice('Bearer '.length);

    const env = await invoke('sandbox_exec', {
      sandbox_id: 'with-secrets',
      command:
        'echo "token=$TOKEN password=$DB_PASSWORD"; grep -rl "$DB_PASSWORD" /tmp 2>/dev/null | head -1; echo done',
    });
    assert.match(env, /token=\[secret:TOKEN\] password=\[secret:DB_PASSWORD\]/);
    for (const text of [opened.text, bound, other, env]) {
      assert.ok(!text.includes(BOUND), 'no bound value in a result');
      assert.ok(!text.includes(INSIDE), 'no inside value in a result');
      assert.ok(!text.includes(placeholder), 'no placeholder in a result');
    }

    await vscode.commands.executeCommand('agentSandbox.showPanel');
    const panel = await lookUntil('panel', /with-secrets/, 'the session in the panel');
    assert.match(panel.text, /TOKEN/);
    assert.match(panel.text, /DB_PASSWORD/);
    for (const value of [BOUND, INSIDE, placeholder]) assert.ok(!panel.text.includes(value), 'no value in the panel');

    // The interactive terminal shows the values as [secret:NAME] too (agentSandbox.terminal.showSecrets is off).
    const opening = new Promise<vscode.Terminal>((resolve) => {
      const listener = vscode.window.onDidOpenTerminal((terminal) => (listener.dispose(), resolve(terminal)));
    });
    await vscode.commands.executeCommand('agentSandbox.openTerminal', 'with-secrets');
    const terminal = await opening;
    terminal.show();
    terminal.sendText('echo "pw=$DB_PASSWORD tok=$TOKEN"');
    let shown = '';
    for (let attempt = 0; attempt < 80 && !/pw=\[secret:DB_PASSWORD\] tok=\[secret:TOKEN\]/.test(shown); attempt++) {
      shown = (await look('terminal').catch(() => ({ text: '' }))).text;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.match(shown, /pw=\[secret:DB_PASSWORD\] tok=\[secret:TOKEN\]/, shown);
    for (const value of [BOUND, INSIDE, placeholder]) assert.ok(!shown.includes(value), 'no value in the terminal');
    terminal.dispose();
  });
});
