// What several suites share: calling a tool as Copilot does, and asking the runner for a screenshot.
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

let accepting = 0;

/**
 * Calls a language-model tool through VS Code and returns the text the model would read. Outside a
 * chat, VS Code asks for a tool's confirmation in a modal dialog; meanwhile the runner approves each
 * one as a person would (and notes it, see acceptedConfirmations).
 */
export async function invoke(name: string, input: object, token?: vscode.CancellationToken): Promise<string> {
  const result = await invokeResult(name, input, { token });
  return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
}

/** Like invoke, but returns the result's parts as the model gets them; `tokenizationOptions` as Copilot passes them. */
export async function invokeResult(
  name: string,
  input: object,
  options: { token?: vscode.CancellationToken; tokenizationOptions?: vscode.LanguageModelToolTokenizationOptions } = {},
): Promise<vscode.LanguageModelToolResult> {
  const flag = path.join(screenshotDir(), 'auto-accept');
  if (accepting++ === 0) fs.writeFileSync(flag, '');
  try {
    return await vscode.lm.invokeTool(
      name,
      { input, toolInvocationToken: undefined, tokenizationOptions: options.tokenizationOptions },
      options.token ?? new vscode.CancellationTokenSource().token,
    );
  } finally {
    if (--accepting === 0) fs.rmSync(flag, { force: true });
  }
}

/** The messages of the tool confirmations approved so far, oldest first. */
export function acceptedConfirmations(): string[] {
  const log = path.join(screenshotDir(), 'accepted.log');
  return fs.existsSync(log)
    ? fs
        .readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as string)
    : [];
}

function screenshotDir(): string {
  const dir = process.env.AGENT_SANDBOX_VSCODE_SCREENSHOTS;
  assert.ok(dir, 'the runner sets AGENT_SANDBOX_VSCODE_SCREENSHOTS');
  return dir;
}

/**
 * Asks the runner (which drives the browser; the suite runs in the extension host) for a screenshot
 * of the workbench: it saves NAME.png and answers with NAME.done.
 */
export async function screenshot(name: string): Promise<string> {
  const dir = process.env.AGENT_SANDBOX_VSCODE_SCREENSHOTS;
  assert.ok(dir, 'the runner sets AGENT_SANDBOX_VSCODE_SCREENSHOTS');
  const done = path.join(dir, `${name}.done`);
  fs.rmSync(done, { force: true });
  fs.writeFileSync(path.join(dir, `${name}.request`), '');
  for (let waited = 0; waited < 10_000; waited += 100) {
    if (fs.existsSync(done)) {
      assert.equal(fs.readFileSync(done, 'utf8'), 'ok');
      return path.join(dir, `${name}.png`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no screenshot ${name} after 10 s`);
}

export interface Seen {
  /** The area's accessibility tree, as playwright writes it: `- button "Close build": Close`. */
  aria: string;
  text: string;
}

export interface LookAction {
  /** Clicks the element with this role and accessible name first. */
  click?: { role: string; name: string };
  /** Picks an option in the dropdown of this name first, with the mouse. */
  choose?: { combobox: string; option: string };
}

/**
 * Asks the runner what the user sees in an area of the window (the Sandbox panel, the command
 * palette, the status bar, the Problems view), after doing what `action` says there as a person would.
 */
export type LookTarget = 'panel' | 'palette' | 'statusbar' | 'problems' | 'scm' | 'terminal';

export async function look(target: LookTarget, action: LookAction = {}): Promise<Seen> {
  const name = `look-${randomUUID()}`;
  const seen = path.join(screenshotDir(), `${name}.seen`);
  fs.writeFileSync(path.join(screenshotDir(), `${name}.look`), JSON.stringify({ target, ...action }));
  for (let waited = 0; waited < 20_000; waited += 100) {
    if (fs.existsSync(seen)) {
      const answer = JSON.parse(fs.readFileSync(seen, 'utf8')) as Seen & { ok: boolean; error?: string };
      fs.rmSync(seen, { force: true });
      if (!answer.ok) throw new Error(`looking at the ${target}: ${answer.error}`);
      return answer;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the runner did not look at the ${target} within 20 s`);
}

/** Looks until what the user sees matches, and returns it; fails with the last look. */
export async function lookUntil(target: LookTarget, wanted: RegExp, what: string, attempts = 60): Promise<Seen> {
  let last: Seen | undefined;
  let problem: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      last = await look(target);
      problem = undefined;
      if (wanted.test(last.aria)) return last;
    } catch (error) {
      problem = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what}: the ${target} never showed ${wanted}; it showed:\n${last?.aria ?? String(problem)}`);
}

/**
 * Asks the runner to click a button of the modal dialog on screen, as a person would, and returns the
 * dialog's message. Start the command first (without awaiting it), then call this.
 */
export async function clickDialogButton(label: string, within?: string): Promise<string> {
  const dir = process.env.AGENT_SANDBOX_VSCODE_SCREENSHOTS;
  assert.ok(dir, 'the runner sets AGENT_SANDBOX_VSCODE_SCREENSHOTS');
  const name = `dialog-${randomUUID()}`;
  const done = path.join(dir, `${name}.clicked`);
  fs.writeFileSync(path.join(dir, `${name}.click`), within ? `${label}\n${within}` : label);
  for (let waited = 0; waited < 30_000; waited += 100) {
    if (fs.existsSync(done)) {
      const answer = fs.readFileSync(done, 'utf8');
      fs.rmSync(done, { force: true });
      assert.ok(answer.startsWith('ok'), `clicking "${label}": ${answer}`);
      return answer.slice(3);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no dialog button "${label}" was clicked within 30 s`);
}

