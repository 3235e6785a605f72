/**
 * What a sandbox is: one zod schema, the single source of truth for defaults and bounds.
 * Tool input schemas, settings and `.prompt` frontmatter all resolve into a `SandboxSpec`.
 */
import { z } from 'zod';
import { GiB, MiB, formatSize, parseSize } from './units';
import { allowlistTextSchema, networkHostsSchema } from '../network/allowlist';
import { boundSecretSchema } from '../secrets/bound';
import { ENV_NAME } from '../secrets/secrets';
import { RUNTIMES, WORKSPACE_ACCESS } from './specNames';

export { RUNTIMES, WORKSPACE_ACCESS, type Runtime, type WorkspaceAccess } from './specNames';

export const runtimeSchema = z
  .enum(RUNTIMES)
  .describe('Language runtime: python, node, bash, or linux (a general Linux shell, code mode only).');

export const MODES = ['compute', 'code'] as const;
export type SandboxMode = (typeof MODES)[number];
export const modeSchema = z
  .enum(MODES)
  .describe(
    'compute: a fresh container per call, discarded after. code: a persistent session with files and processes.',
  );

export const workspaceAccessSchema = z
  .enum(WORKSPACE_ACCESS)
  .describe(
    'How the sandbox sees the workspace folder: none (private /workspace), copy (a private copy made at open; the folder is never written), ro (mounted read-only), rw (read-write).',
  );

/** A size as bytes, within bounds; accepts `512m`, `1g`, `256MiB` or a number of bytes. */
function sizeSchema(what: string, example: string, min: number, max: number) {
  return z
    .union([z.number(), z.string()])
    .transform((value, ctx) => {
      const bytes = parseSize(value);
      if (bytes === undefined) {
        ctx.addIssue({ code: 'custom', message: `"${value}" is not a ${what} size; write it like ${example}` });
        return z.NEVER;
      }
      return bytes;
    })
    .pipe(
      z
        .number()
        .int()
        .min(min, `${what} must be at least ${formatSize(min)}`)
        .max(max, `${what} must be at most ${formatSize(max)}`),
    );
}

/** Memory as bytes; accepts `512m`, `1g`, `256MiB` or a number of bytes. */
export const memorySchema = sizeSchema('memory', '512m or 1g', 32 * MiB, 64 * GiB).describe(
  'Memory limit (no swap), like 512m or 1g.',
);

/**
 * Disk as bytes, per writable place of the sandbox (/tmp, $HOME, a private /workspace, ...). The
 * floor leaves room for a compute run's program and its files.
 */
export const diskSchema = sizeSchema('disk', '256m or 2g', 16 * MiB, 1024 * GiB).describe(
  'Disk limit for each writable place (/tmp, $HOME, /workspace, ...), like 256m or 2g.',
);

export const DEFAULT_LIMITS = {
  memoryBytes: 512 * MiB,
  cpus: 1,
  pids: 256,
  maxStdoutBytes: 1 * MiB,
  maxStderrBytes: 1 * MiB,
  maxFileSizeBytes: 10 * MiB,
  maxFiles: 1000,
  maxProcessFileBytes: 1 * GiB,
  diskBytes: 1 * GiB,
  /**
   * Files and folders per writable place. Enough for a virtual environment with the scientific stack
   * (about 15,000 files) or a typical node_modules (20,000 to 60,000), while a runaway loop stops long
   * before the 200,000 files of the report; each costs about 1 KiB of the sandbox's memory (measured).
   */
  inodes: 100_000,
} as const;

export const DEFAULT_TIMEOUT_SECONDS = 120;

export const limitsSchema = z.object({
  memoryBytes: memorySchema.default(DEFAULT_LIMITS.memoryBytes),
  cpus: z
    .number()
    .min(0.05)
    .max(64)
    .default(DEFAULT_LIMITS.cpus)
    .describe('CPU cores the sandbox may use (1.5 = one and a half cores).'),
  pids: z
    .number()
    .int()
    .min(16)
    .max(32768)
    .default(DEFAULT_LIMITS.pids)
    .describe('Most processes and threads at once (stops fork bombs).'),
  maxStdoutBytes: z
    .number()
    .int()
    .min(1024)
    .max(256 * MiB)
    .default(DEFAULT_LIMITS.maxStdoutBytes)
    .describe('Stdout kept per call; the rest is dropped with a truncation marker.'),
  maxStderrBytes: z
    .number()
    .int()
    .min(1024)
    .max(256 * MiB)
    .default(DEFAULT_LIMITS.maxStderrBytes)
    .describe('Stderr kept per call; the rest is dropped with a truncation marker.'),
  maxFileSizeBytes: z
    .number()
    .int()
    .min(1)
    .max(4 * GiB)
    .default(DEFAULT_LIMITS.maxFileSizeBytes)
    .describe('Largest file the file tools write or read.'),
  maxFiles: z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(DEFAULT_LIMITS.maxFiles)
    .describe('Most files one file operation writes or lists.'),
  maxProcessFileBytes: z
    .number()
    .int()
    .min(1024 * 1024)
    .max(1024 * GiB)
    .default(DEFAULT_LIMITS.maxProcessFileBytes)
    .describe('Largest file a program in the sandbox may write (a bigger write fails with "File too large").'),
  diskBytes: diskSchema.default(DEFAULT_LIMITS.diskBytes),
  inodes: z
    .number()
    .int()
    .min(1000)
    .max(4_000_000)
    .default(DEFAULT_LIMITS.inodes)
    .describe('Most files and folders in each writable place of the sandbox.'),
});
export type Limits = z.output<typeof limitsSchema>;

