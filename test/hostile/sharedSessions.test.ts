// A session outlives the call that opened it and is shared by every client of its folder (VS Code,
// the CLI). `agent-sandbox tool` promises that its policy is its flags and no more (issue 15 item 4,
// README "The command line"): an agent harness that runs it with no --workspace and no --network
// must not reach the folder or the network through a session VS Code (or an earlier command with
// more flags) opened in the same folder.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireEngine } from '../engine/harness';
import { giveToSandbox, writableFolder } from './hostFolder';
import { observe } from './report';
import { firstLine, toolbox } from './toolbox';

describe('sessions shared between clients: a CLI tool call gets no more than its flags', function () {
  let folder: string;
  let wide: ReturnType<typeof toolbox>;
  let bare: ReturnType<typeof toolbox>;
  let readOnly: ReturnType<typeof toolbox>;
  let readWrite: ReturnType<typeof toolbox>;

  before(async function () {
    await requireEngine(this);
    folder = writableFolder('agent-sandbox-hostile-shared-');
    writeFileSync(join(folder, 'secret.txt'), 'a host secret\n');
    // VS Code's path (the tools in this process, as client "vscode"), under a user who allows read-write and the network.
    wide = toolbox({ folder, settings: { workspaceAccess: 'rw', network: { mode: 'full' } } });
    const rw = await wide.call('sandbox_open', { runtime: 'bash', workspace_access: 'rw', network: false });
    assert.match(rw.text, /workspace access: rw/, rw.text);
    const net = await wide.call('sandbox_open', {
      session: 'net',
      runtime: 'bash',
      workspace_access: 'none',
      network: true,
    });
    assert.match(net.text, /network: on/, net.text);
    // The same folder through `agent-sandbox tool`, as another agent harness runs it.
    bare = toolbox({ folder, via: 'cli' });
    readOnly = toolbox({ folder, via: 'cli', settings: { workspaceAccess: 'ro' } });
    readWrite = toolbox({ folder, via: 'cli', settings: { workspaceAccess: 'rw' } });
  });

  after(async () => {
    for (const box of [bare, readOnly, readWrite, wide]) await box?.dispose();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('sandbox_exec with no flags does not write the folder through the read-write default session', async () => {
    const answer = await bare.call('sandbox_exec', { command: 'echo pwned > /workspace/pwned.txt; echo ran' });
    const written = existsSync(join(folder, 'pwned.txt'));
    observe(
      'shared sessions (cli)',
      'agent-sandbox tool sandbox_exec, no flags, in a folder whose default session VS Code opened read-write',
      'refused (more than --workspace none); the folder unchanged',
      written ? `FOLDER WRITTEN: ${firstLine(answer.text)}` : firstLine(answer.text),
      !written && !answer.ok,
    );
    assert.equal(written, false, answer.text);
    assert.match(answer.text, /^failed · permission denied\nSandbox "default" would read your workspace folder/);
    assert.match(answer.text, /more than this command allows \(--workspace none, no --network\)/);
    assert.match(answer.text, /Next: .*--workspace ro or rw/);
  });

  it('sandbox_fs_write and sandbox_fs_read with no flags do not touch the mounted folder either', async () => {
    const write = await bare.call('sandbox_fs_write', { files: [{ path: 'planted.txt', content: 'x' }] });
    const read = await bare.call('sandbox_fs_read', { path: 'secret.txt' });
    const written = existsSync(join(folder, 'planted.txt'));
    observe(
      'shared sessions (cli)',
      'agent-sandbox tool sandbox_fs_write / sandbox_fs_read, no flags, into the read-write default session',
      'both refused; the folder unchanged',
      `${written ? 'FOLDER WRITTEN' : 'not written'}; write: ${firstLine(write.text)}; read: ${firstLine(read.text)}`,
      !written && !write.ok && !read.ok && !read.text.includes('a host secret'),
    );
    assert.equal(written, false, write.text);
    assert.match(write.text, /^failed · permission denied/);
    assert.doesNotMatch(read.text, /a host secret/);
    assert.match(read.text, /^failed · permission denied\nSandbox "default" would read your workspace folder:/);
  });

  it('sandbox_exec without --network does not run in a networked session', async () => {
    const answer = await bare.call('sandbox_exec', { sandbox_id: 'net', command: 'ls /sys/class/net' });
    observe(
      'shared sessions (cli)',
      'agent-sandbox tool sandbox_exec, no --network, in a networked session VS Code opened',
      'refused (more than no --network)',
      firstLine(answer.text),
      !answer.ok && !/eth\d/.test(answer.text),
    );
    assert.doesNotMatch(answer.text, /eth\d/);
    assert.match(answer.text, /^failed · permission denied\nSandbox "net" would use the network:/);
  });

  it('with --workspace ro, reading the read-write session is allowed and changing it is not', async () => {
    const listed = await readOnly.call('sandbox_fs_list', {});
    assert.ok(listed.ok, listed.text);
    const answer = await readOnly.call('sandbox_exec', { command: 'echo pwned > /workspace/ro-pwned.txt' });
    const written = existsSync(join(folder, 'ro-pwned.txt'));
    observe(
      'shared sessions (cli)',
      'agent-sandbox tool --workspace ro: sandbox_exec in the read-write default session',
      'refused (changing the folder is more than --workspace ro); listing it is allowed',
      written ? `FOLDER WRITTEN: ${firstLine(answer.text)}` : firstLine(answer.text),
      !written && !answer.ok,
    );
    assert.equal(written, false, answer.text);
    assert.match(answer.text, /would .*change files in your workspace folder: more than this command allows/);
  });

  it('with --workspace rw, the call uses the session as before', async () => {
    const answer = await readWrite.call('sandbox_exec', { command: 'echo allowed > /workspace/allowed.txt; echo ran' });
    assert.ok(answer.ok, answer.text);
    assert.equal(readFileSync(join(folder, 'allowed.txt'), 'utf8'), 'allowed\n');
  });
});

describe('sessions shared between clients: protections lifted by one client do not hold for another', function () {
  let folder: string;
  let lifted: ReturnType<typeof toolbox>;
  let kept: ReturnType<typeof toolbox>;

  before(async function () {
    await requireEngine(this);
    folder = writableFolder('agent-sandbox-hostile-shared-config-');
    mkdirSync(join(folder, '.git', 'hooks'), { recursive: true });
    giveToSandbox(join(folder, '.git'));
    // One command lifts the protection of this folder's .git, .vscode, ... (--allow-config-writes) and opens the default session.
    lifted = toolbox({ folder, via: 'cli', settings: { workspaceAccess: 'rw', configWritesAllowedIn: [folder] } });
    const opened = await lifted.call('sandbox_open', { runtime: 'bash', workspace_access: 'rw' });
    assert.match(opened.text, /workspace access: rw/, opened.text);
    // Another agent harness runs with read-write access and the protections kept (no --allow-config-writes).
    kept = toolbox({ folder, via: 'cli', settings: { workspaceAccess: 'rw' } });
  });

  after(async () => {
    for (const box of [kept, lifted]) await box?.dispose();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('a call that keeps the protections does not plant a git hook through a session that lifted them', async () => {
    const hook = join(folder, '.git', 'hooks', 'pre-commit');
    const answer = await kept.call('sandbox_exec', {
      command:
        'printf "#!/bin/sh\\necho pwned\\n" > /workspace/.git/hooks/pre-commit && chmod +x /workspace/.git/hooks/pre-commit && echo planted',
    });
    const planted = existsSync(hook);
    observe(
      'shared sessions (cli)',
      'agent-sandbox tool --workspace rw (protections kept): a git hook written through a session opened with --allow-config-writes',
      'refused: the session can change .git, which this command keeps protected; no hook on the host',
      planted ? `HOOK PLANTED: ${firstLine(answer.text)}` : firstLine(answer.text),
      !planted && !answer.ok,
    );
    assert.equal(planted, false, answer.text);
    assert.match(
      answer.text,
      /^failed · permission denied\nSandbox "default" can change \.git, \.vscode, \.github, \.devcontainer/,
    );
    assert.match(answer.text, /--allow-config-writes/);
  });

  it('the command that lifted them still uses it', async () => {
    const answer = await lifted.call('sandbox_exec', { command: 'ls -d /workspace/.git && echo usable' });
    assert.ok(answer.ok, answer.text);
    assert.match(answer.text, /usable/);
  });
});