/**
 * Waits until a modal dialog is on screen, without answering it, and returns its message: a test
 * can act while the user reads it (then answer with clickDialogButton).
 */
export async function dialogShown(): Promise<string> {
  const dir = process.env.AGENT_SANDBOX_VSCODE_SCREENSHOTS;
  assert.ok(dir, 'the runner sets AGENT_SANDBOX_VSCODE_SCREENSHOTS');
  const name = `dialog-${randomUUID()}`;
  const shown = path.join(dir, `${name}.shown`);
  fs.writeFileSync(path.join(dir, `${name}.wait`), '');
  for (let waited = 0; waited < 30_000; waited += 100) {
    if (fs.existsSync(shown)) {
      const answer = fs.readFileSync(shown, 'utf8');
      fs.rmSync(shown, { force: true });
      assert.ok(answer.startsWith('ok'), `waiting for a dialog: ${answer}`);
      return answer.slice(3);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('no dialog was shown within 30 s');
}

const ACCESS_ORDER = ['none', 'copy', 'ro', 'rw'];

/**
 * Sets the workspace access through Sandbox: Set Workspace Access, clicking the dialog that more
 * access brings up, as the user would. Open sessions keep the access they have.
 */
export async function setWorkspaceAccess(access: 'none' | 'copy' | 'ro' | 'rw'): Promise<void> {
  const api = (await vscode.extensions.getExtension('agent-sandbox.agent-sandbox')!.activate()) as {
    service: { allowedAccess(): string };
  };
  const looser = ACCESS_ORDER.indexOf(access) > ACCESS_ORDER.indexOf(api.service.allowedAccess());
  const running = vscode.commands.executeCommand<string>('agentSandbox.setWorkspaceAccess', access);
  if (looser)
    await clickDialogButton(
      access === 'rw' ? 'Allow Read-Write' : access === 'copy' ? 'Allow a Copy' : 'Allow Read-Only',
    );
  assert.equal(await running, access);
}

/** Closes every editor, discarding unsaved changes (closing a changed editor would ask to save it). */
export async function closeAllEditors(): Promise<void> {
  for (let i = 0; i < 100 && vscode.window.tabGroups.all.some((group) => group.tabs.length > 0); i++) {
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  }
}

/**
 * Sets the workspace access the way a user does in settings.json: `agentSandbox.workspaceAccessByFolder`
 * in the user settings, for this folder (no dialog: the user edits their own settings).
 */
export async function setWorkspaceAccessInUserSettings(access: 'none' | 'ro' | 'rw'): Promise<void> {
  const config = vscode.workspace.getConfiguration('agentSandbox');
  const folder = fs.realpathSync(vscode.workspace.workspaceFolders![0]!.uri.fsPath);
  const current = config.inspect<Record<string, string>>('workspaceAccessByFolder')?.globalValue ?? {};
  await config.update('workspaceAccessByFolder', { ...current, [folder]: access }, vscode.ConfigurationTarget.Global);
}

/**
 * Calls a tool whose reach is more than the user granted for its sandbox: Agent Sandbox asks in its
 * own dialog, and the runner clicks `button` there as a person would. Returns the result's text and
 * the dialog's message.
 */
export async function invokeAllowing(
  button: 'Allow Once' | 'Allow for This Sandbox' | 'Allow for All One-Off Sandboxes' | 'Cancel',
  name: string,
  input: object,
): Promise<{ text: string; asked: string }> {
  const running = invoke(name, input);
  // Only Agent Sandbox's own dialog, not a confirmation that may still be closing.
  const asked = await clickDialogButton(button, 'Allow it?');
  return { text: await running, asked };
}
