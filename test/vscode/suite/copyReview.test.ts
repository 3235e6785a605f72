// Workspace access "copy" as a user reviews it in the real VS Code: the agent changes a copy through
// the tools; Source Control › Sandbox changes lists exactly what changed; a click opens the diff (the
// folder's file beside the sandbox's) or, for a file changed on both sides, the merge editor; one
// file is applied (and Edit › Undo takes it back), another discarded; a conflict is never
// overwritten; a protected path waits for the user's own confirmation. The folder's bytes are
// checked on disk after each step.
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  clickDialogButton,
  closeAllEditors,
  invoke,
  invokeAllowing,
  lookUntil,
  screenshot,
  setWorkspaceAccess,
} from './helpers';

interface Change {
  path: string;
  change: string;
  conflict: boolean;
  held?: string;
}

interface SessionChanges {
  id: string;
  sandboxId: string;
  changes: Change[];
}

const FOLDER = 'copy-review';

async function changes(): Promise<SessionChanges | undefined> {
  await vscode.commands.executeCommand('agentSandbox.copy.refresh');
  const sessions = (await vscode.commands.executeCommand<SessionChanges[]>('agentSandbox.copy.changes')) ?? [];
  return sessions.find((session) => session.sandboxId === 'review');
}

function summary(session: SessionChanges | undefined): string[] {
  return (session?.changes ?? []).map(
    (change) =>
      `${change.change} ${change.path}${change.conflict ? ' (conflict)' : ''}${change.held ? ` (held: ${change.held})` : ''}`,
  );
}

async function sandboxText(file: string): Promise<string> {
  // The result's first line names the file, its size and encoding; the content follows.
  const text = await invoke('sandbox_fs_read', { sandbox_id: 'review', path: `/workspace/${FOLDER}/${file}` });
  return text.slice(text.indexOf('\n') + 1);
}

