/**
 * One session path for the CLI and the extension: an agent's session is never another caller's
 * session. The extension side (a SandboxService with client 'vscode') and the CLI (dist/cli.js, a
 * process per command) share a folder on a real engine; each must find only the sessions of the
 * scope it asks for.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxError } from '../../src/core/errors';
import { SandboxService } from '../../src/core/sessions/sandboxService';
import { parseSettings } from '../../src/core/spec/settings';
import { runCliText } from './cliRunner';
import { TEST_IMAGES, requireEngine, testEngine } from './harness';

const engine = testEngine();

function extensionSide(folder: string): SandboxService {
  const settings = parseSettings({ images: TEST_IMAGES });
  return new SandboxService({
    engine: () => engine,
    settings: () => settings,
    workspaceFolder: () => folder,
    trusted: () => true,
    client: 'vscode',
  });
}

function cli(folder: string, args: string[]) {
  return runCliText([...args.slice(0, 1), '--folder', folder, ...args.slice(1)], {
    stdin: '',
    env: {
      AGENT_SANDBOX_ENGINE: 'docker',
      AGENT_SANDBOX_IMAGE_PYTHON: TEST_IMAGES.python,
      AGENT_SANDBOX_IMAGE_NODE: TEST_IMAGES.node,
      AGENT_SANDBOX_IMAGE_BASH: TEST_IMAGES.bash,
      AGENT_SANDBOX_IMAGE_LINUX: TEST_IMAGES.linux,
    },
  });
}

interface Listed {
  id: string;
  name: string;
  scope: { kind: string; key?: string };
  client?: string;
}

async function listed(folder: string): Promise<Listed[]> {
  const result = await cli(folder, ['ls', '--json']);
  assert.equal(result.code, 0, result.stderr);
  return (JSON.parse(result.stdout) as { sessions: Listed[] }).sessions;
}

describe('one session path: scopes kept apart between the CLI and the extension', function () {
  const folders: string[] = [];
  const newFolder = () => {
    const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-scope-'));
    folders.push(folder);
    return folder;
  };

  before(async function () {
    await requireEngine(this);
  });

  after(async () => {
    for (const folder of folders) {
      await extensionSide(folder)
        .closeAll()
        .catch(() => undefined);
      rmSync(folder, { recursive: true, force: true });
    }
    await engine.dispose();
  });

  it("the CLI's default session is never an agent's session of the same name", async () => {
    const folder = newFolder();
    const extension = extensionSide(folder);
    const agent = await extension.openSession({ scope: { kind: 'agent', key: 'foo' }, runtime: 'bash' });
    assert.equal(agent.created, true);
    await agent.sandbox.exec({ command: 'echo agent > /tmp/owner' });

    const exec = await cli(folder, ['exec', '--', 'cat', '/tmp/owner']);
    assert.equal(exec.stdout, '', "the CLI ran in the agent's session");
    assert.equal(exec.code, 125, exec.stderr);
    assert.match(exec.stderr, /No session named "default" is open for .*\nOpen it first \(agent-sandbox open/);

    const close = await cli(folder, ['close', '--session', 'default']);
    assert.equal(close.code, 125, `the CLI closed the agent's session: ${close.stdout}`);
    assert.match(close.stderr, /No session named "default" is open for /);
    assert.equal((await extension.requireSession('agent:foo/default')).info.id, agent.sandbox.info.id);

    const opened = await cli(folder, ['open', '--runtime', 'bash']);
    assert.equal(opened.code, 0, opened.stderr);
    assert.match(opened.stdout, /^Opened session default /, "the CLI reused the agent's session");
    const own = await cli(folder, ['exec', '--', 'sh', '-c', 'cat /tmp/owner 2>&1; echo cli > /tmp/owner']);
    assert.match(own.stdout, /No such file/);

    // ls names each session by the id that reaches it: the agent's carries its scope.
    const sessions = await listed(folder);
    assert.deepEqual(
      sessions.map((session) => [session.scope.kind, session.scope.key ?? '', session.name, session.client]),
      [
        ['agent', 'foo', 'default', 'vscode'],
        ['workspace', '', 'default', 'cli'],
      ],
    );
    const table = await cli(folder, ['ls']);
    assert.match(table.stdout, /^SESSION +ID /);
    assert.match(table.stdout, new RegExp(`\\nagent:foo/default +${agent.sandbox.info.id.slice(0, 12)} `));
    assert.match(table.stdout, /\ndefault +[0-9a-f]{12} /);

    // Asked for by its scope, the agent's session is reachable, and it kept its own file.
    const explicit = await cli(folder, ['exec', '--session', 'agent:foo/default', '--', 'cat', '/tmp/owner']);
    assert.equal(explicit.stdout, 'agent\n', explicit.stderr);
    assert.equal((await agent.sandbox.exec({ command: 'cat /tmp/owner' })).stdout, 'agent\n');
  });

  it("an agent never gets the CLI's session of the same name, while the workspace scope is shared", async () => {
    const folder = newFolder();
    const opened = await cli(folder, ['open', '--session', 'shared', '--runtime', 'bash']);
    assert.equal(opened.code, 0, opened.stderr);
    const wrote = await cli(folder, ['exec', '--session', 'shared', '--', 'sh', '-c', 'echo cli > /tmp/owner']);
    assert.equal(wrote.code, 0, wrote.stderr);
    const [cliSession] = await listed(folder);
    assert.ok(cliSession);

    const extension = extensionSide(folder);
    await assert.rejects(extension.requireSession('agent:foo/shared'), (error: unknown) =>
      SandboxError.is(error, 'session-not-found'),
    );
    const agent = await extension.openSession({
      session: 'shared',
      scope: { kind: 'agent', key: 'foo' },
      runtime: 'bash',
    });
    assert.equal(agent.created, true, "the agent was handed the CLI's session");
    assert.notEqual(agent.sandbox.info.id, cliSession.id);
    assert.match((await agent.sandbox.exec({ command: 'cat /tmp/owner 2>&1 || true' })).stdout, /No such file/);

    // The workspace scope is the one the CLI and the extension share, by design (README, In VS Code).
    const shared = await extensionSide(folder).requireSession('shared');
    assert.equal(shared.info.id, cliSession.id);
    assert.equal((await shared.exec({ command: 'cat /tmp/owner' })).stdout, 'cli\n');
  });
});
