/**
 * User settings (VS Code's `agentSandbox.*`, or the CLI's flags and environment) as one validated shape,
 * and the spec layer they contribute.
 */
import { z } from 'zod';
import { ENGINE_CHOICES } from '../engine/engineSelection';
import { invalidSpecError } from './resolveSpec';
import {
  DEFAULT_LIMITS,
  DEFAULT_TIMEOUT_SECONDS,
  RUNTIMES,
  diskSchema,
  memorySchema,
  runtimeSchema,
  workspaceAccessSchema,
  type SpecLayer,
} from './spec';

export const settingsSchema = z.object({
  engine: z
    .enum(ENGINE_CHOICES)
    .default('auto')
    .describe(
      'Which engine runs sandboxes: auto (Docker when it answers, else the virtual engine once the user agrees), docker, or virtual.',
    ),
  engineHost: z
    .string()
    .optional()
    .describe(
      'Docker Engine endpoint, like unix:///var/run/docker.sock or tcp://host:2376. Empty uses DOCKER_HOST or the default socket.',
    ),
  images: z.partialRecord(z.enum(RUNTIMES), z.string().min(1)).default({}).describe('Image per runtime.'),
  defaultRuntime: runtimeSchema.default('python'),
  workspaceAccess: workspaceAccessSchema.default('none'),
  network: z.boolean().default(false),
  confirmation: z
    .enum(['reach', 'always'])
    .default('reach')
    .describe(
      'Which tool calls ask first. reach: calls that stay inside a private sandbox run without asking; calls that can touch the workspace folder or the network ask, and a call that reaches further than you allowed for its sandbox always asks in a dialog. always: every call that runs code or changes files asks too.',
    ),
  timeoutSeconds: z.number().positive().default(DEFAULT_TIMEOUT_SECONDS),
  limits: z
    .object({
      memory: memorySchema.default(DEFAULT_LIMITS.memoryBytes),
      cpus: z.number().positive().default(DEFAULT_LIMITS.cpus),
      pids: z.number().int().positive().default(DEFAULT_LIMITS.pids),
      maxStdoutBytes: z.number().int().positive().default(DEFAULT_LIMITS.maxStdoutBytes),
      maxStderrBytes: z.number().int().positive().default(DEFAULT_LIMITS.maxStderrBytes),
      maxFileSizeBytes: z.number().int().positive().default(DEFAULT_LIMITS.maxFileSizeBytes),
      maxFiles: z.number().int().positive().default(DEFAULT_LIMITS.maxFiles),
      maxProcessFileBytes: z.number().int().positive().default(DEFAULT_LIMITS.maxProcessFileBytes),
      disk: diskSchema.default(DEFAULT_LIMITS.diskBytes),
      inodes: z.number().int().positive().default(DEFAULT_LIMITS.inodes),
    })
    .prefault({}),
  sessions: z
    .object({
      idleTimeoutMinutes: z.number().min(0).default(30).describe('Close a session unused for this long; 0 never does.'),
      maxLifetimeMinutes: z
        .number()
        .min(0)
        .default(120)
        .describe('Close a session this long after it opened; 0 never does.'),
      maxSessions: z
        .number()
        .int()
        .min(1)
        .max(100)
        .default(5)
        .describe('Most live sessions per workspace; the least recently used one is closed to make room.'),
      collectIntervalSeconds: z
        .number()
        .min(1)
        .default(60)
        .describe('How often idle, expired and orphaned sessions are looked for.'),
      orphanGraceSeconds: z
        .number()
        .min(1)
        .default(120)
        .describe('How long a session whose window is gone waits to be adopted before it is removed.'),
      keepOnExit: z.boolean().default(false).describe('Keep sessions when VS Code closes.'),
    })
    .prefault({}),
  configWritesAllowedIn: z
    .array(z.string().min(1))
    .default([])
    .describe(
      'Workspace folders (absolute paths) where a read-write sandbox may change .git, .vscode, .github and .devcontainer. Only user or machine settings count.',
    ),
  envPrefixes: z
    .array(z.string().min(1))
    .default(['AGENT_SANDBOX_ENV_', 'STN_CODE_'])
    .describe('Host variables with these prefixes are passed into sandboxes without the prefix.'),
  pool: z
    .object({
      size: z
        .number()
        .int()
        .min(0)
        .max(8)
        .default(2)
        .describe(
          'Containers started ahead of time per compute configuration, so that sandbox_run does not wait for one; 0 turns the pool off.',
        ),
    })
    .prefault({}),
});
export type Settings = z.output<typeof settingsSchema>;

export function parseSettings(value: unknown): Settings {
  const result = settingsSchema.safeParse(value ?? {});
  if (!result.success) throw invalidSpecError(result.error, 'settings');
  return result.data;
}

export function specFromSettings(settings: Settings): SpecLayer {
  const { memory, disk, ...limits } = settings.limits;
  return {
    runtime: settings.defaultRuntime,
    workspaceAccess: settings.workspaceAccess,
    network: settings.network,
    timeoutSeconds: settings.timeoutSeconds,
    limits: { ...limits, memoryBytes: memory, diskBytes: disk },
  };
}
