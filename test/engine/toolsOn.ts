// The tools' own path on an engine, as VS Code and the CLI call it, for a fresh folder of its own.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxEngine } from '../../src/core/engine/engine';
import { FileStore } from '../../src/core/files/fileStore';
import { SandboxService } from '../../src/core/sessions/sandboxService';
import { parseSettings } from '../../src/core/spec/settings';
import type { ToolCallContext } from '../../src/core/tools/runTool';
import { TEST_IMAGES } from './harness';

export interface ToolsOnOptions {
  injectedEnv?: () => Record<string, string>;
  redact?: (text: string) => string;
  /** The engine as results name it; "docker" when absent. */
  engineName?: string;
  /** Settings beside the test images, e.g. { limits: { maxStdoutBytes: 65536 } }. */
  settings?: Record<string, unknown>;
}

export function toolsOn(engine: SandboxEngine, prefix: string, more: ToolsOnOptions = {}): ToolCallContext {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  const settings = parseSettings({ images: TEST_IMAGES, ...more.settings });
  return {
    service: new SandboxService({
      engine: () => engine,
      settings: () => settings,
      workspaceFolder: () => folder,
      trusted: () => true,
      ...(more.injectedEnv ? { injectedEnv: more.injectedEnv } : {}),
    }),
    engine: more.engineName ?? 'docker',
    signal: new AbortController().signal,
    store: new FileStore(join(folder, '.store')),
    budget: { maxChars: 48_000 },
    redact: more.redact ?? ((text) => text),
  };
}
