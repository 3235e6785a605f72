/**
 * The `sandbox:` block of Dotprompt `.prompt` frontmatter, as Station writes it: a runtime shorthand
 * (`sandbox: python`) or an object with snake_case keys. Converted here into a spec layer. The
 * `.describe()` texts are what editors show on hover and in completions; bounds come from spec.ts.
 */
import { z } from 'zod';
import { allowEntrySchema } from '../network/allowlist';
import { secretSettingSchema } from '../secrets/catalog';
import { invalidSpecError } from './resolveSpec';
import {
  MODES,
  RUNTIMES,
  WORKSPACE_ACCESS,
  diskSchema,
  limitsSchema,
  memorySchema,
  npmPackageListSchema,
  pipPackageListSchema,
  sandboxSpecSchema,
  type SpecLayer,
} from './spec';

export const SESSION_SCOPES = ['workflow', 'agent'] as const;
/** `sandbox.mode` values of Station's agent harness, a different dialect of the same block. */
export const HARNESS_SANDBOX_MODES = ['host', 'docker', 'e2b'] as const;

const limit = limitsSchema.shape;
const timeoutSeconds = sandboxSpecSchema.shape.timeoutSeconds.unwrap();
const maxStdoutBytes = limit.maxStdoutBytes.unwrap();

export const frontmatterLimitsSchema = z
  .object({
    timeout_seconds: timeoutSeconds
      .optional()
      .describe("Seconds a call may run before it is killed (wins over the block's own timeout_seconds)."),
    max_file_size_bytes: limit.maxFileSizeBytes
      .unwrap()
      .optional()
      .describe('Largest file the file tools write or read, in bytes.'),
    max_files: limit.maxFiles.unwrap().optional().describe('Most files one file operation writes or lists.'),
    max_stdout_bytes: maxStdoutBytes
      .optional()
      .describe('Bytes of standard output kept per call; the rest is dropped with a marker.'),
    memory: memorySchema.optional().describe('Memory limit without swap, like 512m or 1g (default 512m).'),
    memory_mb: z
      .number()
      .int()
      .min(32)
      .max(64 * 1024)
      .optional()
      .describe('Memory limit in MiB (another spelling of memory).'),
    cpu: limit.cpus
      .unwrap()
      .optional()
      .describe('CPU cores the sandbox may use: 1.5 is one and a half cores (default 1).'),
    cpu_millicores: z
      .number()
      .int()
      .min(50)
      .max(64_000)
      .optional()
      .describe('CPU in thousandths of a core: 500 is half a core (another spelling of cpu).'),
    disk: diskSchema
      .optional()
      .describe(
        'Disk limit for each writable place (/tmp, $HOME, /workspace), like 256m or 2g (default 1g). Files are kept in memory, so a place also holds no more than the memory limit allows.',
      ),
    inodes: limit.inodes
      .unwrap()
      .optional()
      .describe('Most files and folders in each writable place (default 100000).'),
  })
  .loose()
  .describe('Resource limits of the sandbox.');

export const frontmatterSandboxObjectSchema = z
  .object({
    mode: z
      .enum(MODES)
      .optional()
      .describe(
        'compute (default): every call runs in a fresh sandbox that is thrown away. code: one persistent session whose files and processes last between calls.',
      ),
    session: z
      .enum(SESSION_SCOPES)
      .optional()
      .describe(
        'Code mode only: who shares the session. workflow: every agent of one workflow run; agent: one session per agent.',
      ),
    runtime: z
      .enum(RUNTIMES)
      .optional()
      .describe('Language runtime: python (default), node, bash, or linux (a general Linux shell, code mode only).'),
    image: z
      .string()
      .min(1)
      .max(512)
      .optional()
      .describe("Container image to use instead of the runtime's default, like python:3.11-slim."),
    timeout_seconds: timeoutSeconds.optional().describe('Seconds a call may run before it is killed (default 120).'),
    max_stdout_bytes: maxStdoutBytes
      .optional()
      .describe('Bytes of standard output kept per call; the rest is dropped with a marker (default 1 MiB).'),
    workspace: z
      .enum(WORKSPACE_ACCESS)
      .optional()
      .describe(
        'How the sandbox sees the workspace folder at /workspace: none (default), copy (a private copy; the user reviews and applies its changes), ro (read-only) or rw (read-write). Never more than the user allowed.',
      ),
    allow_network: z
      .boolean()
      .optional()
      .describe("Ask for network access (off by default). The user's settings decide whether it is granted."),
    allow_domains: z
      .array(
        z
          .string()
          .max(260)
          .refine((text) => allowEntrySchema.safeParse(text).success, {
            message:
              'an entry is a domain (api.github.com), a wildcard for its subdomains (*.githubusercontent.com) or localhost:PORT (a port of your machine); IP addresses are not accepted',
          }),
      )
      .max(50)
      .optional()
      .describe(
        "Names the sandbox may reach on the network, and nothing else, like [pypi.org, files.pythonhosted.org]: *.example.com for subdomains, localhost:3000 for a port of your machine. Granted within the user's allowlist (agentSandbox.network.allow).",
      ),
    secrets: z
      .array(secretSettingSchema.in.shape.name)
      .max(50)
      .optional()
      .describe(
        "Secrets the user offers to sandboxes that this one gets, by name, like [GITHUB_TOKEN]: a bound secret's value stays outside (the sandbox holds a placeholder, and reaches the secret's domains), an inside secret's value enters the sandbox. Only names the user offers (agentSandbox.secrets, or the CLI's --secret); the confirmation names them.",
      ),
    pip_packages: pipPackageListSchema
      .optional()
      .describe(
        'Python packages installed with pip when the sandbox is created (needs the python runtime or an image with pip).',
      ),
    npm_packages: npmPackageListSchema
      .optional()
      .describe('npm packages installed when the sandbox is created (needs the node runtime or an image with npm).'),
    limits: frontmatterLimitsSchema.optional(),
  })
  .loose()
  .describe("How this agent's code runs: a runtime name (sandbox: python) or a block of settings.");