const envSchema = z.record(z.string(), z.string().max(32 * 1024)).superRefine((env, ctx) => {
  for (const name of Object.keys(env)) {
    if (!ENV_NAME.test(name))
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `"${name}": environment variable names are letters, digits and _, not starting with a digit`,
      });
  }
});

/**
 * Packages come from the package index by name, with an optional version: never a path, a URL or a
 * repository, which would install whatever those hold (a folder the agent wrote, a server it chose).
 */
const PIP_REQUIREMENT =
  /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\[[A-Za-z0-9._-]+(?:,[A-Za-z0-9._-]+)*\])?(?:(?:===|~=|==|!=|<=|>=|<|>)[A-Za-z0-9.*+!_-]+(?:,(?:===|~=|==|!=|<=|>=|<|>)[A-Za-z0-9.*+!_-]+)*)?$/;
const NPM_PACKAGE = /^(?:@[A-Za-z0-9][A-Za-z0-9._-]*\/)?[A-Za-z0-9][A-Za-z0-9._-]*(?:@[A-Za-z0-9.^~<>=*|_+-]+)?$/;

export const pipPackageListSchema = z
  .array(
    z
      .string()
      .min(1)
      .max(200)
      .regex(
        PIP_REQUIREMENT,
        'a pip package is a name from the package index with an optional version, like pandas or numpy==2.1 or requests[socks]>=2.31; not a path, URL or git repository',
      ),
  )
  .max(100);
export const npmPackageListSchema = z
  .array(
    z
      .string()
      .min(1)
      .max(214)
      .regex(
        NPM_PACKAGE,
        'an npm package is a name from the registry with an optional version, like lodash, lodash@4 or @types/node@^22; not a path, URL, tarball or git repository',
      ),
  )
  .max(100);

export const sandboxSpecSchema = z
  .object({
    mode: modeSchema.default('compute'),
    runtime: runtimeSchema.default('python'),
    image: z.string().min(1).max(512).optional().describe("Container image to use instead of the runtime's default."),
    timeoutSeconds: z
      .number()
      .positive()
      .max(24 * 3600)
      .default(DEFAULT_TIMEOUT_SECONDS)
      .describe('Seconds a call may run before it is killed.'),
    network: z.boolean().default(false).describe('Allow network access (off by default).'),
    networkAllow: allowlistTextSchema.prefault([]),
    networkHosts: networkHostsSchema.default({}),
    workspaceAccess: workspaceAccessSchema.default('none'),
    pipPackages: pipPackageListSchema.default([]).describe('Python packages to install when the sandbox is created.'),
    npmPackages: npmPackageListSchema.default([]).describe('npm packages to install when the sandbox is created.'),
    limits: limitsSchema.default(limitsSchema.parse({})),
    env: envSchema.default({}).describe('Environment variables set in the sandbox.'),
    /** Which of `env` are secrets from the host: redacted wherever the session's output goes (knownSecrets.ts). */
    secretEnv: z.array(z.string().max(256)).max(1000).optional(),
    /** Secrets whose values never enter the sandbox: `env` holds their placeholders (core/secrets/bound.ts). */
    boundSecrets: z.array(boundSecretSchema).max(50).optional(),
    /** Secrets offered by name whose values are in `env` (inside secrets, core/secrets/catalog.ts); not the host's prefixed variables. */
    insideSecrets: z.array(z.string().max(256)).max(50).optional(),
  })
  .superRefine((spec, ctx) => {
    if (spec.runtime === 'linux' && spec.mode !== 'code') {
      ctx.addIssue({
        code: 'custom',
        path: ['runtime'],
        message: 'runtime linux is only available in code mode (mode: code)',
      });
    }
  });

export type SandboxSpec = z.output<typeof sandboxSpecSchema>;

/** A partial spec as contributed by one source (settings, frontmatter, a CLI flag, a tool call). */
export type SpecLayer = {
  [K in keyof Omit<SandboxSpec, 'limits' | 'env'>]?: z.input<typeof sandboxSpecSchema>[K];
} & {
  limits?: Partial<z.input<typeof limitsSchema>>;
  env?: Record<string, string>;
};
