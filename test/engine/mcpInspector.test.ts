/**
 * The MCP Inspector's command-line mode (`mcp-inspector --cli`, installed from npm into
 * .cache/mcp-inspector, pinned) against the built `agent-sandbox mcp`: a client we did not write
 * lists the tools and calls one on the real engine. The Inspector wants Node.js 22 or newer: it runs
 * on the Node.js the VS Code host provisioning installs, or on this one when it is new enough.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { TOOLS } from '../../src/core/tools/toolList';
import { CLI } from './cliRunner';
import { TEST_IMAGES, requireEngine } from './harness';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');
const INSPECTOR_VERSION = '2.12.0';
const PREFIX = join(ROOT, '.cache', 'mcp-inspector');
const LAUNCHER = join(
  PREFIX,
  'node_modules',
  '@modelcontextprotocol',
  'inspector',
  'clients',
  'launcher',
  'build',
  'index.js',
);

/** A Node.js of version 22 or newer: the provisioned VS Code host's, or this one. */
async function node22(): Promise<string | undefined> {
  const cache = process.env.AGENT_SANDBOX_VSCODE_CACHE ?? join(ROOT, '.cache', 'vscode-host');
  for (const candidate of [join(cache, 'node', 'bin', 'node'), process.execPath]) {
    if (!existsSync(candidate)) continue;
    const { stdout } = await run(candidate, ['-p', 'process.versions.node']);
    if (Number(stdout.split('.')[0]) >= 22) return candidate;
  }
  return undefined;
}

describe('the MCP Inspector (command-line mode) against agent-sandbox mcp', function () {
  this.timeout(240_000);
  let node: string;
  let folder: string;

  before(async function () {
    await requireEngine(this);
    const found = await node22();
    if (!found) {
      const why =
        'the MCP Inspector needs Node.js 22 or newer: run scripts/provision-vscode.sh (it installs one) or use a newer Node.js';
      if (process.env.CI) throw new Error(why);
      console.warn(`Skipping the MCP Inspector test: ${why}.`);
      this.skip();
    }
    node = found;
    if (!existsSync(LAUNCHER))
      await run(
        'npm',
        [
          'install',
          '--prefix',
          PREFIX,
          '--no-audit',
          '--no-fund',
          '--ignore-scripts',
          '--no-save',
          `@modelcontextprotocol/inspector@${INSPECTOR_VERSION}`,
        ],
        { timeout: 180_000 },
      );
    folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-inspector-'));
  });
  after(() => {
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  /** `mcp-inspector --cli <our server> --method ...`, its JSON output parsed. */
  async function inspect(...method: string[]): Promise<{ code: number; json?: unknown; text: string }> {
    const server = [process.execPath, CLI, 'mcp', '--folder', folder];
    if (process.env.DOCKER_HOST) server.push('--engine-host', process.env.DOCKER_HOST);
    try {
      const { stdout } = await run(
        node,
        [LAUNCHER, '--cli', '-e', `AGENT_SANDBOX_IMAGE_PYTHON=${TEST_IMAGES.python}`, ...server, ...method],
        { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      );
      return { code: 0, json: JSON.parse(stdout), text: stdout };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: failed.code ?? 1, text: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
    }
  }

  it('lists the tools, as the LM tools are listed', async () => {
    const listed = await inspect('--method', 'tools/list');
    assert.equal(listed.code, 0, listed.text);
    const names = (listed.json as { tools: { name: string }[] }).tools.map((tool) => tool.name);
    assert.deepEqual(
      names,
      TOOLS.map((tool) => tool.name),
    );
  });

  it('calls sandbox_run on the real engine', async () => {
    const called = await inspect(
      '--method',
      'tools/call',
      '--tool-name',
      'sandbox_run',
      '--tool-arg',
      'code=print(6*7)',
    );
    assert.equal(called.code, 0, called.text);
    const [part] = (called.json as { content: { type: string; text: string }[] }).content;
    assert.match(part!.text, /^exit code 0 · .* · docker · one-off sandbox/);
    assert.match(part!.text, /stdout:\n42/);
  });

  it('bad input comes back as an error naming the field', async () => {
    const bad = await inspect('--method', 'tools/call', '--tool-name', 'sandbox_fs_read', '--tool-arg', 'max_bytes=-5');
    assert.notEqual(bad.code, 0);
    assert.match(bad.text, /path/);
  });
});
