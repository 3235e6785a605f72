// Editor and VCS configuration in a read-write workspace (.git, .vscode, .github, .devcontainer):
// code there runs on the host at the next build, commit or reload. Every attack is judged by the
// host's bytes, modes and inodes of those paths before and after.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROTECTED_PATHS } from '../../src/core/policy/protectedPaths';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { requireEngine, testEngine } from '../engine/harness';
import { giveToSandbox, treeState, writableFolder } from './hostFolder';
import { observe } from './report';
import { firstLine, toolbox, type ToolPath } from './toolbox';

type Box = ReturnType<typeof toolbox>;

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'safe.directory=*', '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/** A repository with a commit and a .vscode/settings.json; .github and .devcontainer do not exist. */
function repository(): string {
  const folder = writableFolder('agent-sandbox-protected-');
  git(folder, 'init', '-q');
  writeFileSync(join(folder, 'README.md'), '# project\n');
  mkdirSync(join(folder, '.vscode'));
  writeFileSync(join(folder, '.vscode', 'settings.json'), '{ "editor.tabSize": 2 }\n');
  git(folder, 'add', 'README.md', '.vscode');
  git(folder, 'commit', '-q', '-m', 'first');
  giveToSandbox(folder);
  return folder;
}

const states = (folder: string) => Object.fromEntries(PROTECTED_PATHS.map((name) => [name, treeState(folder, name)]));
const changed = (folder: string, before: Record<string, string>) =>
  PROTECTED_PATHS.filter((name) => treeState(folder, name) !== before[name]);

const ATTACKS: { attack: string; command: string }[] = [
  {
    attack: 'append to .git/config (core.hooksPath)',
    command: 'printf "[core]\\n\\thooksPath = /tmp\\n" >> .git/config',
  },
  {
    attack: 'write .git/hooks/pre-commit',
    command: 'printf "#!/bin/sh\\necho owned\\n" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit',
  },
  {
    attack: 'overwrite .vscode/settings.json (agentSandbox.network on)',
    command: 'echo \'{"agentSandbox.network": true}\' > .vscode/settings.json',
  },
  {
    attack: 'create .vscode/tasks.json',
    command:
      'echo \'{"version":"2.0.0","tasks":[{"label":"x","command":"id","runOptions":{"runOn":"folderOpen"}}]}\' > .vscode/tasks.json',
  },
  {
    attack: 'create the missing .github/workflows/ci.yml',
    command: 'mkdir -p .github/workflows && echo "on: push" > .github/workflows/ci.yml',
  },
  {
    attack: 'create the missing .devcontainer/devcontainer.json',
    command: 'mkdir -p .devcontainer && echo \'{"postCreateCommand":"id"}\' > .devcontainer/devcontainer.json',
  },
  { attack: 'rm -rf of all four', command: 'rm -rf .git .vscode .github .devcontainer' },
  {
    attack: 'mv .git away and put a new one in its place',
    command: 'mv .git .git-old; mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit',
  },
  { attack: 'mv .vscode out of the mount (/tmp)', command: 'mv .vscode /tmp/vscode-moved' },
  {
    attack: 'mv a prepared folder onto .vscode and .github',
    command:
      'mkdir -p prepared && echo "{}" > prepared/settings.json && cp -r prepared prepared2; mv -T prepared .vscode; mv -T prepared2 .github',
  },
  {
    attack: 'rmdir the .devcontainer placeholder, then a symlink in its place',
    command: 'rmdir .devcontainer; ln -s /tmp .devcontainer',
  },
  {
    attack: 'hard link .git/config out, then write the link',
    command: 'ln .git/config linked-config && echo evil >> linked-config',
  },
  {
    attack: 'python os.rename / os.replace / shutil.rmtree',
    command:
      "python3 -c \"import os, shutil\nfor f in (lambda: os.rename('.git', 'g'), lambda: os.replace('.vscode', 'v'), lambda: shutil.rmtree('.github')):\n    try: f()\n    except OSError as e: print(e)\"",
  },
  { attack: 'rename the parent (/workspace) itself', command: 'mv /workspace /tmp/ws; cd / && mv workspace ws2' },
];

