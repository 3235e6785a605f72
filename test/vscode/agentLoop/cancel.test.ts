// Stopping the chat request while a tool call runs (#24 item 2): the call ends, the loop does not
// call the model again, and the sandbox's process is gone. Waits are bounded by generous timeouts;
// nothing here measures time.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { runCase, scriptedModelReady } from './chat';

const EXTENSION_ID = 'agent-sandbox.agent-sandbox';
const SESSION = 'loop-cancel';
const SLEEP = 'sleep 600';

interface Api {
  engine: { get(): { docker: { getContainer(id: string): { top(): Promise<{ Processes?: string[][] }> } } } };
  service: { list(): Promise<{ id: string; name?: string }[]> };
  /** The panel's Activity list: a call is recorded there when it ends, however it ends. */
  activity: { recent(): { tool: string; summary: string; sandboxId?: string; ok: boolean }[] };
}

suite("Cancelling in Copilot's agent loop", function () {
  this.timeout(180_000);
  let api: Api;

  suiteSetup(async () => {
    api = (await vscode.extensions.getExtension(EXTENSION_ID)!.activate()) as Api;
    await scriptedModelReady();
  });
  suiteTeardown(async () => {
    await vscode.commands.executeCommand('agentSandbox.closeAllSessions', 'confirmed');
  });

  /** The processes of the session's container, as the engine lists them. */
  async function processes(): Promise<string[]> {
    const session = (await api.service.list()).find((candidate) => candidate.name === SESSION);
    assert.ok(session, `session ${SESSION} is open`);
    const top = await api.engine.get().docker.getContainer(session.id).top();
    return (top.Processes ?? []).map((row) => row.join(' '));
  }

  async function waitUntil(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  test(`stopping the request during a sandbox_exec of "${SLEEP}" ends the call and the loop; the process is gone`, async () => {
    const { transcript } = await runCase(
      {
        id: 'cancel-sleep',
        turns: [
          { calls: [{ name: 'sandbox_open', input: { session: SESSION, runtime: 'bash' } }] },
          // A time limit far beyond the case's: only the cancellation can end this call in time.
          { calls: [{ name: 'sandbox_exec', input: { sandbox_id: SESSION, command: SLEEP, timeout_seconds: 3600 } }] },
          { text: 'The loop should never get here: the request was stopped.' },
        ],
      },
      {
        until: 'chat-complete',
        timeoutMs: 120_000,
        during: async (current) => {
          await waitUntil('the model asked for the exec', 60_000, async () => (current()?.requests.length ?? 0) >= 2);
          await waitUntil(`"${SLEEP}" runs in the sandbox`, 60_000, async () =>
            (await processes()).some((line) => line.includes(SLEEP)),
          );
          await vscode.commands.executeCommand('workbench.action.chat.cancel');
        },
      },
    );
    assert.deepEqual(
      transcript.requests.map((request) => request.answered),
      ['calls', 'calls'],
      'after the stop, the loop did not call the model again',
    );
    assert.equal(transcript.ended, false);
    await waitUntil('the exec call ended (recorded in the Activity list)', 30_000, async () =>
      api.activity
        .recent()
        .some((entry) => entry.tool === 'sandbox_exec' && entry.sandboxId === SESSION && entry.summary === SLEEP),
    );
    const ended = api.activity.recent().find((entry) => entry.summary === SLEEP)!;
    assert.equal(ended.ok, false, 'a stopped call is not recorded as a success');
    await waitUntil(`"${SLEEP}" is gone from the sandbox`, 30_000, async () =>
      (await processes()).every((line) => !line.includes(SLEEP)),
    );

    // The sandbox itself is fine, and a later call through the loop sees no leftover.
    const after = await runCase(
      {
        id: 'after-cancel',
        turns: [
          { calls: [{ name: 'sandbox_exec', input: { sandbox_id: SESSION, command: 'ps -eo args' } }] },
          { text: 'Clean.' },
        ],
      },
      { timeoutMs: 60_000 },
    );
    const result = after.transcript.results.find((candidate) => candidate.callId === 'after-cancel-t0-c0');
    assert.ok(result, 'the later call came back');
    const text = result.parts.map((part) => (part.type === 'text' ? part.value : '')).join('');
    assert.match(text, /^exit code 0 · /);
    assert.doesNotMatch(text, new RegExp(SLEEP));
  });
});
