/**
 * User settings (VS Code's `agentSandbox.*`, or the CLI's flags and environment) as one validated shape,
 * and the spec layer they contribute.
 */
import { z } from 'zod';
import { ENGINE_CHOICES } from '../engine/engineSelection';
import { invalidSpecError } from './resolveSpec';
import { allowlistTextSchema, networkHostsSchema } from '../network/allowlist';
import {
  DEFAULT_LIMITS,
  RUNTIMES,
  diskSchema,
  limitsSchema,
  memorySchema,
  runtimeSchema,
  sandboxSpecSchema,
  workspaceAccessSchema,
  type SpecLayer,
} from './spec';
import { SIZE_PATTERN, formatSizeSetting } from './units';
import { secretSettingsSchema } from '../secrets/catalog';

/**
 * A size as settings hold it: text like `512m` (VS Code's settings editor checks it against the same
 * pattern), then the spec's own schema with its bounds. The default is written the same way.
 */
function sizeSetting(schema: typeof memorySchema, what: string, example: string, bytes: number) {
  return z
    .string()
    .regex(SIZE_PATTERN, {
      error: (issue) => `"${String(issue.input)}" is not a ${what} size; write it like ${example}`,
    })
    .pipe(schema as z.ZodType<number, string>) // the spec's schema also takes numbers; settings give text
    .prefault(formatSizeSetting(bytes));
}

/** Text where empty means "not set" (the setting's default in VS Code is the empty string). */
const optionalText = () =>
  z
    .string()
    .trim()
    .default('')
    .transform((text) => text || undefined);

/**
 * Every `agentSandbox.*` setting: its type, default and bounds. package.json's
 * `contributes.configuration` is generated from this (scripts/generateSettingsManifest.ts); the words
 * VS Code shows for each setting are in package.nls.json as `config.<key>`. Limits take the spec's own
 * schemas, so a setting, a tool call and a `.prompt` file share one set of bounds.
 */
/** The network tiers a user allows, from none to all. */
export const NETWORK_MODES = ['off', 'allowlist', 'full'] as const;
export type NetworkMode = (typeof NETWORK_MODES)[number];

export const settingsSchema = z.object({
  engine: z.enum(ENGINE_CHOICES).default('auto'),
  engineHost: optionalText(),
  images: z
    .object(
      Object.fromEntries(RUNTIMES.map((runtime) => [runtime, z.string().trim().default('')])) as {
        [K in (typeof RUNTIMES)[number]]: z.ZodDefault<z.ZodString>;
      },
    )
    .prefault({})
    .transform(
      (images) =>
        Object.fromEntries(Object.entries(images).filter(([, image]) => image !== '')) as Partial<
          Record<(typeof RUNTIMES)[number], string>
        >,
    ),
  defaultRuntime: runtimeSchema.default('python'),
  workspaceAccess: workspaceAccessSchema.default('none'),
  workspaceAccessByFolder: z.record(z.string(), workspaceAccessSchema).default({}),
  network: z
    .object({
      /** off: no network. allowlist: only the names in allow, through the proxy. full: the whole network. */
      mode: z.enum(NETWORK_MODES).default('off'),
      allow: allowlistTextSchema.prefault([]),
      hosts: networkHostsSchema.default({}),
    })
    .prefault({}),
  confirmation: z.enum(['reach', 'always']).default('reach'),
  timeoutSeconds: sandboxSpecSchema.shape.timeoutSeconds,
  limits: z
    .object({
      memory: sizeSetting(memorySchema, 'memory', '512m or 1g', DEFAULT_LIMITS.memoryBytes),
      cpus: limitsSchema.shape.cpus,
      pids: limitsSchema.shape.pids,
      maxStdoutBytes: limitsSchema.shape.maxStdoutBytes,
      maxStderrBytes: limitsSchema.shape.maxStderrBytes,
      maxFileSizeBytes: limitsSchema.shape.maxFileSizeBytes,
      maxFiles: limitsSchema.shape.maxFiles,
      maxProcessFileBytes: limitsSchema.shape.maxProcessFileBytes,
      disk: sizeSetting(diskSchema, 'disk', '256m or 2g', DEFAULT_LIMITS.diskBytes),
      inodes: limitsSchema.shape.inodes,
    })
    .prefault({}),
  sessions: z
    .object({
      idleTimeoutMinutes: z.number().min(0).default(30),
      maxLifetimeMinutes: z.number().min(0).default(120),
      maxSessions: z.number().int().min(1).max(100).default(5),
      collectIntervalSeconds: z.number().min(1).default(60),
      orphanGraceSeconds: z.number().min(1).default(120),
      keepOnExit: z.boolean().default(false),
    })
    .prefault({}),
  envPrefixes: z.array(z.string().min(1)).default(['AGENT_SANDBOX_ENV_', 'STN_CODE_']),
  /** Secrets a sandbox may ask for by name: bound to domains (the value stays outside) or inside (core/secrets/catalog.ts). */
  secrets: secretSettingsSchema.prefault([]),
  configWritesAllowedIn: z.array(z.string().min(1)).default([]),
  pool: z
    .object({
      size: z.number().int().min(0).max(8).default(2),
    })
    .prefault({}),
  mcp: z
    .object({
      enabled: z.boolean().default(false),
    })
    .prefault({}),
  terminal: z
    .object({
      showSecrets: z.boolean().default(false),
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
    network: settings.network.mode === 'full',
    networkAllow: settings.network.mode === 'off' ? [] : settings.network.allow,
    networkHosts: settings.network.hosts,
    timeoutSeconds: settings.timeoutSeconds,
    limits: { ...limits, memoryBytes: memory, diskBytes: disk },
  };
}