for (const via of ['tools', 'cli'] as ToolPath[])
  describe(`protected editor and VCS paths in a read-write workspace (${via})`, function () {
    let box: Box;
    let folder: string;
    let initial: Record<string, string>;
    const gitConfig = () => readFileSync(join(folder, '.git', 'config'), 'utf8');
    const settings = () => readFileSync(join(folder, '.vscode', 'settings.json'), 'utf8');
    let configBytes: string;
    let settingsBytes: string;
    let openedText: string;

    before(async function () {
      await requireEngine(this);
      folder = repository();
      configBytes = gitConfig();
      settingsBytes = settings();
      box = toolbox({ folder, via, settings: { workspaceAccess: 'rw' } });
      const opened = await box.call('sandbox_open', { session: 'guard', runtime: 'python' });
      assert.ok(opened.ok, opened.text);
      openedText = opened.text;
      // After the open: the placeholders it announces are the baseline (checked on their own below).
      initial = states(folder);
    });

    after(async () => {
      await box?.dispose();
      if (folder) rmSync(folder, { recursive: true, force: true });
    });

    for (const { attack, command } of ATTACKS) {
      it(attack, async () => {
        const answer = await box.call('sandbox_exec', { sandbox_id: 'guard', command });
        const touched = changed(folder, initial);
        const errors = answer.text
          .split('\n')
          .filter((line) => /Read-only|busy|cross-device|not permitted|denied|exists/i.test(line))
          .slice(0, 2)
          .join(' · ');
        observe(
          `protected (${via})`,
          attack,
          'refused; .git, .vscode, .github, .devcontainer byte-identical on the host',
          touched.length
            ? `host changed: ${touched.join(', ')}`
            : `host unchanged; ${errors || firstLine(answer.text)}`,
          touched.length === 0,
        );
        assert.deepEqual(touched, [], `changed on the host by: ${attack}`);
      });
    }

    it('the file tools: write .vscode/settings.json and .github/x.yml, delete .git', async () => {
      const write = await box.call('sandbox_fs_write', {
        sandbox_id: 'guard',
        files: [{ path: '.vscode/settings.json', content: '{"agentSandbox.network": true}' }],
      });
      const create = await box.call('sandbox_fs_write', {
        sandbox_id: 'guard',
        files: [{ path: '.github/workflows/x.yml', content: 'on: push' }],
      });
      const remove = await box.call('sandbox_fs_delete', { sandbox_id: 'guard', path: '.git', recursive: true });
      const touched = changed(folder, initial);
      observe(
        `protected (${via})`,
        'sandbox_fs_write / sandbox_fs_delete on protected paths',
        'refused with an error; host unchanged',
        touched.length
          ? `host changed: ${touched.join(', ')}`
          : `host unchanged; ${[write, create, remove].map((answer) => `${answer.ok ? 'ok' : 'error'}: ${firstLine(answer.text).slice(0, 50)}`).join(' · ')}`,
        touched.length === 0 && !write.ok && !create.ok && !remove.ok,
      );
      assert.deepEqual(touched, []);
      assert.ok(!write.ok && !create.ok && !remove.ok);
    });

    it('the exact bytes of .git/config and .vscode/settings.json, ordinary writes, and git on the host', async () => {
      const answer = await box.call('sandbox_exec', {
        sandbox_id: 'guard',
        command: 'echo ok > notes.txt && mkdir -p src && echo "print(1)" > src/main.py && echo written',
      });
      assert.match(answer.text, /written/);
      const status = git(folder, 'status', '--porcelain');
      const top = git(folder, 'rev-parse', '--show-toplevel').trim();
      const same = gitConfig() === configBytes && settings() === settingsBytes;
      const ok =
        same &&
        readFileSync(join(folder, 'notes.txt'), 'utf8') === 'ok\n' &&
        /\?\? notes.txt/.test(status) &&
        top === folder;
      observe(
        `protected (${via})`,
        'host after every attack: config bytes, an ordinary write, git status',
        'bytes identical; notes.txt written; git works on the host',
        `${same ? 'bytes identical' : 'BYTES CHANGED'}; git status: ${status.trim().split('\n').join(', ')}`,
        ok,
      );
      assert.equal(gitConfig(), configBytes);
      assert.equal(settings(), settingsBytes);
      assert.ok(ok, status);
    });

    it('placeholders are removed when the session closes; the real folders stay', async () => {
      const during = ['.github', '.devcontainer'].filter((name) => existsSync(join(folder, name)));
      const closed = await box.call('sandbox_close', { sandbox_id: 'guard' });
      assert.ok(closed.ok, closed.text);
      const left = ['.github', '.devcontainer'].filter((name) => existsSync(join(folder, name)));
      const kept = existsSync(join(folder, '.git', 'config')) && existsSync(join(folder, '.vscode', 'settings.json'));
      const announced = /empty folders of that name were made/.test(openedText);
      observe(
        `protected (${via})`,
        'host folder after the session closed',
        'placeholders announced at open, none left after; .git and .vscode as they were',
        `placeholders during the session: ${during.join(', ') || 'none'} (${announced ? 'announced' : 'NOT announced'}); left after: ${left.join(', ') || 'none'}`,
        left.length === 0 && kept && announced,
      );
      assert.ok(announced, openedText);
      assert.deepEqual(left, []);
      assert.ok(kept);
    });
  });

