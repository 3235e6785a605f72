// A command's result that is cut to fit the context keeps the whole captured output in the session,
// readable part by part with sandbox_fs_read (issue 15 item 1), on both engines, through the tools' own path.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '../../src/core/files/fileStore';
import { SandboxService } from '../../src/core/sessions/sandboxService';
import { parseSettings } from '../../src/core/spec/settings';
import { runNamedTool, type ToolCallContext } from '../../src/core/tools/runTool';
import type { SandboxEngine } from '../../src/core/engine/engine';
import { VirtualEngine } from '../../src/engines/virtual/virtualEngine';
import { TEST_IMAGES, requireEngine, testEngine } from './harness';

const engines: { kind: string; make: () => SandboxEngine; needsDocker: boolean }[] = [
  { kind: 'docker', make: () => testEngine(), needsDocker: true },
  { kind: 'virtual', make: () => new VirtualEngine(), needsDocker: false },
];

for (const { kind, make, needsDocker } of engines) {
  describe(`saved output of a cut result: ${kind}`, function () {
    let engine: SandboxEngine;
    let folder: string;
    let tool: ToolCallContext;

    before(async function () {
      if (needsDocker) await requireEngine(this);
      engine = make();
      folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-saved-'));
      const settings = parseSettings({ images: TEST_IMAGES, defaultRuntime: 'bash' });
      tool = {
        service: new SandboxService({
          engine: () => engine,
          settings: () => settings,
          workspaceFolder: () => folder,
          trusted: () => true,
        }),
        engine: kind,
        signal: new AbortController().signal,
        store: new FileStore(join(folder, '.store')),
        budget: { maxChars: 48_000 },
        redact: (text) => text,
      };
    });

    after(async () => {
      await runNamedTool('sandbox_close', {}, tool).catch(() => undefined);
      await (engine as { dispose?: () => Promise<void> } | undefined)?.dispose?.();
      rmSync(folder, { recursive: true, force: true });
    });

    it('keeps what was cut, and sandbox_fs_read reads it back part by part', async () => {
      // 8,000 numbered lines, 78,890 bytes: more than the 48,000 characters a result may carry.
      const text = await runNamedTool(
        'sandbox_exec',
        { command: 'i=0; while [ $i -lt 8000 ]; do echo "line $i"; i=$((i+1)); done' },
        tool,
      );
      const file = /saved in the sandbox as (\/tmp\/sandbox-output\/exec-[\w-]+\.stdout)/.exec(text)?.[1];
      assert.ok(file, `no saved file named in: ${text.slice(0, 600)}`);
      assert.ok(
        text
          .split('\n')
          .slice(0, 4)
          .some((line) => line.includes(file)),
        'the note is next to the headline',
      );
      const tail = await runNamedTool('sandbox_fs_read', { path: file, offset: 78_880, max_bytes: 1_000 }, tool);
      assert.match(tail, /· from byte 78,880\nline 7999\n$/);
      const head = await runNamedTool('sandbox_fs_read', { path: file, max_bytes: 14 }, tool);
      assert.match(head, /\nline 0\nline 1\n$/);
      // Nothing else outside /workspace is readable this way.
      await assert.rejects(
        runNamedTool('sandbox_fs_read', { path: '/tmp/sandbox-output/../../etc/passwd' }, tool),
        /outside \/workspace/,
      );
    });

    it('a save that fails after the result is returned is said by the next call', async () => {
      // /tmp/sandbox-output as a file: the save's mkdir fails, as with a full /tmp.
      await runNamedTool(
        'sandbox_exec',
        { command: 'mv /tmp/sandbox-output /tmp/kept; : > /tmp/sandbox-output' },
        tool,
      );
      try {
        const cut = await runNamedTool('sandbox_exec', { command: 'seq 1 20000' }, tool);
        assert.match(cut, /saved in the sandbox as \/tmp\/sandbox-output\/exec-/);
        const next = await runNamedTool('sandbox_exec', { command: 'echo next' }, tool);
        assert.match(
          next,
          /Note: The stdout of an earlier command could not be saved as \/tmp\/sandbox-output\/exec-[\w-]+\.stdout/,
        );
        const after = await runNamedTool('sandbox_exec', { command: 'echo after' }, tool);
        assert.doesNotMatch(after, /could not be saved/, 'said once');
      } finally {
        await runNamedTool(
          'sandbox_exec',
          { command: 'rm -f /tmp/sandbox-output; mv /tmp/kept /tmp/sandbox-output' },
          tool,
        );
      }
    });

    it('saves nothing when the result fits', async () => {
      const text = await runNamedTool('sandbox_exec', { command: 'echo small' }, tool);
      assert.doesNotMatch(text, /saved in the sandbox/);
    });
  });
}
