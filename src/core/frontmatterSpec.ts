/**
 * The `sandbox:` block of Dotprompt `.prompt` frontmatter, as Station writes it: a runtime shorthand
 * (`sandbox: python`) or an object with snake_case keys. Converted here into a spec layer.
 */
import { z } from 'zod';
import { invalidSpecError } from './resolveSpec';
import { MODES, RUNTIMES, memorySchema, packageListSchema, type SpecLayer } from './spec';

export const SESSION_SCOPES = ['workflow', 'agent'] as const;

const positiveInt = z.number().int().positive();

export const frontmatterLimitsSchema = z
  .object({
    timeout_seconds: positiveInt.optional().describe('Seconds a call may run before it is killed.'),
    max_file_size_bytes: positiveInt.optional().describe('Largest file the file tools write or read, in bytes.'),
    max_files: positiveInt.optional().describe('Most files one file operation writes or lists.'),
    max_stdout_bytes: positiveInt.optional().describe('Stdout kept per call, in bytes.'),
    memory: memorySchema.optional(),
    memory_mb: positiveInt.optional().describe('Memory limit in MiB.'),
    cpu: z.number().positive().optional().describe('CPU cores (1.5 = one and a half cores).'),
    cpu_millicores: positiveInt.optional().describe('CPU in thousandths of a core (500 = half a core).'),
  })
  .loose();

export const frontmatterSandboxObjectSchema = z
  .object({
    mode: z.enum(MODES).optional().describe('compute (default): a fresh sandbox per call. code: a persistent session.'),
    session: z.enum(SESSION_SCOPES).optional().describe('Which agents share a code-mode session: one per workflow run, or one per agent.'),
    runtime: z.enum(RUNTIMES).optional().describe('python, node, bash, or linux (code mode).'),
    image: z.string().min(1).optional().describe('Container image instead of the runtime default.'),
    timeout_seconds: positiveInt.optional().describe('Seconds a call may run before it is killed.'),
    max_stdout_bytes: positiveInt.optional().describe('Stdout kept per call, in bytes.'),
    allow_network: z.boolean().optional().describe('Allow network access (off by default).'),
    pip_packages: packageListSchema.optional().describe('Python packages installed when the sandbox is created.'),
    npm_packages: packageListSchema.optional().describe('npm packages installed when the sandbox is created.'),
    limits: frontmatterLimitsSchema.optional(),
  })
  .loose();

export const frontmatterSandboxSchema = z.union([z.enum(RUNTIMES), frontmatterSandboxObjectSchema]);
export type FrontmatterSandbox = z.output<typeof frontmatterSandboxSchema>;

/** Turns a frontmatter `sandbox` value into a spec layer; throws an invalid-input error listing every problem. */
export function specFromFrontmatter(value: unknown): SpecLayer {
  const parsed = frontmatterSandboxSchema.safeParse(value);
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
    network: sandbox.allow_network,
    pipPackages: sandbox.pip_packages,
    npmPackages: sandbox.npm_packages,
    limits: {
      memoryBytes,
      cpus,
      maxStdoutBytes: limits.max_stdout_bytes ?? sandbox.max_stdout_bytes,
      maxFileSizeBytes: limits.max_file_size_bytes,
      maxFiles: limits.max_files,
    },
  };
}