describe('protected paths: repositories, worktrees, links, several sessions', function () {
  before(async function () {
    await requireEngine(this);
  });

  it('an empty .git placeholder in a subfolder leaves the parent repository working on the host', async () => {
    const parent = repository();
    const folder = join(parent, 'sub');
    mkdirSync(folder);
    giveToSandbox(folder);
    const box = toolbox({ folder, settings: { workspaceAccess: 'rw' } });
    try {
      const made = await box.call('sandbox_exec', {
        command: 'mkdir -p .git/hooks && echo evil > .git/hooks/post-checkout; ls -la .git',
      });
      const placeholder = existsSync(join(folder, '.git')) ? lstatSync(join(folder, '.git')) : undefined;
      const top = git(folder, 'rev-parse', '--show-toplevel').trim();
      const status = git(folder, 'status', '--porcelain');
      const hook = existsSync(join(folder, '.git', 'hooks'));
      observe(
        'protected',
        'subfolder of a repository: create .git/hooks there',
        'refused; git on the host still finds the parent repository',
        `placeholder: ${placeholder?.isDirectory() ? 'empty dir' : 'none'}; hooks made: ${hook}; git toplevel ${top === parent ? 'is the parent' : top}; ${firstLine(made.text)}`,
        top === parent && !hook,
      );
      assert.equal(top, parent);
      assert.equal(status, '');
      assert.ok(!hook);
      await box.dispose();
      assert.ok(!existsSync(join(folder, '.git')), 'the placeholder is gone after the session');
    } finally {
      await box.dispose();
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it("a worktree's .git file is mounted read-only as a file", async () => {
    const folder = writableFolder('agent-sandbox-worktree-');
    writeFileSync(join(folder, '.git'), 'gitdir: /nonexistent/.git/worktrees/w\n');
    giveToSandbox(folder);
    const before = treeState(folder, '.git');
    const box = toolbox({ folder, settings: { workspaceAccess: 'rw' } });
    try {
      const answer = await box.call('sandbox_exec', {
        command: 'echo "gitdir: /tmp/evil" > .git; rm -f .git; mv .git g; ln .git hl',
      });
      const same = treeState(folder, '.git') === before;
      observe(
        'protected',
        '.git as a file (a worktree): overwrite, rm, mv, ln',
        'all refused; the file byte-identical',
        `${same ? 'unchanged' : 'CHANGED'}; ${firstLine(answer.text)}`,
        same,
      );
      assert.ok(same);
    } finally {
      await box.dispose();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('a protected name that is a symbolic link is refused rather than mounted', async () => {
    const folder = writableFolder('agent-sandbox-linked-');
    const outside = writableFolder('agent-sandbox-outside-');
    writeFileSync(join(outside, 'secret'), 'host secret\n');
    symlinkSync(outside, join(folder, '.github'));
    const box = toolbox({ folder, settings: { workspaceAccess: 'rw' } });
    try {
      const answer = await box.call('sandbox_exec', { command: 'cat .github/secret; ls -la .github/' });
      const leaked = /host secret/.test(answer.text);
      const link = lstatSync(join(folder, '.github')).isSymbolicLink() && !existsSync(join(folder, '.git'));
      observe(
        'protected',
        '.github is a symlink to a host folder',
        'no rw session (error says why); the link left as is, no placeholder left, nothing outside exposed',
        `${answer.ok ? 'session opened' : 'refused'}: ${firstLine(answer.text).slice(0, 110)}`,
        !leaked && !answer.ok && link,
      );
      assert.ok(!leaked, 'the linked host folder is not visible');
      assert.ok(!answer.ok);
      assert.match(answer.text, /symbolic link/);
      assert.ok(link, 'the link stays and no placeholder is left behind');
    } finally {
      await box.dispose();
      rmSync(folder, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('two sessions share placeholders: the first to close leaves them for the other', async () => {
    const folder = repository();
    const box = toolbox({ folder, settings: { workspaceAccess: 'rw' } });
    try {
      await box.call('sandbox_open', { session: 'one', runtime: 'bash' });
      await box.call('sandbox_open', { session: 'two', runtime: 'bash' });
      await box.call('sandbox_close', { sandbox_id: 'one' });
      const stillThere = existsSync(join(folder, '.github'));
      const attack = await box.call('sandbox_exec', {
        sandbox_id: 'two',
        command: 'mkdir -p .github/workflows && echo x > .github/workflows/ci.yml',
      });
      const written = existsSync(join(folder, '.github', 'workflows'));
      await box.call('sandbox_close', { sandbox_id: 'two' });
      const gone = !existsSync(join(folder, '.github'));
      observe(
        'protected',
        'two sessions, one closes, the other writes .github',
        'still refused; the placeholder goes with the last session',
        `after first close: ${stillThere ? 'placeholder kept' : 'placeholder removed'}; write: ${written ? 'HOST WRITTEN' : 'refused'}; after last close: ${gone ? 'removed' : 'left'}`,
        stillThere && !written && gone,
      );
      assert.ok(stillThere && !written && gone, attack.text);
    } finally {
      await box.dispose();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('compute mode with the folder mounted read-write, and files staged at open', async () => {
    const folder = repository();
    const before = states(folder);
    const engine = testEngine();
    const spec = resolveSpec({ mode: 'compute', runtime: 'bash', workspaceAccess: 'rw' });
    try {
      const staged = await engine
        .open(spec, {
          ephemeral: true,
          workspaceFolder: folder,
          files: [{ path: '/workspace/.vscode/settings.json', data: Buffer.from('{"agentSandbox.network": true}') }],
        })
        .then(
          async (sandbox) => {
            await sandbox.close();
            return 'opened';
          },
          (error: Error) => `refused: ${error.message}`,
        );
      const sandbox = await engine.open(spec, { ephemeral: true, workspaceFolder: folder });
      const answer = await sandbox.exec({
        command: 'echo evil >> .git/config; mkdir -p .github && echo x > .github/y',
      });
      await sandbox.close();
      const touched = changed(folder, before);
      observe(
        'protected',
        'compute run with rw folder; a file staged into .vscode at open',
        'both refused; host unchanged',
        touched.length
          ? `host changed: ${touched.join(', ')}`
          : `host unchanged; staging ${staged.slice(0, 60)}; exec: ${answer.stderr.trim().split('\n')[0] ?? ''}`,
        touched.length === 0,
      );
      assert.deepEqual(touched, []);
    } finally {
      await engine.dispose();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('lifted by the user (protectedPaths: []): no placeholder, writes go through', async () => {
    const folder = repository();
    const engine = testEngine();
    try {
      const sandbox = await engine.open(resolveSpec({ mode: 'code', runtime: 'bash', workspaceAccess: 'rw' }), {
        name: 'lifted',
        workspaceFolder: folder,
        protectedPaths: [],
      });
      const answer = await sandbox.exec({ command: 'echo "{}" > .vscode/settings.json && echo done' });
      await sandbox.close();
      const written = readFileSync(join(folder, '.vscode', 'settings.json'), 'utf8') === '{}\n';
      const placeholders = ['.github', '.devcontainer'].filter((name) => existsSync(join(folder, name)));
      observe(
        'protected',
        'protection lifted for the folder',
        'the write goes through; no placeholder made',
        `${written ? 'written' : 'NOT written'}; placeholders: ${placeholders.join(', ') || 'none'}`,
        written && placeholders.length === 0,
      );
      assert.ok(written, answer.stderr);
      assert.deepEqual(placeholders, []);
    } finally {
      await engine.dispose();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