export const frontmatterSandboxSchema = z.union([z.enum(RUNTIMES), frontmatterSandboxObjectSchema]);
export type FrontmatterSandbox = z.output<typeof frontmatterSandboxSchema>;

/** Station's agent-harness sandbox (`sandbox.mode: docker`, or `harness_config.sandbox`): recognized, checked loosely. */
export const harnessSandboxSchema = z
  .object({
    mode: z
      .enum(HARNESS_SANDBOX_MODES)
      .optional()
      .describe('Agent harness: where the harness runs its tools. host, docker or e2b.'),
    image: z.string().optional().describe('Agent harness: container image for docker mode.'),
    timeout: z
      .union([z.string(), z.number()])
      .optional()
      .describe('Agent harness: how long the sandbox may live, like 30m.'),
    network: z
      .union([
        z.boolean(),
        z.object({ enabled: z.boolean().optional(), allowed_hosts: z.array(z.string()).optional() }).loose(),
      ])
      .optional()
      .describe('Agent harness: network access, true/false or { enabled, allowed_hosts }.'),
    environment: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .optional()
      .describe('Agent harness: environment variables in the sandbox.'),
    resources: z
      .object({
        cpu: z.union([z.string(), z.number()]).optional(),
        memory: z.union([z.string(), z.number()]).optional(),
      })
      .loose()
      .optional()
      .describe('Agent harness: cpu and memory of the sandbox.'),
  })
  .loose()
  .describe("Sandbox of Station's agent harness (mode host, docker or e2b).");

/** Documentation of single enum values, for completions and hovers. */
export const VALUE_DOCS: Record<string, Record<string, string>> = {
  runtime: {
    python: 'Python 3 (image python:3.12-slim by default).',
    node: 'Node.js (image node:22-slim by default).',
    bash: 'A bash shell (image debian:bookworm-slim by default).',
    linux: 'A general Linux shell for code mode (image debian:bookworm-slim by default).',
  },
  mode: {
    compute: 'Every call runs in a fresh sandbox that is thrown away afterwards.',
    code: 'A persistent session: files, installed packages and processes last between calls until it closes.',
    host: 'Agent harness: tools run on the host.',
    docker: 'Agent harness: tools run in a Docker container.',
    e2b: 'Agent harness: tools run in an E2B cloud sandbox.',
  },
  workspace: {
    none: 'The sandbox does not see the folder: /workspace is private and empty.',
    copy: 'The folder is copied into a private /workspace; changes reach the folder only when the user applies them (Source Control › Sandbox changes).',
    ro: 'The folder mounted read-only at /workspace.',
    rw: "The folder mounted read-write: changes land in the user's files at once.",
  },
  session: {
    workflow: 'One session shared by every agent of a workflow run.',
    agent: 'One session per agent.',
  },
};

/** The secrets a frontmatter `sandbox` value asks for, by name, once each (none for the shorthand or a block without any). */
export function secretsFromFrontmatter(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const parsed = frontmatterSandboxObjectSchema.safeParse(value);
  if (!parsed.success) throw invalidSpecError(parsed.error, 'sandbox block');
  return [...new Set(parsed.data.secrets ?? [])];
}

/** Turns a frontmatter `sandbox` value into a spec layer; throws an invalid-input error listing every problem. */
export function specFromFrontmatter(value: unknown): SpecLayer {
  // An object is checked against the block's own schema, so each problem names its key.
  const parsed = (
    typeof value === 'object' && value !== null ? frontmatterSandboxObjectSchema : frontmatterSandboxSchema
  ).safeParse(value);
  if (!parsed.success) throw invalidSpecError(parsed.error, 'sandbox block');
  const sandbox = parsed.data;
  if (typeof sandbox === 'string') return { runtime: sandbox };
  const limits = sandbox.limits ?? {};
  const memoryBytes = limits.memory ?? (limits.memory_mb !== undefined ? limits.memory_mb * 1024 * 1024 : undefined);
  const cpus = limits.cpu ?? (limits.cpu_millicores !== undefined ? limits.cpu_millicores / 1000 : undefined);
  return {
    mode: sandbox.mode,
    runtime: sandbox.runtime,
    image: sandbox.image,
    timeoutSeconds: limits.timeout_seconds ?? sandbox.timeout_seconds,
    workspaceAccess: sandbox.workspace,
    network: sandbox.allow_network,
    ...(sandbox.allow_domains ? { networkAllow: sandbox.allow_domains } : {}),
    pipPackages: sandbox.pip_packages,
    npmPackages: sandbox.npm_packages,
    limits: {
      memoryBytes,
      cpus,
      maxStdoutBytes: limits.max_stdout_bytes ?? sandbox.max_stdout_bytes,
      maxFileSizeBytes: limits.max_file_size_bytes,
      maxFiles: limits.max_files,
      diskBytes: limits.disk,
      inodes: limits.inodes,
    },
  };
}
