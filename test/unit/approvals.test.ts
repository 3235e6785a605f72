// Approvals by reach (issue 15 item 4): every tool's reach from its input and the sandbox it targets,
// and which calls ask in our own dialog, which get the client's confirmation and which run at once.
import assert from 'node:assert/strict';
import { parseSettings } from '../../src/core/spec/settings';
import { approvalFor, ReachGrants } from '../../src/core/tools/approvals';
import type { TargetView } from '../../src/core/tools/reach';
import { TOOLS, toolSpec, type ToolName } from '../../src/core/tools/toolList';

const settings = parseSettings({});

function target(overrides: Partial<TargetView> = {}): TargetView {
  return {
    sandboxId: 'default',
    open: true,
    workspaceAccess: 'none',
    network: false,
    networkAllow: [],
    packages: false,
    folderAllowed: 'rw',
    ...overrides,
  };
}

/** A valid input for each tool, the kind a model sends. */
const INPUTS: Record<ToolName, object> = {
  sandbox_run: { code: 'print(1)' },
  sandbox_open: { workspace_access: 'rw', network: true },
  sandbox_exec: { command: 'ls' },
  sandbox_fs_write: { files: [{ path: 'a.txt', content: 'a' }] },
  sandbox_fs_read: { path: 'a.txt' },
  sandbox_fs_list: {},
  sandbox_fs_delete: { path: 'a.txt' },
  sandbox_stage_file: { key: 'files/f_0123456789abcdef', path: 'a.bin' },
  sandbox_publish_file: { path: 'a.txt' },
  sandbox_close: {},
};

function reachOf(name: ToolName, view: TargetView, input: object = INPUTS[name]): string[] {
  const spec = toolSpec(name);
  return [...spec.reach(spec.schema.parse(input), view)].sort();
}

