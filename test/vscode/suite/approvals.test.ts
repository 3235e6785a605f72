// Approvals by reach, in the real host (issue 15 item 4): a call that stays in a private sandbox runs
// without asking; one that reaches further than the user granted for its sandbox asks in Agent
// Sandbox's own dialog, whatever was approved before for that tool; a grant lasts for that sandbox only.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { acceptedConfirmations, invoke, invokeAllowing, setWorkspaceAccessInUserSettings } from './helpers';

const EXTENSION_ID = 'agent-sandbox.agent-sandbox';

suite('Approvals by reach', () => {
  suiteSetup(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
    // The user allows read-write access and the network for agents in this folder (their ceiling);
    // each sandbox that would use them still asks once.
    await setWorkspaceAccessInUserSettings('rw');
    await vscode.workspace
      .getConfiguration('agentSandbox')
      .update('network.mode', 'full', vscode.ConfigurationTarget.Global);
  });

  suiteTeardown(async () => {
    for (const id of ['approvals-private', 'approvals-rw', 'approvals-net'])
      await invoke('sandbox_close', { sandbox_id: id }).catch(() => undefined);
    await vscode.workspace
      .getConfiguration('agentSandbox')
      .update('network.mode', undefined, vscode.ConfigurationTarget.Global);
    await setWorkspaceAccessInUserSettings('none');
  });

  test('an exec in a private sandbox runs without any confirmation', async () => {
    const before = acceptedConfirmations().length;
    await invoke('sandbox_open', {
      session: 'approvals-private',
      runtime: 'bash',
      workspace_access: 'none',
      network: false,
    });
    assert.match(await invoke('sandbox_exec', { sandbox_id: 'approvals-private', command: 'echo private' }), /private/);
    assert.equal(acceptedConfirmations().length, before, 'no confirmation was shown');
  });

  test('approving a no-access exec does not approve a read-write or a networked one', async () => {
    // Opening a read-write sandbox asks in our dialog, naming what it could touch.
    const rw = await invokeAllowing('Allow for This Sandbox', 'sandbox_open', {
      session: 'approvals-rw',
      runtime: 'bash',
      workspace_access: 'rw',
      network: false,
    });
    assert.match(
      rw.asked,
      /Sandbox "approvals-rw" would read your workspace folder and change files in your workspace folder\./,
    );
    assert.match(rw.text, /workspace access: rw/);
    // Within that grant, an exec gets VS Code's confirmation (which a client may remember), not our dialog.
    const before = acceptedConfirmations().length;
    assert.match(await invoke('sandbox_exec', { sandbox_id: 'approvals-rw', command: 'echo inside' }), /inside/);
    assert.equal(acceptedConfirmations().length, before + 1);
    assert.match(acceptedConfirmations().at(-1)!, /Workspace: read-write at \/workspace/);

    // The rw grant is for that sandbox only: a networked sandbox asks again, and a refusal runs nothing.
    const declined = await invokeAllowing('Cancel', 'sandbox_open', {
      session: 'approvals-net',
      runtime: 'bash',
      workspace_access: 'none',
      network: true,
    });
    assert.match(declined.asked, /Sandbox "approvals-net" would use the network\./);
    assert.match(declined.text, /^failed · permission denied\nThe user did not allow this call/);
    // "Allow Once" covers that call only: the next one in the same sandbox asks again.
    const opened = await invokeAllowing('Allow Once', 'sandbox_open', {
      session: 'approvals-net',
      runtime: 'bash',
      workspace_access: 'none',
      network: true,
    });
    assert.match(opened.text, /network: on/);
    const again = await invokeAllowing('Allow for This Sandbox', 'sandbox_exec', {
      sandbox_id: 'approvals-net',
      command: 'echo net',
    });
    assert.match(again.asked, /Sandbox "approvals-net" would use the network\./);
    assert.match(again.text, /exit code 0[\s\S]*net/);
  });
});
