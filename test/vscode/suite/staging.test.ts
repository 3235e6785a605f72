// sandbox_stage_file and sandbox_publish_file as Copilot calls them, moving files between the
// workspace, a real sandbox and the file store without their bytes passing through the model.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { invoke, invokeAllowing, setWorkspaceAccessInUserSettings } from './helpers';

const EXTENSION_ID = 'agent-sandbox.agent-sandbox';
const SESSION = 'staging-test';

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

// The dialogs of Set Workspace Access are tested in commands.test; here the user sets it in settings.json.
async function setAccess(value: 'none' | 'ro' | 'rw' | undefined): Promise<void> {
  await setWorkspaceAccessInUserSettings(value ?? 'none');
}

suite('File staging', () => {
  const folder = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  const created: string[] = [];

  suiteSetup(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
    // The user allows read-write access (saving into the workspace needs it); the sandbox itself asks
    // for none, so its /workspace is its own and writable.
    await setAccess('rw');
    await invoke('sandbox_open', { session: SESSION, runtime: 'python', workspace_access: 'none' });
  });

  suiteTeardown(async () => {
    await setAccess(undefined);
    await invoke('sandbox_close', { sandbox_id: SESSION }).catch(() => undefined);
    for (const file of created) fs.rmSync(path.join(folder(), file), { recursive: true, force: true });
  });

  test('both tools are registered', () => {
    for (const name of ['sandbox_stage_file', 'sandbox_publish_file'])
      assert.ok(
        vscode.lm.tools.some((tool) => tool.name === name),
        name,
      );
  });

  test('a workspace file goes into the sandbox, is transformed, and comes back into the store and the workspace', async () => {
    const input = Buffer.concat([
      Buffer.from(Array.from({ length: 256 }, (_, byte) => byte)),
      Buffer.from('binary tail\r\n\0'),
    ]);
    fs.writeFileSync(path.join(folder(), 'stage-input.bin'), input);
    created.push('stage-input.bin', 'staging-results');

    // Reading the user's folder is more than this sandbox (no workspace access) was granted: Agent
    // Sandbox asks in its own dialog, whatever VS Code was told about this tool.
    const { text: staged, asked } = await invokeAllowing('Allow for This Sandbox', 'sandbox_stage_file', {
      sandbox_id: SESSION,
      workspace_path: 'stage-input.bin',
      path: 'in/input.bin',
    });
    assert.match(asked, new RegExp(`Sandbox "${SESSION}" would read your workspace folder\\. Allow it\\?`));
    assert.match(
      staged,
      new RegExp(
        `Staged the workspace file stage-input\\.bin into sandbox "${SESSION}" at /workspace/in/input\\.bin · 270 bytes · sha256 ${sha256(input)}`,
      ),
    );

    // Reverse the bytes inside the sandbox.
    const run = await invoke('sandbox_exec', {
      sandbox_id: SESSION,
      command: "python3 -c \"import sys; d=open('in/input.bin','rb').read(); open('out.bin','wb').write(d[::-1])\"",
    });
    assert.match(run, /exit code 0/);
    const expected = Buffer.from(input).reverse();

    const publish = {
      sandbox_id: SESSION,
      path: 'out.bin',
      name: 'reversed.bin',
      save_to_workspace: 'staging-results/reversed.bin',
    };
    // Saving into the folder is a new reach again: declined, nothing is written and the model is told why.
    const declined = await invokeAllowing('Cancel', 'sandbox_publish_file', publish);
    assert.match(declined.asked, /would save a file into your workspace folder/);
    assert.match(declined.text, /^failed · permission denied\nThe user did not allow this call/);
    assert.equal(fs.existsSync(path.join(folder(), 'staging-results/reversed.bin')), false);
    const { text: published } = await invokeAllowing('Allow for This Sandbox', 'sandbox_publish_file', publish);
    assert.match(published, new RegExp(`sha256 ${sha256(expected)}`));
    assert.match(published, /"reversed\.bin"/);
    assert.match(published, /Saved it to the workspace at staging-results\/reversed\.bin\./);
    assert.ok(
      fs.readFileSync(path.join(folder(), 'staging-results/reversed.bin')).equals(expected),
      'the workspace file has the published bytes',
    );

    // The key brings the same bytes into the sandbox again.
    const key = /files\/f_[0-9a-f]{16,64}/.exec(published)![0];
    await invoke('sandbox_stage_file', { sandbox_id: SESSION, key, path: 'again/reversed.bin' });
    assert.match(
      await invoke('sandbox_exec', { sandbox_id: SESSION, cmd: ['sha256sum', 'again/reversed.bin'] }),
      new RegExp(sha256(expected)),
    );
  });

  test('an existing workspace file is replaced only with overwrite, and nothing is saved outside the folder', async () => {
    created.push('staging-existing.txt');
    fs.writeFileSync(path.join(folder(), 'staging-existing.txt'), 'keep me');
    await invoke('sandbox_exec', { sandbox_id: SESSION, command: 'echo new > new.txt' });
    await assert.rejects(
      invoke('sandbox_publish_file', {
        sandbox_id: SESSION,
        path: 'new.txt',
        save_to_workspace: 'staging-existing.txt',
      }),
      /already has a file "staging-existing\.txt"[\s\S]*overwrite: true/,
    );
    assert.equal(fs.readFileSync(path.join(folder(), 'staging-existing.txt'), 'utf8'), 'keep me');
    await invoke('sandbox_publish_file', {
      sandbox_id: SESSION,
      path: 'new.txt',
      save_to_workspace: 'staging-existing.txt',
      overwrite: true,
    });
    assert.equal(fs.readFileSync(path.join(folder(), 'staging-existing.txt'), 'utf8'), 'new\n');
    await assert.rejects(
      invoke('sandbox_publish_file', { sandbox_id: SESSION, path: 'new.txt', save_to_workspace: '../escaped.txt' }),
      /outside the workspace folder/,
    );
    assert.equal(fs.existsSync(path.join(folder(), '..', 'escaped.txt')), false);
  });

  test('staging from the workspace is refused when the user allows no workspace access', async () => {
    await setAccess('none');
    try {
      assert.match(
        await invoke('sandbox_stage_file', { sandbox_id: SESSION, workspace_path: 'hello.py', path: 'hello.py' }),
        /^failed · permission denied\n[\s\S]*allows no workspace access[\s\S]*agentSandbox\.workspaceAccess/,
      );
    } finally {
      await setAccess('ro');
    }
    await assert.rejects(
      invoke('sandbox_stage_file', { sandbox_id: SESSION, workspace_path: '../etc/passwd', path: 'x' }),
      /outside the workspace folder/,
    );
    await assert.rejects(
      invoke('sandbox_stage_file', { sandbox_id: SESSION, key: 'files/nope', path: 'x' }),
      /not a file store key/,
    );
    await assert.rejects(invoke('sandbox_stage_file', { sandbox_id: SESSION, path: 'x' }), /exactly one of key/);
  });
  test('saving into the workspace needs read-write access, whatever the confirmation', async () => {
    await setAccess('ro');
    try {
      await invoke('sandbox_exec', { sandbox_id: SESSION, command: 'echo text > ro.txt' });
      assert.match(
        await invoke('sandbox_publish_file', {
          sandbox_id: SESSION,
          path: 'ro.txt',
          save_to_workspace: 'staging-ro.txt',
        }),
        /^failed · permission denied\n[\s\S]*needs read-write workspace access/,
      );
      assert.equal(fs.existsSync(path.join(folder(), 'staging-ro.txt')), false);
    } finally {
      await setAccess('rw');
    }
  });
});
