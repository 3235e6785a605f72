import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyDiff } from '../../src/core/files/copyDiff';
import { loadBaseline } from '../../src/core/files/folderCopy';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { DockerEngine } from '../../src/engines/docker/dockerEngine';
import { VirtualEngine } from '../../src/engines/virtual/virtualEngine';
import { openSession } from './namedSession';
import { runCliText } from './cliRunner';
import { TEST_IMAGES, requireEngine, testEngine } from './harness';

/** A git work tree with a tracked file, an ignored one, an untracked one, a nested folder and a link out. */
function makeRepo(): string {
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-copy-'));
  chmodSync(folder, 0o755);
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', folder, '-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args]);
  git('init', '-q');
  writeFileSync(join(folder, '.gitignore'), 'secret.env\n');
  writeFileSync(join(folder, 'README.md'), 'one\ntwo\nthree\n');
  writeFileSync(join(folder, 'gone.txt'), 'to be deleted\n');
  mkdirSync(join(folder, 'src', 'deep'), { recursive: true });
  writeFileSync(join(folder, 'src', 'deep', 'main.py'), 'print("host")\n');
  git('add', '.');
  git('commit', '-q', '-m', 'initial');
  writeFileSync(join(folder, 'secret.env'), 'TOKEN=do-not-copy\n');
  writeFileSync(join(folder, 'untracked.txt'), 'new, not committed\n');
  symlinkSync('/etc/passwd', join(folder, 'outside-link'));
  symlinkSync('README.md', join(folder, 'inside-link'));
  return folder;
}

