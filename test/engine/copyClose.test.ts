/**
 * A copy session's changes are never lost by closing it without the user saying so, on a real
 * engine: sandbox_close keeps it open and tells the model to ask the user, agent-sandbox close
 * refuses without --discard, close --all keeps it and names it, idle collection and gc keep it.
 * The user's folder is untouched throughout, until apply.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxService } from '../../src/core/sessions/sandboxService';
import { parseSettings } from '../../src/core/spec/settings';
import { runCliText } from './cliRunner';
import { TEST_IMAGES, requireEngine, testEngine } from './harness';

/** A git work tree of three files. */
function makeRepo(): string {
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-copyclose-'));
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', folder, '-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args]);
  git('init', '-q');
  writeFileSync(join(folder, 'README.md'), 'one\ntwo\n');
  writeFileSync(join(folder, 'gone.txt'), 'to be deleted\n');
  writeFileSync(join(folder, 'keep.txt'), 'kept\n');
  git('add', '.');
  git('commit', '-q', '-m', 'initial');
  return folder;
}

/** Every file of the folder but .git, with its text: what "untouched" compares. */
function snapshot(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (prefix: string) => {
    for (const entry of readdirSync(join(folder, prefix), { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const path = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(path);
      else files[path] = readFileSync(join(folder, path), 'utf8');
    }
  };
  walk('');
  return files;
}

/** The three changes every test makes: README.md modified, gone.txt deleted, new.txt added. */
const CHANGE = 'echo three >> README.md && rm gone.txt && echo new > new.txt';

describe('closing a copy session with unapplied changes, against a real engine', function () {
  this.timeout(180_000);
  let stateDir: string;
  let savedStateDir: string | undefined;
  const folders: string[] = [];

  const newRepo = () => {
    const folder = makeRepo();
    folders.push(folder);
    return folder;
  };
  const cliIn =
    (folder: string) =>
    (...args: string[]) =>
      runCliText([args[0]!, '--folder', folder, ...args.slice(1)], { env: { AGENT_SANDBOX_STATE_DIR: stateDir } });
  const sessionNames = async (folder: string) => {
    const listed = await cliIn(folder)('ls', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    return (JSON.parse(listed.stdout) as { sessions: { name: string }[] }).sessions.map((s) => s.name).sort();
  };

  before(async function () {
    await requireEngine(this);
    savedStateDir = process.env.AGENT_SANDBOX_STATE_DIR;
    stateDir = mkdtempSync(join(tmpdir(), 'agent-sandbox-copyclose-state-'));
    process.env.AGENT_SANDBOX_STATE_DIR = stateDir;
  });

  afterEach(async () => {
    for (const folder of folders.splice(0)) {
      await cliIn(folder)('close', '--all', '--discard');
      rmSync(folder, { recursive: true, force: true });
    }
  });

  after(() => {
    if (savedStateDir === undefined) delete process.env.AGENT_SANDBOX_STATE_DIR;
    else process.env.AGENT_SANDBOX_STATE_DIR = savedStateDir;
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  it('sandbox_close keeps a copy with changes open and lists them for the model; after apply of everything it closes', async () => {
    const folder = newRepo();
    const before = snapshot(folder);
    const cli = cliIn(folder);
    const tool = (name: string, input: object) => cli('tool', name, JSON.stringify(input), '--workspace', 'copy');

    const opened = await tool('sandbox_open', { session: 'agent', runtime: 'bash', workspace_access: 'copy' });
    assert.equal(opened.code, 0, opened.stdout + opened.stderr);
    // The open result tells the model that the user reviews the changes, and where.
    assert.match(
      opened.stdout,
      /until the user reviews and applies them, in VS Code under Source Control › "Sandbox changes"; elsewhere with agent-sandbox diff --session agent/,
    );
    const changed = await tool('sandbox_exec', { sandbox_id: 'agent', command: CHANGE });
    assert.equal(changed.code, 0, changed.stdout + changed.stderr);

    const refused = await tool('sandbox_close', { sandbox_id: 'agent' });
    assert.equal(refused.code, 0, 'a result, not a failure: ' + refused.stderr);
    assert.match(
      refused.stdout,
      /^Sandbox "agent" was NOT closed: its copy of the workspace folder has 3 changes \(1 added, 1 modified, 1 deleted\) that the user has not applied to their folder yet: modified README\.md, deleted gone\.txt and added new\.txt\./,
    );
    assert.match(
      refused.stdout,
      /Source Control › "Sandbox changes"; elsewhere with agent-sandbox diff --session agent/,
    );
    assert.match(refused.stdout, /ask them to apply or discard them; do not call sandbox_close for it again/);
    assert.deepEqual(await sessionNames(folder), ['agent']);
    assert.deepEqual(snapshot(folder), before, 'the folder is untouched');

    // The user applies everything: nothing is left to lose, and the same call closes it.
    const applied = await cli('apply', '--session', 'agent');
    assert.equal(applied.code, 0, applied.stdout + applied.stderr);
    assert.deepEqual(snapshot(folder), { 'README.md': 'one\ntwo\nthree\n', 'keep.txt': 'kept\n', 'new.txt': 'new\n' });
    const closed = await tool('sandbox_close', { sandbox_id: 'agent' });
    assert.equal(closed.code, 0, closed.stderr);
    assert.match(closed.stdout, /^Closed sandbox "agent"/);
    assert.deepEqual(await sessionNames(folder), []);
  });

  it('agent-sandbox close refuses a copy with unapplied changes (counted, naming diff, apply and --discard); --discard closes it', async () => {
    const folder = newRepo();
    const before = snapshot(folder);
    const cli = cliIn(folder);
    assert.equal((await cli('open', '--session', 'work', '--runtime', 'bash', '--workspace', 'copy')).code, 0);
    assert.equal((await cli('exec', '--session', 'work', '--', 'sh', '-c', CHANGE)).code, 0);

    const refused = await cli('close', '--session', 'work');
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.equal(refused.stdout, '');
    assert.match(
      refused.stderr,
      /session work was not closed: 3 changes \(1 added, 1 modified, 1 deleted\) in its copy are not applied to the folder: modified README\.md, deleted gone\.txt and added new\.txt\. See them with agent-sandbox diff --session work, apply them with agent-sandbox apply --session work, or close it losing them with agent-sandbox close --session work --discard\./,
    );
    assert.deepEqual(await sessionNames(folder), ['work']);
    // The changes are all still there to review.
    const diff = await cli('diff', '--session', 'work');
    assert.match(diff.stderr, /3 changed: 1 added, 1 modified, 1 deleted/);

    const discarded = await cli('close', '--session', 'work', '--discard');
    assert.equal(discarded.code, 0, discarded.stderr);
    assert.equal(discarded.stdout, 'Closed work.\n');
    assert.match(
      discarded.stderr,
      /Discarded 3 changes \(1 added, 1 modified, 1 deleted\) not applied to the folder: modified README\.md/,
    );
    assert.deepEqual(await sessionNames(folder), []);
    assert.deepEqual(snapshot(folder), before, 'discarding leaves the folder as it was');
  });

  it('close --all closes the others and names the copy it kept; --all --discard closes that one too', async () => {
    const folder = newRepo();
    const before = snapshot(folder);
    const cli = cliIn(folder);
    for (const [name, workspace] of [
      ['held', 'copy'],
      ['clean', 'copy'],
      ['plain', 'none'],
    ])
      assert.equal((await cli('open', '--session', name!, '--runtime', 'bash', '--workspace', workspace!)).code, 0);
    assert.equal((await cli('exec', '--session', 'held', '--', 'sh', '-c', 'echo three >> README.md')).code, 0);

    const all = await cli('close', '--all');
    assert.equal(all.code, 1, all.stdout + all.stderr);
    assert.match(all.stdout, /^Closed (clean, plain|plain, clean)\.\n$/);
    assert.match(
      all.stderr,
      /session held was not closed: 1 change \(0 added, 1 modified, 0 deleted\) in its copy .*agent-sandbox close --session held --discard/,
    );
    assert.deepEqual(await sessionNames(folder), ['held']);

    const json = await cli('close', '--all', '--json');
    assert.equal(json.code, 1);
    const parsed = JSON.parse(json.stdout) as {
      closed: unknown[];
      held: { session: string; modified: number; changes: unknown[] }[];
    };
    assert.deepEqual(parsed.closed, []);
    assert.deepEqual(
      parsed.held.map((held) => [held.session, held.modified, held.changes]),
      [['held', 1, [{ path: 'README.md', change: 'modified' }]]],
    );

    const discarded = await cli('close', '--all', '--discard');
    assert.equal(discarded.code, 0, discarded.stderr);
    assert.equal(discarded.stdout, 'Closed held.\n');
    assert.match(discarded.stderr, /Discarded 1 change \(0 added, 1 modified, 0 deleted\)/);
    assert.deepEqual(await sessionNames(folder), []);
    assert.deepEqual(snapshot(folder), before);
  });

  it('idle collection and gc keep a copy with changes open and say so; once applied, idle collection closes it', async () => {
    const folder = newRepo();
    const before = snapshot(folder);
    const clock = { now: Date.now() };
    const logs: string[] = [];
    const settings = parseSettings({
      images: TEST_IMAGES,
      workspaceAccess: 'copy',
      sessions: { idleTimeoutMinutes: 5 },
    });
    const service = new SandboxService({
      engine: () => testEngine(),
      settings: () => settings,
      workspaceFolder: () => folder,
      trusted: () => true,
      client: 'vscode',
      now: () => clock.now,
      log: (_level, message) => logs.push(message),
    });
    const { sandbox } = await service.openSession({ session: 'idle', runtime: 'bash', workspaceAccess: 'copy' });
    assert.equal((await sandbox.exec({ command: CHANGE, cwd: '/workspace' })).exitCode, 0);

    clock.now += 6 * 60_000;
    assert.deepEqual(await service.collect(), []);
    assert.match(
      logs.join('\n'),
      /Kept session idle open: its copy of the folder has 3 changes \(1 added, 1 modified, 1 deleted\) not applied to the folder/,
    );
    assert.deepEqual(await sessionNames(folder), ['idle']);

    // A VS Code session with no window left is an orphan: gc keeps it for its changes, and says so.
    const gc = await cliIn(folder)('gc', '--grace', '0');
    assert.equal(gc.code, 0, gc.stderr);
    assert.match(
      gc.stdout,
      new RegExp(
        `Kept session idle open: .*3 changes.* agent-sandbox close --session idle --folder ${folder.replace(/[.]/g, '\\.')} --discard`,
      ),
    );
    assert.deepEqual(await sessionNames(folder), ['idle']);
    assert.deepEqual(snapshot(folder), before);

    assert.equal((await cliIn(folder)('apply', '--session', 'idle')).code, 0);
    const collected = await service.collect();
    assert.deepEqual(
      collected.map((entry) => [entry.session.name, entry.reason]),
      [['idle', 'idle']],
    );
    assert.deepEqual(await sessionNames(folder), []);
  });
});
