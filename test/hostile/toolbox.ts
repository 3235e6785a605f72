/**
 * Calls the tools exactly as VS Code does (schema, handler, redaction), against the real engine, with
 * no VS Code; or, with `via: 'cli'`, through `agent-sandbox tool NAME -` in a process of its own per
 * call, with the policy given as that command's flags.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '../../src/core/files/fileStore';
import { Redactor } from '../../src/core/secrets/redaction';
import { SandboxService } from '../../src/core/sessions/sandboxService';
import { parseSettings } from '../../src/core/spec/settings';
import { callNamedTool } from '../../src/core/tools/runTool';
import type { ToolName } from '../../src/core/tools/toolList';
import { runCliText } from '../engine/cliRunner';
import { TEST_IMAGES, testEngine } from '../engine/harness';

export interface ToolAnswer {
  ok: boolean;
  text: string;
}

export type ToolPath = 'tools' | 'cli';

export interface ToolboxOptions {
  settings?: {
    workspaceAccess?: string;
    network?: { mode?: 'off' | 'allowlist' | 'full'; allow?: string[] };
    limits?: Record<string, unknown>;
    [key: string]: unknown;
  };
  secrets?: Record<string, string>;
  folder?: string;
  /** The language-model tools in this process (default), or the CLI's tool command. */
  via?: ToolPath;
  /** The file store's size limit per file. */
  storeMaxBytes?: number;
}

export function toolbox(options: ToolboxOptions = {}) {
  const engine = testEngine();
  const folder = options.folder ?? mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-ws-'));
  const settings = parseSettings({ images: TEST_IMAGES, ...options.settings });
  const secrets = options.secrets ?? {};
  const redactor = new Redactor(secrets);
  const service = new SandboxService({
    engine: () => engine,
    settings: () => settings,
    workspaceFolder: () => folder,
    trusted: () => true,
    client: 'vscode',
    injectedEnv: () => secrets,
  });
  const store = new FileStore(mkdtempSync(join(tmpdir(), 'agent-sandbox-hostile-store-')), {
    maxFileBytes: options.storeMaxBytes,
  });
  return {
    engine,
    service,
    folder,
    store,
    via: options.via ?? 'tools',
    async call(name: ToolName, input: unknown, signal?: AbortSignal): Promise<ToolAnswer> {
      if (options.via === 'cli') return callCli(name, input, folder, store, options);
      try {
        const { text, failure } = await callNamedTool(name, input, {
          service,
          engine: 'docker',
          signal: signal ?? new AbortController().signal,
          budget: { maxChars: 48_000 },
          redact: (value) => redactor.redact(value),
          store,
          workspaceFolder: folder,
        });
        return { ok: !failure, text };
      } catch (error) {
        return { ok: false, text: (error as Error).message };
      }
    },
    async dispose() {
      if (options.via === 'cli') await runCliText(['close', '--all', '--folder', folder]).catch(() => undefined);
      await service.closeAll().catch(() => undefined);
      await engine.dispose();
    },
  };
}

/** One call through `agent-sandbox tool NAME -`: the JSON on stdin, the policy as flags, secrets as the prefixed host variables. */
async function callCli(
  name: ToolName,
  input: unknown,
  folder: string,
  store: FileStore,
  options: ToolboxOptions,
): Promise<ToolAnswer> {
  const settings = options.settings ?? {};
  const limits = settings.limits ?? {};
  const flags = ['--folder', folder, '--json'];
  if (settings.workspaceAccess) flags.push('--workspace', settings.workspaceAccess);
  if (settings.network?.mode === 'full') flags.push('--network');
  if (settings.network?.mode === 'allowlist')
    for (const name of settings.network.allow ?? []) flags.push('--allow-domain', name);
  // The user's lifted protections for this folder are the CLI's --allow-config-writes.
  if (Array.isArray(settings.configWritesAllowedIn) && settings.configWritesAllowedIn.includes(folder))
    flags.push('--allow-config-writes');
  for (const [key, flag] of [
    ['memory', '--memory'],
    ['cpus', '--cpus'],
    ['pids', '--pids'],
    ['disk', '--disk'],
    ['inodes', '--inodes'],
  ] as const) {
    if (limits[key] !== undefined) flags.push(flag, String(limits[key]));
  }
  const env: NodeJS.ProcessEnv = {
    AGENT_SANDBOX_FILE_STORE: store.folder,
    AGENT_SANDBOX_FILE_STORE_MAX_SIZE: String(store.maxFileBytes),
    ...Object.fromEntries(
      Object.entries(TEST_IMAGES).map(([runtime, image]) => [`AGENT_SANDBOX_IMAGE_${runtime.toUpperCase()}`, image]),
    ),
  };
  for (const [key, value] of Object.entries(options.secrets ?? {})) env[`AGENT_SANDBOX_ENV_${key}`] = value;
  const run = await runCliText(['tool', name, '-', ...flags], { env, stdin: JSON.stringify(input) });
  let parts: { type: string; text?: string }[] = [];
  try {
    parts = (JSON.parse(run.stdout) as { parts?: typeof parts }).parts ?? [];
  } catch {
    return { ok: false, text: `${run.stdout}${run.stderr}`.trim() };
  }
  return { ok: run.code === 0, text: parts.map((part) => part.text ?? '').join('\n') };
}

export function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? '';
}