describe('approvals by reach', () => {
  it('has an input for every tool in this table', () => {
    assert.deepEqual(Object.keys(INPUTS).sort(), TOOLS.map((tool) => tool.name).sort());
  });

  it('classifies every tool in a private sandbox as reaching nothing, so nothing asks by default', () => {
    for (const { name } of TOOLS) {
      if (name === 'sandbox_open') continue; // an open request reaches what it asks for: below
      assert.deepEqual(reachOf(name, target()), [], name);
      const spec = toolSpec(name);
      assert.equal(
        approvalFor(spec, spec.reach(spec.schema.parse(INPUTS[name]), target()), new Set(), 'reach').kind,
        'none',
        name,
      );
    }
  });

  it('asks for every call that changes something under the "always" rule, and never for reads and lists', () => {
    for (const { name } of TOOLS) {
      const spec = toolSpec(name);
      const kind = approvalFor(spec, new Set(), new Set(), 'always').kind;
      assert.equal(kind, spec.changes ? 'client' : 'none', name);
    }
    assert.equal(toolSpec('sandbox_fs_read').changes, false);
    assert.equal(toolSpec('sandbox_fs_list').changes, false);
  });

  it('classifies the reach of each tool from the session it targets', () => {
    const ro = target({ workspaceAccess: 'ro' });
    const rw = target({ workspaceAccess: 'rw' });
    const net = target({ network: true });
    assert.deepEqual(reachOf('sandbox_exec', ro), ['folder-read']);
    assert.deepEqual(reachOf('sandbox_exec', rw), ['folder-read', 'folder-write']);
    assert.deepEqual(reachOf('sandbox_exec', net), ['network']);
    assert.deepEqual(reachOf('sandbox_exec', target({ open: false, packages: true })), ['packages']);
    assert.deepEqual(reachOf('sandbox_run', net), ['network']);
    assert.deepEqual(
      reachOf('sandbox_run', target({ workspaceAccess: 'rw' })),
      [],
      'sandbox_run never sees the folder',
    );
    assert.deepEqual(reachOf('sandbox_fs_write', ro), [], 'a write into a read-only folder fails; it reaches nothing');
    assert.deepEqual(reachOf('sandbox_fs_write', rw), ['folder-read', 'folder-write']);
    // A file written into a networked sandbox may be run there with the network (a server that reloads, a loop).
    assert.deepEqual(reachOf('sandbox_fs_write', net), ['network']);
    assert.deepEqual(reachOf('sandbox_fs_delete', net), ['network']);
    assert.deepEqual(reachOf('sandbox_stage_file', net), ['network']);
    assert.deepEqual(reachOf('sandbox_fs_read', net), [], 'reading runs nothing');
    assert.deepEqual(reachOf('sandbox_fs_list', net), []);
    assert.deepEqual(reachOf('sandbox_fs_delete', rw), ['folder-read', 'folder-write']);
    assert.deepEqual(reachOf('sandbox_fs_read', ro), ['folder-read']);
    assert.deepEqual(reachOf('sandbox_fs_list', rw), ['folder-read']);
    assert.deepEqual(reachOf('sandbox_stage_file', target(), { workspace_path: 'data.csv', path: 'd.csv' }), [
      'folder-read',
    ]);
    assert.deepEqual(reachOf('sandbox_stage_file', rw), ['folder-read', 'folder-write']);
    assert.deepEqual(reachOf('sandbox_publish_file', target(), { path: 'r.pdf', save_to_workspace: 'r.pdf' }), [
      'folder-publish',
    ]);
    assert.deepEqual(reachOf('sandbox_publish_file', ro), ['folder-read']);
    // What the user's policy refuses anyway is refused by the call, not asked about.
    const noFolder = target({ folderAllowed: 'none' });
    assert.deepEqual(reachOf('sandbox_stage_file', noFolder, { workspace_path: 'data.csv', path: 'd.csv' }), []);
    const readOnly = target({ folderAllowed: 'ro' });
    assert.deepEqual(reachOf('sandbox_publish_file', readOnly, { path: 'r.pdf', save_to_workspace: 'r.pdf' }), []);
    assert.deepEqual(reachOf('sandbox_open', target({ open: false, workspaceAccess: 'rw', network: true })), [
      'folder-read',
      'folder-write',
      'network',
    ]);
    assert.deepEqual(reachOf('sandbox_close', rw), []);
  });

  it('an approval of a no-access exec never approves an exec in a read-write or networked sandbox', () => {
    const exec = toolSpec('sandbox_exec');
    const input = exec.schema.parse({ command: 'make' });
    const grants = new ReachGrants();
    const harmless = target({ sandboxId: 'default' });
    // The harmless call runs without asking; suppose the client was told to allow every later call of this tool.
    assert.equal(approvalFor(exec, exec.reach(input, harmless), grants.granted(harmless, 'c1'), 'reach').kind, 'none');
    for (const riskier of [
      target({ sandboxId: 'build', workspaceAccess: 'rw' }),
      target({ sandboxId: 'build', network: true }),
      target({ sandboxId: 'default', workspaceAccess: 'ro' }),
    ]) {
      const approval = approvalFor(exec, exec.reach(input, riskier), grants.granted(riskier, 'c2'), 'reach');
      assert.equal(approval.kind, 'ask', JSON.stringify(riskier));
    }
  });

  it('a grant covers later calls of that sandbox within its reach, and nothing wider or elsewhere', () => {
    const exec = toolSpec('sandbox_exec');
    const input = exec.schema.parse({ command: 'make' });
    const grants = new ReachGrants();
    const rw = target({ sandboxId: 'build', workspaceAccess: 'rw' });
    grants.grant('build', exec.reach(input, rw), 'c1');
    // Within the grant: the client's confirmation (which it may remember), never our dialog.
    assert.equal(approvalFor(exec, exec.reach(input, rw), grants.granted(rw, 'c1'), 'reach').kind, 'client');
    // Wider (network too), another sandbox, or a new container under the same name: asked again.
    const wider = target({ sandboxId: 'build', workspaceAccess: 'rw', network: true });
    assert.deepEqual(approvalFor(exec, exec.reach(input, wider), grants.granted(wider, 'c1'), 'reach'), {
      kind: 'ask',
      widening: ['network'],
    });
    const other = target({ sandboxId: 'other', workspaceAccess: 'rw' });
    assert.equal(approvalFor(exec, exec.reach(input, other), grants.granted(other, 'c9'), 'reach').kind, 'ask');
    assert.equal(approvalFor(exec, exec.reach(input, rw), grants.granted(rw, 'c2'), 'reach').kind, 'ask');
    // The grant for the old container is gone for good.
    assert.equal(approvalFor(exec, exec.reach(input, rw), grants.granted(rw, 'c1'), 'reach').kind, 'ask');
  });

  it('ties a grant given before the sandbox opened to the container the call opened', () => {
    const grants = new ReachGrants();
    const opening = target({ open: false, workspaceAccess: 'rw' });
    grants.grant('default', new Set(['folder-read', 'folder-write']));
    assert.equal(grants.granted(opening).size, 2);
    grants.bind('default', 'c1');
    assert.equal(grants.granted(target({ workspaceAccess: 'rw' }), 'c1').size, 2);
    assert.equal(grants.granted(target({ workspaceAccess: 'rw' }), 'c2').size, 0, 'another container');
  });

  it('describes each call for the person who approves it, naming what the sandbox can touch', () => {
    for (const { name } of TOOLS) {
      const spec = toolSpec(name);
      const description = spec.describe(spec.schema.parse(INPUTS[name]), {
        target: target({ workspaceAccess: 'rw', network: true }),
        settings,
      });
      assert.ok(description.title.text && description.progress.text, name);
      const words = description.details.map((detail) => format(detail.text, detail.args)).join(' ');
      if (['sandbox_exec', 'sandbox_fs_write', 'sandbox_fs_delete', 'sandbox_stage_file'].includes(name))
        assert.match(words, /read-write at \/workspace/, name);
    }
  });

  it("names the interpreter's language when code goes to it, and shows the code as that language", () => {
    const exec = toolSpec('sandbox_exec');
    const shown = (input: unknown) => {
      const description = exec.describe(exec.schema.parse(input), { target: target({ sandboxId: 'web' }), settings });
      return [format(description.title.text, description.title.args), description.code?.language];
    };
    assert.deepEqual(shown({ code: 'const a = 1', language: 'node' }), [
      "Run Node.js in sandbox web's interpreter?",
      'javascript',
    ]);
    assert.deepEqual(shown({ code: 'a = 1' }), ["Run Python in sandbox web's interpreter?", 'python']);
    assert.deepEqual(shown({ command: 'ls' }), ['Run a command in sandbox web?', 'sh']);
  });

  it('says the truth about the virtual engine: no container, no memory limit', () => {
    const run = toolSpec('sandbox_run');
    const input = run.schema.parse({ code: 'print(1)' });
    const virtual = run.describe(input, { target: target({ sandboxId: 'run', engine: 'virtual' }), settings });
    const text = virtual.details.map((detail) => format(detail.text, detail.args)).join(' ');
    assert.doesNotMatch(text, /container that|memory/);
    assert.match(text, /virtual engine/);
    const docker = run.describe(input, { target: target({ sandboxId: 'run', engine: 'docker' }), settings });
    assert.match(
      docker.details.map((detail) => format(detail.text, detail.args)).join(' '),
      /fresh container.*512 MiB memory/,
    );
  });

  it('an allowlist is its own reach, named in the confirmation, and the whole network covers it', () => {
    const listed = target({ networkAllow: ['pypi.org', 'files.pythonhosted.org'] });
    assert.deepEqual(reachOf('sandbox_exec', listed), ['allowlist']);
    assert.deepEqual(reachOf('sandbox_run', listed), ['allowlist']);
    assert.deepEqual(reachOf('sandbox_fs_write', listed), ['allowlist']);
    const exec = toolSpec('sandbox_exec');
    const input = exec.schema.parse({ command: 'pip install rich' });
    assert.equal(approvalFor(exec, exec.reach(input, listed), new Set(), 'reach').kind, 'ask');
    assert.equal(approvalFor(exec, exec.reach(input, listed), new Set(['network']), 'reach').kind, 'client');
    assert.equal(
      approvalFor(exec, exec.reach(input, target({ network: true })), new Set(['allowlist']), 'reach').kind,
      'ask',
    );
    const open = toolSpec('sandbox_open');
    const description = open.describe(open.schema.parse({ allow_domains: ['pypi.org'] }), {
      target: target({ open: false, networkAllow: ['pypi.org', 'files.pythonhosted.org'] }),
      settings,
    });
    assert.match(
      description.details.map((detail) => format(detail.text, detail.args)).join(' '),
      /Network: only pypi\.org, files\.pythonhosted\.org\./,
    );
    assert.throws(() => open.schema.parse({ allow_domains: ['10.0.0.1'] }), /IP addresses are not accepted/);
  });
});

function format(text: string, args: readonly (string | number)[] = []): string {
  return text.replace(/\{(\d+)\}/g, (_, index: string) => String(args[Number(index)]));
}
