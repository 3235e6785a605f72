/** Calls the tools exactly as VS Code does (schema, handler, redaction), against the real engine, with no VS Code. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '../../src/core/fileStore';
import { Redactor } from '../../src/core/redaction';
import { SandboxService } from '../../src/core/sandboxService';
import { parseSettings } from '../../src/core/settings';
import { runTool } from '../../src/core/tools/runTool';
import type { ToolName } from '../../src/core/tools/schemas';
import { TEST_IMAGES, testEngine } from '../engine/harness';

export interface ToolAnswer {
  ok: boolean;
  text: string;
}

export function toolbox(options: { settings?: object; secrets?: Record<string, string>; folder?: string; storeMaxBytes?: number } = {}) {
  const engine = testEngine();
  const folder = options.folder ?? mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-ws-'));
  const settings = parseSettings({ images: TEST_IMAGES, ...options.settings });
  const secrets = options.secrets ?? {};
  const redactor = new Redactor(secrets);
  const service = new SandboxService({ engine: () => engine, settings: () => settings, workspaceFolder: () => folder, trusted: () => true, client: 'vscode', injectedEnv: () => secrets });
  const store = new FileStore(mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-store-')), { maxFileBytes: options.storeMaxBytes });
  return {
    engine,
    service,
    folder,
    store,
    async call(name: ToolName, input: unknown, signal?: AbortSignal): Promise<ToolAnswer> {
      try {
        const text = await runTool(name, input, { service, engine: 'docker', signal: signal ?? new AbortController().signal, budget: { maxChars: 48_000 }, redact: (value) => redactor.redact(value), store, workspaceFolder: folder });
        return { ok: true, text };
      } catch (error) {
        return { ok: false, text: (error as Error).message };
      }
    },
    async dispose() {
      await service.closeAll().catch(() => undefined);
      await engine.dispose();
    },
  };
}

export function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? '';
}