async function waitFor<T>(what: string, probe: () => T | undefined): Promise<T> {
  for (let tries = 0; tries < 100; tries++) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} never happened`);
}

suite('Copy sessions reviewed in Source Control', () => {
  const root = fs.realpathSync(vscode.workspace.workspaceFolders![0]!.uri.fsPath);
  const dir = path.join(root, FOLDER);
  const host = (file: string) => fs.readFileSync(path.join(dir, file), 'utf8');

  suiteSetup(async function () {
    this.timeout(120_000);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'edit.txt'), 'one\ntwo\nthree\n');
    fs.writeFileSync(path.join(dir, 'remove.txt'), 'to be removed\n');
    fs.writeFileSync(path.join(dir, 'discard.txt'), 'the folder keeps this\n');
    fs.writeFileSync(path.join(dir, 'conflict.txt'), 'base line\nsecond\n');
    fs.writeFileSync(path.join(dir, 'keep.txt'), 'untouched\n');
    fs.writeFileSync(path.join(dir, 'review-me.txt'), 'original\n');
    await setWorkspaceAccess('copy');
    // Reading the folder is more than this sandbox was allowed so far: Agent Sandbox asks, the user allows it.
    const { text: opened, asked } = await invokeAllowing('Allow for This Sandbox', 'sandbox_open', {
      session: 'review',
      runtime: 'bash',
      workspace_access: 'copy',
    });
    assert.match(asked, /copied into a private \/workspace/);
    assert.match(opened, /copied into \/workspace/);
    const edited = await invoke('sandbox_exec', {
      sandbox_id: 'review',
      command: [
        `cd /workspace/${FOLDER}`,
        "printf 'one\\nTWO\\nthree\\n' > edit.txt",
        'rm remove.txt',
        'echo new > added.txt',
        "echo 'the sandbox wants this' > discard.txt",
        "printf 'base line\\nsecond, from the sandbox\\n' > conflict.txt",
        "printf '\\000\\001\\002\\377' > picture.bin",
        "mkdir -p ../.github/workflows && echo 'on: push' > ../.github/workflows/ci.yml",
        'echo done',
      ].join(' && '),
    });
    assert.match(edited, /done/);
    // The user edits the same file in the folder meanwhile.
    fs.writeFileSync(path.join(dir, 'conflict.txt'), 'base line\nsecond, from the user\n');
  });

  suiteTeardown(async function () {
    this.timeout(60_000);
    await closeAllEditors();
    await vscode.commands.executeCommand('agentSandbox.copy.discardAll', { sandboxId: 'review', confirmed: true });
    await vscode.commands.executeCommand('agentSandbox.closeAllSessions', 'confirmed');
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(path.join(root, '.github'), { recursive: true, force: true });
    await setWorkspaceAccess('none');
  });

  test('lists exactly what changed, with the conflict and the protected path marked, in Source Control and the panel', async function () {
    this.timeout(60_000);
    assert.deepEqual(summary(await changes()), [
      'added .github/workflows/ci.yml (held: editor or version-control configuration)',
      `added ${FOLDER}/added.txt`,
      `modified ${FOLDER}/conflict.txt (conflict)`,
      `modified ${FOLDER}/discard.txt`,
      `modified ${FOLDER}/edit.txt`,
      `added ${FOLDER}/picture.bin`,
      `deleted ${FOLDER}/remove.txt`,
    ]);
    await vscode.commands.executeCommand('workbench.view.scm');
    const seen = await lookUntil('scm', /Session review/, 'the session group in Source Control');
    for (const name of ['edit.txt', 'added.txt', 'remove.txt', 'conflict.txt', 'ci.yml'])
      assert.ok(seen.text.includes(name), `Source Control shows ${name}:\n${seen.text}`);
    await screenshot('scm-sandbox-changes');

    await vscode.commands.executeCommand('agentSandbox.showPanel');
    await lookUntil(
      'panel',
      /7 changed files await review \(1 conflict, 1 needs confirmation\)[\s\S]*button "Review the changes of review in Source Control"/,
      'the count of changes in the panel',
    );
  });

  test('a change opens in the diff editor: the folder’s file on the left, the sandbox’s on the right', async function () {
    this.timeout(60_000);
    const session = (await changes())!;
    assert.equal(
      await vscode.commands.executeCommand('agentSandbox.copy.openChange', {
        sessionId: session.id,
        path: `${FOLDER}/edit.txt`,
      }),
      'diff',
    );
    const tab = await waitFor('the diff editor', () =>
      vscode.window.tabGroups.all
        .flatMap((group) => group.tabs)
        .find((candidate) => candidate.input instanceof vscode.TabInputTextDiff),
    );
    const input = tab.input as vscode.TabInputTextDiff;
    assert.equal(input.original.fsPath, path.join(dir, 'edit.txt'));
    assert.equal(input.modified.scheme, 'agent-sandbox-copy');
    assert.equal((await vscode.workspace.openTextDocument(input.original)).getText(), 'one\ntwo\nthree\n');
    assert.equal((await vscode.workspace.openTextDocument(input.modified)).getText(), 'one\nTWO\nthree\n');
    assert.match(tab.label, /edit\.txt \(folder ↔ sandbox review\)/);
    // The sandbox's side is read-only.
    await assert.rejects(
      Promise.resolve(vscode.workspace.fs.writeFile(input.modified, Buffer.from('x'))),
      /NoPermissions|permission/i,
    );
    await screenshot('copy-diff-editor');
    await closeAllEditors();
  });

  test('a file changed on both sides opens as a merge and is never overwritten by apply', async function () {
    this.timeout(60_000);
    const session = (await changes())!;
    assert.equal(
      await vscode.commands.executeCommand('agentSandbox.copy.openChange', {
        sessionId: session.id,
        path: `${FOLDER}/conflict.txt`,
      }),
      'merge',
    );
    const tab = await waitFor('the merge editor', () =>
      vscode.window.tabGroups.all
        .flatMap((group) => group.tabs)
        .find((candidate) => /^Merging: conflict\.txt/.test(candidate.label)),
    );
    assert.ok(tab.isActive);
    // Its three sides, as the merge editor reads them: the copy's base, the folder now, the sandbox's.
    const side = (query: string) =>
      vscode.Uri.from({ scheme: 'agent-sandbox-copy', authority: session.id, path: `/${FOLDER}/conflict.txt`, query });
    const text = async (uri: vscode.Uri) => Buffer.from(await vscode.workspace.fs.readFile(uri)).toString('utf8');
    const baseSha = createHash('sha256').update('base line\nsecond\n').digest('hex');
    assert.equal(await text(side(`base=${baseSha}`)), 'base line\nsecond\n');
    assert.equal(await text(side('host')), 'base line\nsecond, from the user\n');
    assert.equal(await text(side('')), 'base line\nsecond, from the sandbox\n');
    await closeAllEditors();

    await vscode.commands.executeCommand('agentSandbox.copy.apply', {
      sandboxId: 'review',
      paths: [`${FOLDER}/conflict.txt`],
    });
    assert.equal(host('conflict.txt'), 'base line\nsecond, from the user\n', 'the user’s edit stays');
    assert.ok(summary(await changes()).includes(`modified ${FOLDER}/conflict.txt (conflict)`));

    // The user merges in the folder's file, then marks it merged: the sandbox gets the result.
    fs.writeFileSync(path.join(dir, 'conflict.txt'), 'base line\nsecond, merged\n');
    await vscode.commands.executeCommand('agentSandbox.copy.markResolved', {
      sandboxId: 'review',
      paths: [`${FOLDER}/conflict.txt`],
    });
    assert.equal(await sandboxText('conflict.txt'), 'base line\nsecond, merged\n');
    assert.ok(!summary(await changes()).some((line) => line.includes('conflict.txt')));
  });

  test('apply one file (Edit › Undo takes it back), discard another', async function () {
    this.timeout(60_000);
    await vscode.commands.executeCommand('agentSandbox.copy.apply', {
      sandboxId: 'review',
      paths: [`${FOLDER}/edit.txt`],
    });
    assert.equal(host('edit.txt'), 'one\nTWO\nthree\n');
    assert.ok(!summary(await changes()).some((line) => line.includes('edit.txt')));

    // One step back with VS Code's own undo, in the file's editor; saved, the change is pending again.
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(dir, 'edit.txt')));
    await vscode.window.showTextDocument(document);
    await vscode.commands.executeCommand('undo');
    assert.equal(document.getText(), 'one\ntwo\nthree\n');
    await document.save();
    assert.equal(host('edit.txt'), 'one\ntwo\nthree\n');
    assert.ok(summary(await changes()).includes(`modified ${FOLDER}/edit.txt`), 'undone, the change shows again');
    await vscode.commands.executeCommand('agentSandbox.copy.apply', {
      sandboxId: 'review',
      paths: [`${FOLDER}/edit.txt`],
    });
    assert.equal(host('edit.txt'), 'one\nTWO\nthree\n');
    await closeAllEditors();

    await vscode.commands.executeCommand('agentSandbox.copy.discard', {
      sandboxId: 'review',
      paths: [`${FOLDER}/discard.txt`],
      confirmed: true,
    });
    assert.equal(host('discard.txt'), 'the folder keeps this\n');
    assert.equal(await sandboxText('discard.txt'), 'the folder keeps this\n');
    assert.ok(!summary(await changes()).some((line) => line.includes('discard.txt')));
  });

  test('what the agent changes after the user looked is held back until looked at again', async function () {
    this.timeout(60_000);
    const sandboxWrites = (text: string) =>
      invoke('sandbox_exec', {
        sandbox_id: 'review',
        command: `printf '${text}' > /workspace/${FOLDER}/review-me.txt`,
      });
    await sandboxWrites('shown\\n');
    const session = (await changes())!;
    await vscode.commands.executeCommand('agentSandbox.copy.openChange', {
      sessionId: session.id,
      path: `${FOLDER}/review-me.txt`,
    });
    const shown = await waitFor('the diff editor', () =>
      vscode.window.tabGroups.all
        .flatMap((group) => group.tabs)
        .find((candidate) => candidate.input instanceof vscode.TabInputTextDiff),
    );
    const modified = (shown.input as vscode.TabInputTextDiff).modified;
    assert.equal((await vscode.workspace.openTextDocument(modified)).getText(), 'shown\n');
    await closeAllEditors();
    // The agent changes the file after the user saw it: apply does not take the unseen bytes.
    await sandboxWrites('swapped\\n');
    await changes();
    await vscode.commands.executeCommand('agentSandbox.copy.apply', {
      sandboxId: 'review',
      paths: [`${FOLDER}/review-me.txt`],
    });
    assert.equal(host('review-me.txt'), 'original\n', 'held back');
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // past the file system's two-second reuse of a read
    await vscode.commands.executeCommand('agentSandbox.copy.openChange', {
      sessionId: session.id,
      path: `${FOLDER}/review-me.txt`,
    });
    const again = await waitFor('the diff editor', () =>
      vscode.window.tabGroups.all
        .flatMap((group) => group.tabs)
        .find((candidate) => candidate.input instanceof vscode.TabInputTextDiff),
    );
    assert.equal(
      (await vscode.workspace.openTextDocument((again.input as vscode.TabInputTextDiff).modified)).getText(),
      'swapped\n',
    );
    await closeAllEditors();
    await vscode.commands.executeCommand('agentSandbox.copy.apply', {
      sandboxId: 'review',
      paths: [`${FOLDER}/review-me.txt`],
    });
    assert.equal(host('review-me.txt'), 'swapped\n', 'applied once seen');
  });

  test('apply all holds back the protected path until the user confirms it', async function () {
    this.timeout(60_000);
    const running = vscode.commands.executeCommand('agentSandbox.copy.applyAll', { sandboxId: 'review' });
    const asked = await clickDialogButton('Apply the Others');
    assert.match(asked, /\.github\/workflows\/ci\.yml \(editor or version-control configuration\)/);
    await running;
    assert.equal(host('added.txt'), 'new\n');
    assert.deepEqual([...fs.readFileSync(path.join(dir, 'picture.bin'))], [0, 1, 2, 255]);
    assert.ok(!fs.existsSync(path.join(dir, 'remove.txt')));
    assert.equal(host('keep.txt'), 'untouched\n');
    assert.ok(!fs.existsSync(path.join(root, '.github')), 'the protected path waits');
    assert.deepEqual(summary(await changes()), [
      'added .github/workflows/ci.yml (held: editor or version-control configuration)',
    ]);

    const again = vscode.commands.executeCommand('agentSandbox.copy.apply', {
      sandboxId: 'review',
      paths: ['.github/workflows/ci.yml'],
    });
    await clickDialogButton('Apply Them Too');
    await again;
    assert.equal(fs.readFileSync(path.join(root, '.github/workflows/ci.yml'), 'utf8'), 'on: push\n');
    assert.deepEqual(summary(await changes()), []);
  });

  test('closing a session with changes not applied asks first, and keeps the folder as it is', async function () {
    this.timeout(60_000);
    await invoke('sandbox_exec', { sandbox_id: 'review', command: `echo late > /workspace/${FOLDER}/late.txt` });
    const first = vscode.commands.executeCommand('agentSandbox.closeSession', 'review');
    const asked = await clickDialogButton('Review Changes');
    assert.match(
      asked,
      /Session review has 1 change\(s\) in its copy that were not applied to the folder: copy-review\/late\.txt/,
    );
    assert.equal(await first, undefined);
    assert.deepEqual(summary(await changes()), [`added ${FOLDER}/late.txt`], 'still open, the change still there');

    const second = vscode.commands.executeCommand('agentSandbox.closeSession', 'review');
    await clickDialogButton('Discard and Close');
    await second;
    assert.equal(await changes(), undefined, 'closed');
    assert.ok(!fs.existsSync(path.join(dir, 'late.txt')), 'the discarded change never reached the folder');
    assert.equal(host('edit.txt'), 'one\nTWO\nthree\n');
  });
});
