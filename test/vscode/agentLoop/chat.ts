// Runs one case in Copilot Chat's agent loop: a new chat in agent mode with the scripted model, the
// confirmations answered as the case says (a card's button, a modal dialog's button), until the model
// has given its closing text and the chat's answer is complete. A hang fails through the case's
// timeout; nothing here measures time.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { clickDialogButton } from '../suite/helpers';
import {
  MODEL_ID,
  VENDOR,
  activeFile,
  caseFile,
  caseMarker,
  loopDir,
  readJson,
  readSeen,
  seenFile,
  transcriptFile,
  type CaseScript,
  type SeenConfirmation,
  type Transcript,
} from './script';

/** A confirmation the case answers, in the order they come: a card's button, or a modal dialog's. */
export type Answer = { readonly card: string } | { readonly dialog: string };

export interface CaseRun {
  readonly transcript: Transcript;
  /** Every card and dialog that appeared while the case ran, in order. */
  readonly seen: readonly SeenConfirmation[];
  /** What each answered confirmation said, as the answer clicked it. */
  readonly answered: readonly { readonly answer: Answer; readonly text: string }[];
}

export interface CaseOptions {
  readonly answers?: readonly Answer[];
  /** Called once the case's chat request runs (for a case that acts on it, e.g. cancels it). */
  readonly during?: (transcript: () => Transcript | undefined) => Promise<void>;
  /**
   * The case ends when the model gave its closing text (default), or when the chat's answer completes
   * (known only for a case without confirmations: the chat command stops waiting at the first one).
   */
  readonly until?: 'closing-text' | 'chat-complete';
  readonly timeoutMs: number;
  /**
   * What the user types, instead of a request to Copilot's agent mode that names the case (a request
   * to a participant, like `@sandbox /run agents/writer.prompt`: the case marker is then in the text
   * the participant sends the model). Sent in ask mode, where participants answer.
   */
  readonly query?: string;
  /** Starts the request another way than typing it (a command, a code lens), instead of the query. */
  readonly send?: () => Thenable<unknown>;
}

/** Waits for the scripted model (the test extension registers it when the window starts). */
export async function scriptedModelReady(): Promise<void> {
  for (let tries = 0; tries < 300; tries++) {
    if ((await vscode.lm.selectChatModels({ vendor: VENDOR, id: MODEL_ID })).length > 0) return;
    await sleep(100);
  }
  throw new Error(`the scripted model (${VENDOR}/${MODEL_ID}) did not register within 30 s`);
}

export async function runCase(script: CaseScript, options: CaseOptions): Promise<CaseRun> {
  const { id } = script;
  if (options.until === 'chat-complete' && options.answers?.length)
    throw new Error(
      `case ${id}: until "chat-complete" cannot be told apart from a pending confirmation; end it on its closing text`,
    );
  const deadline = Date.now() + options.timeoutMs;
  for (const file of [transcriptFile(id), seenFile(id)]) fs.rmSync(file, { force: true });
  fs.writeFileSync(caseFile(id), JSON.stringify(script, null, 2));
  fs.writeFileSync(activeFile(), id);
  const answered: { answer: Answer; text: string }[] = [];
  try {
    await vscode.commands.executeCommand('workbench.action.chat.newChat');
    let complete = false;
    // blockOnResponse: the command settles once the chat's answer is complete (or waits for a confirmation).
    void Promise.resolve(
      options.send?.() ??
        vscode.commands.executeCommand('workbench.action.chat.open', {
          query: options.query ?? `${caseMarker(id)} Run the scripted test case ${id}.`,
          mode: options.query ? 'ask' : 'agent',
          modelSelector: { vendor: VENDOR, id: MODEL_ID },
          isPartialQuery: false,
          blockOnResponse: true,
        }),
    ).then(
      (result) => {
        if (!(result as { type?: string } | undefined)?.type) complete = true;
      },
      () => (complete = true),
    );
    const transcript = () => readJson<Transcript>(transcriptFile(id));
    for (const answer of options.answers ?? []) {
      const next = await waitFor(deadline, `the confirmation to answer with ${JSON.stringify(answer)}`, () =>
        readSeen(id).at(answered.length),
      );
      const expected = 'card' in answer ? 'card' : 'dialog';
      assert.equal(
        next.where,
        expected,
        `expected a ${expected} to answer with ${JSON.stringify(answer)}, and this appeared: ${JSON.stringify(next)}`,
      );
      const text = 'card' in answer ? await clickCard(answer.card) : await clickDialogButton(answer.dialog);
      answered.push({ answer, text });
    }
    await options.during?.(transcript);
    const until = options.until ?? 'closing-text';
    await waitFor(deadline, until === 'closing-text' ? 'the closing text' : 'the chat to complete', () => {
      const seen = readSeen(id);
      if (seen.length > answered.length)
        throw new Error(`a confirmation the case did not expect appeared: ${JSON.stringify(seen[answered.length])}`);
      return (until === 'closing-text' ? transcript()?.ended : complete) || undefined;
    });
    return {
      transcript: transcript() ?? { id, requests: [], results: [], ended: false },
      seen: readSeen(id),
      answered,
    };
  } catch (error) {
    await snapshot(`failed-${id}`);
    throw error;
  } finally {
    fs.rmSync(activeFile(), { force: true });
  }
}

/** Clicks `label` on the pending confirmation card, as a person would (the runner clicks in the browser); returns the card's text. */
async function clickCard(label: string): Promise<string> {
  const name = `card-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const done = path.join(loopDir(), `${name}.chatclicked`);
  fs.writeFileSync(path.join(loopDir(), `${name}.chatclick`), label);
  const answer = await waitFor(Date.now() + 60_000, `a click on "${label}"`, () =>
    fs.existsSync(done) ? fs.readFileSync(done, 'utf8') : undefined,
  );
  assert.ok(answer.startsWith('ok\n'), `clicking "${label}" on the confirmation card: ${answer}`);
  const card = JSON.parse(answer.slice(3)) as { title: string; message: string };
  return `${card.title}\n${card.message}`;
}

/** Saves a screenshot and the chat view's HTML into the shared folder, for a failure to be looked at. */
export async function snapshot(name: string): Promise<void> {
  fs.writeFileSync(path.join(loopDir(), `${name}.snapshot`), '');
  await waitFor(
    Date.now() + 15_000,
    `snapshot ${name}`,
    () => fs.existsSync(path.join(loopDir(), `${name}.snapshotdone`)) || undefined,
  ).catch(() => undefined);
}

async function waitFor<T>(deadline: number, what: string, check: () => T | undefined): Promise<T> {
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
