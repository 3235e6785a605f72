// Sessions as an agent meets them through the tools: secrets stay out of results, and a session
// killed from outside is reported, never silently replaced.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { invoke } from './helpers';

const EXTENSION_ID = 'agent-sandbox.agent-sandbox';

interface Api {
  engine: { get(): { docker: { getContainer(id: string): { kill(options: object): Promise<unknown> } } } };
  service: { list(): Promise<{ id: string; name?: string }[]> };
}

suite('Sessions through the tools', () => {
  let api: Api;
  suiteSetup(async () => {
    api = (await vscode.extensions.getExtension(EXTENSION_ID)!.activate()) as Api;
  });
  suiteTeardown(async () => {
    delete process.env.AGENT_SANDBOX_ENV_PROBE_TOKEN;
    await vscode.commands.executeCommand('agentSandbox.closeAllSessions', 'confirmed');
  });

  test('a host secret reaches the sandbox but its value never appears in a result', async () => {
    const secret = 'sk-probe-7f3a9c21e4b8d605';
    process.env.AGENT_SANDBOX_ENV_PROBE_TOKEN = secret;
    const text = await invoke('sandbox_run', {
      code: 'import os, base64\ns = os.environ["PROBE_TOKEN"]\nprint(s)\nprint(base64.b64encode(s.encode()).decode())\nprint(s.encode().hex())\nprint("\\n".join(s[i:i+4] for i in range(0, len(s), 4)))\nprint(len(s))',
    });
    assert.match(text, /\[secret:PROBE_TOKEN\]/);
    assert.match(text, /\b25\b/, 'the program did see the value');
    for (const form of [
      secret,
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('hex'),
      secret.slice(4, 8) + '\n' + secret.slice(8, 12),
    ]) {
      assert.ok(!text.includes(form), `the result contains ${JSON.stringify(form)}`);
    }
    const opened = await invoke('sandbox_open', { session: 'secret-session', runtime: 'bash' });
    assert.ok(!opened.includes(secret));
    const exec = await invoke('sandbox_exec', {
      sandbox_id: 'secret-session',
      command: 'echo "$PROBE_TOKEN" | rev; env',
    });
    assert.ok(!exec.includes(secret), 'env output is redacted');
    assert.match(exec, /PROBE_TOKEN=\[secret:PROBE_TOKEN\]/);
  });

  test('a session killed from outside is reported on the next call, and again, until it is closed and opened again', async () => {
    await invoke('sandbox_open', { session: 'doomed', runtime: 'bash' });
    await invoke('sandbox_exec', { sandbox_id: 'doomed', command: 'echo precious > keep.txt' });
    const session = (await api.service.list()).find((candidate) => candidate.name === 'doomed')!;
    await api.engine.get().docker.getContainer(session.id).kill({ signal: 'SIGKILL' });
    // A dead session is the environment's failure: a result that says so, not a thrown "check your input".
    assert.match(
      await invoke('sandbox_exec', { sandbox_id: 'doomed', command: 'cat keep.txt' }),
      /^failed · session dead\n[\s\S]*no longer running: it was killed \(SIGKILL\)/,
    );
    assert.match(
      await invoke('sandbox_fs_read', { sandbox_id: 'doomed', path: 'keep.txt' }),
      /^failed · session dead\n[\s\S]*no longer running[\s\S]*sandbox_open/,
    );
    // As the hint says: opening it again is refused while the dead one is there; close, then open.
    assert.match(
      await invoke('sandbox_open', { session: 'doomed', runtime: 'bash' }),
      /^failed · session dead\n[\s\S]*no longer running/,
    );
    await invoke('sandbox_close', { sandbox_id: 'doomed' });
    const reopened = await invoke('sandbox_open', { session: 'doomed', runtime: 'bash' });
    assert.match(reopened, /doomed/);
    assert.match(
      await invoke('sandbox_exec', { sandbox_id: 'doomed', command: 'ls keep.txt 2>&1 || echo gone' }),
      /gone/,
    );
  });
});
