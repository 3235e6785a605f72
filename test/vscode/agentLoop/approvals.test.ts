// Approvals as a person meets them in Copilot's agent loop (#15 item 4): which confirmations appear
// (VS Code's card, our own modal dialog), what they say, and that the answer decides whether the
// tool runs. Each case uses sandboxes of its own: approvals are remembered per sandbox (ours) and
// per tool for the window's session (Copilot's "Allow in this Session").
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { setWorkspaceAccessInUserSettings } from '../suite/helpers';
import { runCase, scriptedModelReady } from './chat';
import type { Transcript } from './script';

const CASE_TIMEOUT_MS = 120_000;

/** The text the model received for the call `${case}-t${turn}-c0`. */
function received(transcript: Transcript, turn: number): string {
  const id = `${transcript.id}-t${turn}-c0`;
  const result = transcript.results.find((candidate) => candidate.callId === id);
  assert.ok(result, `the model never received the result of ${id}`);
  return result.parts.map((part) => (part.type === 'text' ? part.value : JSON.stringify(part))).join('');
}

suite("Approvals in Copilot's agent loop", function () {
  this.timeout(CASE_TIMEOUT_MS + 30_000);
  const config = () => vscode.workspace.getConfiguration('agentSandbox');

  suiteSetup(async () => {
    await vscode.extensions.getExtension('agent-sandbox.agent-sandbox')!.activate();
    await scriptedModelReady();
  });
  teardown(async () => {
    await config().update('confirmation', undefined, vscode.ConfigurationTarget.Global);
    await setWorkspaceAccessInUserSettings('none');
  });
  suiteTeardown(async () => {
    await vscode.commands.executeCommand('agentSandbox.closeAllSessions', 'confirmed');
  });

  test('a call that stays inside its sandbox runs without asking', async () => {
    const { transcript, seen } = await runCase(
      {
        id: 'harmless',
        turns: [{ calls: [{ name: 'sandbox_run', input: { code: 'print(6*7)' } }] }, { text: 'It printed 42.' }],
      },
      { timeoutMs: CASE_TIMEOUT_MS },
    );
    assert.deepEqual(seen, [], 'no confirmation appeared');
    assert.match(received(transcript, 0), /^exit code 0 · [\s\S]*\n42$/);
  });

  test('with agentSandbox.confirmation "always", a card names the command, and Allow Once runs it', async () => {
    await config().update('confirmation', 'always', vscode.ConfigurationTarget.Global);
    const { transcript, seen, answered } = await runCase(
      {
        id: 'confirm-card',
        turns: [
          { calls: [{ name: 'sandbox_open', input: { session: 'loop-confirm', runtime: 'bash' } }] },
          {
            calls: [
              { name: 'sandbox_exec', input: { sandbox_id: 'loop-confirm', command: 'echo "confirmed-$((6*7))"' } },
            ],
          },
          { text: 'It ran.' },
        ],
      },
      { answers: [{ card: 'Allow Once' }], timeoutMs: CASE_TIMEOUT_MS },
    );
    assert.equal(seen.length, 1, `one confirmation: ${JSON.stringify(seen)}`);
    assert.equal(seen[0]!.where, 'card');
    assert.match(seen[0]!.title, /Run a command in sandbox .*loop-confirm/);
    assert.match(seen[0]!.message, /confirmed-\$\(\(6\*7\)\)/, 'the card shows the command');
    assert.match(answered[0]!.text, /loop-confirm/);
    assert.match(received(transcript, 1), /^exit code 0 · [\s\S]*confirmed-42/);
  });

  test('a call that reaches the folder asks in our dialog; then, within that grant, the card', async () => {
    await setWorkspaceAccessInUserSettings('ro');
    const { transcript, seen } = await runCase(
      {
        id: 'widen-ro',
        turns: [
          { calls: [{ name: 'sandbox_open', input: { session: 'loop-ro', runtime: 'bash', workspace_access: 'ro' } }] },
          { calls: [{ name: 'sandbox_exec', input: { sandbox_id: 'loop-ro', command: 'cat hello.py' } }] },
          { text: 'Read it.' },
        ],
      },
      { answers: [{ dialog: 'Allow for This Sandbox' }, { card: 'Allow Once' }], timeoutMs: CASE_TIMEOUT_MS },
    );
    assert.deepEqual(
      seen.map((confirmation) => confirmation.where),
      ['dialog', 'card'],
      JSON.stringify(seen),
    );
    assert.match(seen[0]!.title, /Sandbox "loop-ro" would read your workspace folder/);
    assert.match(received(transcript, 0), /workspace access: .*read-only/i);
    assert.match(received(transcript, 1), /^exit code 0 · [\s\S]*hello from the test workspace/);
  });

  // #15: Copilot remembers "Allow in this Session" per tool name; it must not approve a call that reaches further.
  // Last in this window on purpose: that approval of sandbox_exec lasts until the window closes.
  test('"Allow in this Session" for a no-access exec does not approve an exec in a read-write sandbox', async () => {
    await config().update('confirmation', 'always', vscode.ConfigurationTarget.Global);
    await setWorkspaceAccessInUserSettings('rw');
    const { transcript, seen } = await runCase(
      {
        id: 'session-allow',
        turns: [
          {
            calls: [
              { name: 'sandbox_open', input: { session: 'loop-none', runtime: 'bash', workspace_access: 'none' } },
            ],
          },
          { calls: [{ name: 'sandbox_exec', input: { sandbox_id: 'loop-none', command: 'echo first' } }] },
          { calls: [{ name: 'sandbox_exec', input: { sandbox_id: 'loop-none', command: 'echo second' } }] },
          { calls: [{ name: 'sandbox_open', input: { session: 'loop-rw', runtime: 'bash', workspace_access: 'rw' } }] },
          {
            calls: [{ name: 'sandbox_exec', input: { sandbox_id: 'loop-rw', command: 'touch written-by-the-agent' } }],
          },
          { text: 'Done.' },
        ],
      },
      {
        answers: [{ card: 'Allow in this Session' }, { dialog: 'Allow Once' }, { dialog: 'Cancel' }],
        timeoutMs: CASE_TIMEOUT_MS,
      },
    );
    assert.deepEqual(
      seen.map((confirmation) => confirmation.where),
      ['card', 'dialog', 'dialog'],
      `the second no-access exec asked nothing; both rw calls asked in our dialog: ${JSON.stringify(seen)}`,
    );
    assert.match(received(transcript, 1), /^exit code 0 · [\s\S]*first/);
    assert.match(received(transcript, 2), /^exit code 0 · [\s\S]*second/);
    assert.match(seen[2]!.title, /Sandbox "loop-rw" would .*change files in your workspace folder/);
    assert.match(received(transcript, 4), /did not allow this call/);
  });
});