describe('workspace access copy against a real engine', function () {
  this.timeout(120_000);
  let stateDir: string;
  let savedStateDir: string | undefined;

  before(async function () {
    await requireEngine(this);
    savedStateDir = process.env.AGENT_SANDBOX_STATE_DIR;
    stateDir = mkdtempSync(join(tmpdir(), 'agent-sandbox-copy-state-'));
    process.env.AGENT_SANDBOX_STATE_DIR = stateDir;
  });

  after(() => {
    if (savedStateDir === undefined) delete process.env.AGENT_SANDBOX_STATE_DIR;
    else process.env.AGENT_SANDBOX_STATE_DIR = savedStateDir;
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  it('copies what git sees (not ignored files, not .git, no link out), leaves the folder alone, and diffs exactly', async () => {
    const folder = makeRepo();
    const hostBefore = execFileSync('git', ['-C', folder, 'status', '--porcelain', '--ignored']).toString();
    const { sandbox } = await openSession(testEngine(), resolveSpec({ runtime: 'bash', workspaceAccess: 'copy' }), {
      name: 'copy-in',
      workspaceFolder: folder,
    });
    try {
      const listed = await sandbox.exec({
        command: 'find . -mindepth 1 | sort; readlink inside-link',
        cwd: '/workspace',
      });
      assert.equal(listed.exitCode, 0, listed.stderr);
      assert.deepEqual(listed.stdout.trim().split('\n'), [
        './.gitignore',
        './README.md',
        './gone.txt',
        './inside-link',
        './src',
        './src/deep',
        './src/deep/main.py',
        './untracked.txt',
        'README.md',
      ]);
      assert.ok(
        sandbox.info.notices.some((notice) => /Not copied: outside-link \(a link out of the folder\)/.test(notice)),
      );

      const changed = await sandbox.exec({
        command:
          'printf "one\\n2\\nthree\\n" > README.md && rm gone.txt && mkdir -p added && printf "hi\\n" > added/new.txt && printf "\\000\\001" > blob.bin && printf "x\\n" >> src/deep/main.py',
        cwd: '/workspace',
      });
      assert.equal(changed.exitCode, 0, changed.stderr);
      // The user's folder is untouched.
      assert.equal(readFileSync(join(folder, 'README.md'), 'utf8'), 'one\ntwo\nthree\n');
      assert.equal(readFileSync(join(folder, 'gone.txt'), 'utf8'), 'to be deleted\n');
      assert.equal(execFileSync('git', ['-C', folder, 'status', '--porcelain', '--ignored']).toString(), hostBefore);

      const baseline = await loadBaseline(stateDir, sandbox.info.id);
      assert.ok(baseline, 'the baseline is kept under the state folder');
      assert.ok(!('secret.env' in baseline.files));
      const { changes, diff, hostChanged } = await copyDiff(sandbox, baseline, { maxBytes: 1024 * 1024 });
      assert.deepEqual(
        changes.map((change) => `${change.change} ${change.path}`),
        [
          'modified README.md',
          'added added/new.txt',
          'added blob.bin',
          'deleted gone.txt',
          'modified src/deep/main.py',
        ].sort((a, b) => (a.split(' ')[1]! < b.split(' ')[1]! ? -1 : 1)),
      );
      assert.deepEqual(hostChanged, []);
      assert.match(
        diff,
        /diff --git a\/README.md b\/README.md\n--- a\/README.md\n\+\+\+ b\/README.md\n@@ -1,3 \+1,3 @@\n one\n-two\n\+2\n three\n/,
      );
      assert.match(diff, /Binary files \/dev\/null and b\/blob.bin differ \(0 → 2 bytes\)/);
      assert.match(
        diff,
        /deleted file mode 100644\n--- a\/gone.txt\n\+\+\+ \/dev\/null\n@@ -1 \+0,0 @@\n-to be deleted\n/,
      );
      assert.match(diff, /\+\+\+ b\/added\/new.txt\n@@ -0,0 \+1 @@\n\+hi\n/);
    } finally {
      await testEngine().remove(sandbox.info.id);
      rmSync(folder, { recursive: true, force: true });
    }
    assert.equal(await loadBaseline(stateDir, sandbox.info.id), undefined, 'the baseline goes with the session');
  });

  it('agent-sandbox open --workspace copy, then diff prints the git-style diff; diff of a non-copy session is refused', async () => {
    const folder = makeRepo();
    const cli = (...args: string[]) =>
      runCliText([args[0]!, '--folder', folder, ...args.slice(1)], { env: { AGENT_SANDBOX_STATE_DIR: stateDir } });
    try {
      const opened = await cli('open', '--session', 'copycli', '--runtime', 'bash', '--workspace', 'copy');
      assert.equal(opened.code, 0, opened.stderr);
      const changed = await cli(
        'exec',
        '--session',
        'copycli',
        '--',
        'sh',
        '-c',
        'echo more >> README.md && rm gone.txt',
      );
      assert.equal(changed.code, 0, changed.stderr);
      const diff = await cli('diff', '--session', 'copycli');
      assert.equal(diff.code, 0, diff.stderr);
      assert.equal(
        diff.stdout,
        [
          'diff --git a/README.md b/README.md',
          '--- a/README.md',
          '+++ b/README.md',
          '@@ -1,3 +1,4 @@',
          ' one',
          ' two',
          ' three',
          '+more',
          'diff --git a/gone.txt b/gone.txt',
          'deleted file mode 100644',
          '--- a/gone.txt',
          '+++ /dev/null',
          '@@ -1 +0,0 @@',
          '-to be deleted',
          '',
        ].join('\n'),
      );
      assert.match(diff.stderr, /2 changed: 0 added, 1 modified, 1 deleted/);
      assert.equal(readFileSync(join(folder, 'README.md'), 'utf8'), 'one\ntwo\nthree\n');
      const none = await cli('open', '--session', 'plain', '--runtime', 'bash');
      assert.equal(none.code, 0, none.stderr);
      const refused = await cli('diff', '--session', 'plain');
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /has workspace access none, not copy/);
    } finally {
      await cli('close', '--all', '--discard');
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('agent-sandbox apply: applies the rest, holds back protected paths and new executables, refuses a host-side conflict', async () => {
    const folder = makeRepo();
    const cli = (...args: string[]) =>
      runCliText([args[0]!, '--folder', folder, ...args.slice(1)], { env: { AGENT_SANDBOX_STATE_DIR: stateDir } });
    try {
      assert.equal((await cli('open', '--session', 'apply', '--runtime', 'bash', '--workspace', 'copy')).code, 0);
      const changed = await cli(
        'exec',
        '--session',
        'apply',
        '--',
        'sh',
        '-c',
        'echo four >> README.md && rm gone.txt && mkdir -p .vscode new && echo "{}" > .vscode/settings.json && printf "#!/bin/sh\\n" > run.sh && chmod 755 run.sh && echo n > new/file.txt && echo sandbox > untracked.txt',
      );
      assert.equal(changed.code, 0, changed.stderr);
      writeFileSync(join(folder, 'untracked.txt'), 'changed on the host\n');

      const first = await cli('apply', '--session', 'apply');
      assert.equal(first.code, 1, first.stderr);
      assert.equal(
        first.stdout,
        [
          'applied modified README.md',
          'applied deleted gone.txt',
          'applied added new/file.txt',
          'held back .vscode/settings.json: editor or version-control configuration (apply it with --include-protected)',
          'held back run.sh: gains an executable bit (apply it with --include-protected)',
          'conflict untracked.txt: changed in the folder since the copy; left as it is',
          '',
        ].join('\n'),
      );
      assert.equal(readFileSync(join(folder, 'README.md'), 'utf8'), 'one\ntwo\nthree\nfour\n');
      assert.ok(!existsSync(join(folder, 'gone.txt')));
      assert.equal(readFileSync(join(folder, 'new', 'file.txt'), 'utf8'), 'n\n');
      assert.ok(!existsSync(join(folder, '.vscode')));
      assert.ok(!existsSync(join(folder, 'run.sh')));
      assert.equal(readFileSync(join(folder, 'untracked.txt'), 'utf8'), 'changed on the host\n');

      // What was applied is no longer a change; the protected ones go with the flag, one path at a time.
      const diff = await cli('diff', '--session', 'apply');
      assert.deepEqual(
        diff.stdout.split('\n').filter((line) => line.startsWith('diff --git')),
        [
          'diff --git a/.vscode/settings.json b/.vscode/settings.json',
          'diff --git a/run.sh b/run.sh',
          'diff --git a/untracked.txt b/untracked.txt',
        ],
      );
      const second = await cli('apply', '--session', 'apply', '--include-protected', 'run.sh', '.vscode');
      assert.equal(second.code, 0, second.stdout + second.stderr);
      assert.equal(statSync(join(folder, 'run.sh')).mode & 0o777, 0o755);
      assert.equal(readFileSync(join(folder, '.vscode', 'settings.json'), 'utf8'), '{}\n');
    } finally {
      await cli('close', '--all', '--discard');
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('agent-sandbox apply --expect applies nothing when the changes are no longer the ones diff showed', async () => {
    const folder = makeRepo();
    const cli = (...args: string[]) =>
      runCliText([args[0]!, '--folder', folder, ...args.slice(1)], { env: { AGENT_SANDBOX_STATE_DIR: stateDir } });
    try {
      assert.equal((await cli('open', '--session', 'expect', '--runtime', 'bash', '--workspace', 'copy')).code, 0);
      const sandboxDoes = async (script: string) =>
        assert.equal((await cli('exec', '--session', 'expect', '--', 'sh', '-c', script)).code, 0);
      await sandboxDoes('echo reviewed >> README.md');
      const diff = await cli('diff', '--session', 'expect');
      const digest = /apply --session expect --expect ([0-9a-f]{16})/.exec(diff.stderr)?.[1];
      assert.ok(digest, diff.stderr);
      // The agent changes the file again after the user looked.
      await sandboxDoes('echo slipped in >> README.md');
      const refused = await cli('apply', '--session', 'expect', '--expect', digest);
      assert.notEqual(refused.code, 0);
      assert.match(
        refused.stderr,
        new RegExp(`the diff had digest ${digest}, they now have [0-9a-f]{16}\\. Nothing was applied`),
      );
      assert.equal(readFileSync(join(folder, 'README.md'), 'utf8'), 'one\ntwo\nthree\n', 'nothing applied');
      const again = await cli('diff', '--session', 'expect');
      const current = /--expect ([0-9a-f]{16})/.exec(again.stderr)?.[1];
      assert.ok(current && current !== digest);
      assert.equal((await cli('apply', '--session', 'expect', '--expect', current)).code, 0);
      assert.equal(readFileSync(join(folder, 'README.md'), 'utf8'), 'one\ntwo\nthree\nreviewed\nslipped in\n');
    } finally {
      await cli('close', '--all', '--discard');
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('refuses a folder over the file-count cap, naming the numbers', async () => {
    const folder = makeRepo();
    const engine = new DockerEngine({
      images: TEST_IMAGES,
      env: { ...process.env, AGENT_SANDBOX_COPY_MAX_FILES: '3' },
    });
    try {
      await assert.rejects(
        openSession(engine, resolveSpec({ runtime: 'bash', workspaceAccess: 'copy' }), {
          name: 'copy-cap',
          workspaceFolder: folder,
        }),
        (error: unknown) =>
          SandboxError.is(error) && /has 7 files to copy, more than the 3 a copy may hold/.test(error.message),
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('refuses a folder larger than the disk limit, naming the sizes', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-copy-big-'));
    writeFileSync(join(folder, 'big.bin'), Buffer.alloc(17 * 1024 * 1024));
    try {
      await assert.rejects(
        openSession(
          testEngine(),
          resolveSpec({ runtime: 'bash', workspaceAccess: 'copy', limits: { diskBytes: '16m' } }),
          {
            name: 'copy-big',
            workspaceFolder: folder,
          },
        ),
        (error: unknown) => SandboxError.is(error, 'disk-limit') && /17 MiB.*disk limit of 16 MiB/.test(error.message),
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('the virtual engine refuses copy (it would otherwise see the folder itself), leaving the folder alone', async () => {
    const folder = makeRepo();
    const engine = new VirtualEngine();
    try {
      await assert.rejects(
        engine.open(resolveSpec({ runtime: 'bash', workspaceAccess: 'copy', mode: 'code' }), {
          workspaceFolder: folder,
        }),
        (error: unknown) =>
          SandboxError.is(error, 'unsupported') && /cannot copy the workspace folder/.test(error.message),
      );
    } finally {
      await engine.dispose();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
