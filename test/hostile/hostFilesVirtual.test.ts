// The virtual engine with read-write access works on the host folder itself, in this process: the
// same rules as the host's own file operations (issue 14: "same rule on the virtual engine"). Each
// case asserts on the host: protected configuration byte-identical, no setuid or setgid bit, the
// canary folder outside untouched.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../../src/core/engine/engine';
import { SandboxError } from '../../src/core/errors';
import { resolveSpec } from '../../src/core/spec/resolveSpec';
import { openSession } from '../engine/namedSession';
import { VirtualEngine } from '../../src/engines/virtual/virtualEngine';
import { hostSnapshot, snapshotDiff } from './hostSnapshot';
import { observe } from './report';

const AREA = 'host files (virtual)';
const SECRET = 'canary secret: the host file no sandbox may read\n';

describe('host files: a read-write virtual session on the host folder', function () {
  this.timeout(300_000);
  const engine = new VirtualEngine();
  let root: string;
  let folder: string;
  let canary: string;
  let sandbox: Sandbox;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'agent-sandbox-hostfiles-virtual-'));
    folder = join(root, 'workspace');
    canary = join(root, 'canary');
    mkdirSync(join(folder, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(folder, '.git', 'config'), '[core]\n\tbare = false\n');
    writeFileSync(join(folder, 'notes.txt'), 'notes\n');
    mkdirSync(canary);
    writeFileSync(join(canary, 'secret.txt'), SECRET);
    symlinkSync(canary, join(folder, 'link-out'));
    symlinkSync(join(canary, 'secret.txt'), join(folder, 'link-secret'));
    ({ sandbox } = await openSession(engine, resolveSpec({ runtime: 'python', workspaceAccess: 'rw' }), {
      name: 'hostfiles-virtual',
      workspaceFolder: folder,
    }));
  });

  after(async () => {
    await engine.dispose();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  async function shell(commands: readonly string[]): Promise<string> {
    let output = '';
    for (const command of commands) {
      const result = await sandbox.exec({ command });
      output += result.stdout + result.stderr;
    }
    return output;
  }

  const python = (code: string) => sandbox.exec({ cmd: ['python3', '-c', code] });

  it('cannot create, change, rename or remove editor and VCS configuration', async () => {
    const before = hostSnapshot(join(folder, '.git'));
    const output = await shell([
      'mkdir -p .vscode && echo \'{"agentSandbox.network": true}\' > .vscode/settings.json',
      'printf "[core]\\n\\thooksPath = /tmp/hooks\\n" >> .git/config',
      'echo replaced > .git/config',
      'printf "#!/bin/sh\\necho pwned\\n" > .git/hooks/pre-commit && chmod 755 .git/hooks/pre-commit',
      'mkdir -p .github/workflows && echo "on: push" > .github/workflows/ci.yml',
      'mkdir -p elsewhere && echo "{}" > elsewhere/settings.json && mv elsewhere .vscode',
      'mkdir -p dc && echo "{}" > dc/devcontainer.json && cp -r dc .devcontainer',
      'mv .git moved-git',
      'rm -rf .git',
      'rm -f .git/config',
      'touch .git/config',
    ]);
    await python(
      'import os\nfor step in [lambda: open(".vscode/settings.json", "w").write("{}"), lambda: open(".git/config", "a").write("x"), lambda: os.rename(".git", "g2"), lambda: os.mkdir(".devcontainer")]:\n    try:\n        step()\n    except Exception as e:\n        print(type(e).__name__)',
    );
    let toolError: unknown;
    await sandbox
      .writeFiles([{ path: '.vscode/settings.json', content: '{}' }])
      .catch((error: unknown) => (toolError = error));
    const after = hostSnapshot(join(folder, '.git'));
    const created = ['.vscode', '.github', '.devcontainer'].filter((name) => existsSync(join(folder, name)));
    const contained = after === before && created.length === 0 && SandboxError.is(toolError, 'permission-denied');
    observe(
      AREA,
      'rw virtual session writes .vscode/settings.json, .git/config, .git/hooks, .github, .devcontainer (shell, python, fs_write; mv, cp, rm)',
      '.git byte-identical; nothing created; the tool names agentSandbox.configWritesAllowedIn',
      contained
        ? `refused: ${(toolError as Error).message}`
        : `changed: ${snapshotDiff(before, after)} created: ${created.join(', ')} ${output.slice(0, 80)}`,
      contained,
    );
    assert.equal(after, before, snapshotDiff(before, after));
    assert.deepEqual(created, []);
    assert.ok(SandboxError.is(toolError, 'permission-denied'), String(toolError));
    assert.match((toolError as SandboxError).hint ?? '', /agentSandbox\.configWritesAllowedIn/);
  });

  it('cannot set a setuid or setgid bit on a host file or folder', async () => {
    await shell([
      'printf "#!/bin/sh\\nid\\n" > tool.sh && chmod 4755 tool.sh',
      'chmod u+s,g+s tool.sh',
      'mkdir -p shared && chmod 2775 shared',
      'cp -p tool.sh copy.sh; chmod 6755 copy.sh',
    ]);
    await python(
      'import os\nos.chmod("tool.sh", 0o4755)\nfd = os.open("made.sh", os.O_CREAT | os.O_WRONLY, 0o6755)\nos.close(fd)\nos.chmod("made.sh", 0o6755)',
    );
    const modes = ['tool.sh', 'copy.sh', 'shared', 'made.sh']
      .filter((name) => existsSync(join(folder, name)))
      .map((name) => `${name} ${(statSync(join(folder, name)).mode & 0o7777).toString(8)}`);
    const marked = modes.filter((line) => (parseInt(line.split(' ')[1]!, 8) & 0o6000) !== 0);
    observe(
      AREA,
      'rw virtual session: chmod 4755 / u+s,g+s / 2775 / 6755, python os.chmod and os.open with 0o6755',
      'no setuid or setgid bit on the host',
      modes.join(', '),
      marked.length === 0,
    );
    assert.deepEqual(marked, [], modes.join(', '));
    assert.ok(
      modes.some((line) => line.startsWith('tool.sh 7') && line.endsWith('755')),
      `chmod without the special bits still works: ${modes.join(', ')}`,
    );
  });

  it('cannot read or write outside the folder through a link placed in the host folder', async () => {
    const before = hostSnapshot(canary);
    const output = await shell([
      'cat link-secret',
      'cat link-out/secret.txt',
      'ls link-out',
      'echo pwned > link-out/new.txt',
      'echo pwned > link-secret',
      'echo pwned >> link-secret',
      'cp notes.txt link-out/',
      'chmod 777 link-secret',
      'touch link-out/touched',
      'rm -f link-out/secret.txt',
      'mv notes.txt link-out/notes.txt',
      'ln link-secret hard-to-secret && cat hard-to-secret',
    ]);
    const read = await python(
      'import os\nfor step in [lambda: print(open("link-secret").read()), lambda: print(os.listdir("link-out")), lambda: open("link-out/py.txt", "w").write("x")]:\n    try:\n        step()\n    except Exception as e:\n        print(type(e).__name__)',
    );
    let toolError: unknown;
    await sandbox.readFile('link-out/secret.txt').catch((error: unknown) => (toolError = error));
    const leaked = (output + read.stdout).includes(SECRET.trim());
    const after = hostSnapshot(canary);
    const contained =
      !leaked &&
      after === before &&
      readdirSync(root).sort().join(',') === 'canary,workspace' &&
      toolError !== undefined;
    observe(
      AREA,
      'rw virtual session reads, writes, copies, chmods and hard-links through host links to a folder and a file outside',
      'nothing read or changed outside the folder',
      contained ? 'refused; canary folder unchanged' : `leaked: ${leaked}; ${snapshotDiff(before, after)}`,
      contained,
    );
    assert.equal(leaked, false, output);
    assert.equal(after, before, snapshotDiff(before, after));
    assert.ok(toolError, 'the file tool read through the link');
  });
});
