/** The states the extension sends, as test fixtures. */
import { numberBounds } from '../../src/core/spec/settingsJsonSchema';
import { SIZE_PATTERN } from '../../src/core/spec/units';
import type { DefaultsView, EngineView, HostToWebview, SessionView } from '../../src/shared/protocol';

const now = Date.now();
const ago = (ms: number) => new Date(now - ms).toISOString();

export const connected: EngineView = {
  kind: 'docker',
  state: 'connected',
  endpoint: 'unix:///var/run/docker.sock',
  product: 'Docker Engine',
  version: '20.10.24',
};
export const noEngine: EngineView = {
  kind: 'docker',
  state: 'unavailable',
  endpoint: 'unix:///var/run/docker.sock',
  problem:
    'No Docker Engine answers at unix:///var/run/docker.sock (from the default socket): the socket does not exist.',
  fix: 'Start Docker (Docker Desktop, or `sudo systemctl start docker` on Linux), or point the setting agentSandbox.engineHost or the variable DOCKER_HOST at a running engine.',
};

export const defaults: DefaultsView = {
  memory: '512m',
  cpus: 1,
  pids: 256,
  timeoutSeconds: 120,
  maxStdoutBytes: 1048576,
  maxStderrBytes: 1048576,
  workspaceAccess: 'none',
  network: 'off',
  networkAllow: [],
  target: 'user',
  canUseWorkspace: true,
  // What the host sends: the settings schema's bounds (src/vscode/panel/panelViews.ts).
  bounds: {
    cpus: numberBounds('limits.cpus'),
    pids: numberBounds('limits.pids'),
    timeoutSeconds: numberBounds('timeoutSeconds'),
    maxStdoutBytes: numberBounds('limits.maxStdoutBytes'),
    maxStderrBytes: numberBounds('limits.maxStderrBytes'),
  },
  sizePattern: SIZE_PATTERN.source,
};

const base = {
  scope: 'workspace',
  image: 'python:3.12-slim',
  createdAt: ago(42 * 60_000),
  memoryLimitBytes: 512 * 1024 * 1024,
  cpus: 1,
  network: false,
} as const;

export const sessions: SessionView[] = [
  {
    ...base,
    id: 'a'.repeat(64),
    sandboxId: 'default',
    name: 'default',
    runtime: 'python',
    state: 'running',
    lastUsedAt: ago(20_000),
    workspaceAccess: 'ro',
    lastCommand: { summary: 'python3 analyze.py data.csv', exitCode: 0, at: ago(20_000) },
  },
  {
    ...base,
    id: 'b'.repeat(64),
    sandboxId: 'build',
    name: 'build',
    runtime: 'node',
    image: 'node:22-slim',
    state: 'idle',
    lastUsedAt: ago(11 * 60_000),
    workspaceAccess: 'rw',
    network: true,
    lastCommand: { summary: 'npm test', exitCode: 1, at: ago(11 * 60_000) },
  },
  {
    ...base,
    id: 'c'.repeat(64),
    sandboxId: 'agent:analyst/default',
    name: 'default',
    scope: 'agent',
    runtime: 'python',
    state: 'dead',
    deathReason: 'It ran out of memory (limit 512 MiB) and the kernel killed it at 2026-11-21T06:01:12Z',
    workspaceAccess: 'none',
  },
];

export function state(engine: EngineView, list: SessionView[]): HostToWebview {
  return {
    type: 'state',
    engine,
    sessions: list,
    defaults,
    activity: list.length
      ? [
          {
            tool: 'sandbox_exec',
            summary: 'python3 analyze.py data.csv',
            exitCode: 0,
            ok: true,
            durationMs: 412,
            at: ago(20_000),
            sandboxId: 'default',
          },
          {
            tool: 'sandbox_run',
            summary: 'python: import pandas as pd',
            exitCode: 1,
            ok: false,
            durationMs: 1830,
            at: ago(60_000),
          },
          {
            tool: 'sandbox_fs_write',
            summary: 'analyze.py, data.csv',
            exitCode: null,
            ok: true,
            durationMs: 38,
            at: ago(90_000),
            sandboxId: 'default',
          },
        ]
      : [],
  };
}
