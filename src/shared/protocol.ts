/**
 * Messages between the extension and the Sandbox panel's webview: a discriminated union each way.
 * The host validates everything that arrives from the webview with these schemas.
 */
import { z } from 'zod';

const access = z.enum(['none', 'copy', 'ro', 'rw']);
const runtime = z.enum(['python', 'node', 'bash', 'linux']);
const networkMode = z.enum(['off', 'allowlist', 'full']);

export const engineViewSchema = z.object({
  kind: z.string(),
  state: z.enum(['unknown', 'connecting', 'connected', 'unavailable']),
  endpoint: z.string(),
  product: z.string().optional(),
  version: z.string().optional(),
  problem: z.string().optional(),
  /** The fix, when the engine cannot be reached: a short sentence with the command or setting. */
  fix: z.string().optional(),
  isolation: z.string().optional(),
});
export type EngineView = z.output<typeof engineViewSchema>;

export const sessionViewSchema = z.object({
  id: z.string(),
  sandboxId: z.string(),
  name: z.string(),
  scope: z.string(),
  /** Which program opened it: VS Code, the agent-sandbox command line, or an MCP client through agent-sandbox mcp. */
  openedBy: z.enum(['vscode', 'cli', 'mcp']).optional(),
  runtime,
  image: z.string(),
  state: z.enum(['starting', 'running', 'idle', 'dead']),
  /** Why a dead session died, in words. */
  deathReason: z.string().optional(),
  createdAt: z.string(),
  lastUsedAt: z.string().optional(),
  workspaceAccess: access,
  network: z.boolean(),
  /** The names it reaches through the allowlist proxy, when the network is off. */
  networkAllow: z.array(z.string()).optional(),
  memoryLimitBytes: z.number(),
  cpus: z.number(),
  /**
   * The secrets it holds, by name (never a value or a placeholder): a bound one with its binding in
   * words and how often the egress proxy added it or left its placeholder as sent; an inside one
   * (its value is in the sandbox) marked so.
   */
  secrets: z
    .array(
      z.object({
        name: z.string(),
        /** `→ api.github.com, Authorization header`, or `value inside the sandbox`. */
        binding: z.string(),
        inside: z.boolean(),
        /** Connections the value was added to, among the decisions the panel has read. */
        used: z.number(),
        /** Connections that sent its placeholder where it was not replaced (another host, header, the URL, a body). */
        refused: z.number(),
      }),
    )
    .optional(),
  lastCommand: z.object({ summary: z.string(), exitCode: z.number().nullable(), at: z.string() }).optional(),
  /** A copy session's changes awaiting review: how many files, of which conflicts and ones needing confirmation. */
  copyChanges: z
    .object({ files: z.number(), conflicts: z.number(), held: z.number(), problem: z.string().optional() })
    .optional(),
  /** The images of its last result that had any (plots from the interpreter), as the webview may load them. */
  images: z
    .array(
      z.object({
        key: z.string(),
        name: z.string(),
        source: z.string(),
        src: z.string(),
        width: z.number().optional(),
        height: z.number().optional(),
      }),
    )
    .optional(),
});
export type SessionView = z.output<typeof sessionViewSchema>;

export const statsViewSchema = z.object({
  id: z.string(),
  cpuPercent: z.number(),
  memoryBytes: z.number(),
  memoryLimitBytes: z.number(),
});
export type StatsView = z.output<typeof statsViewSchema>;

/** A number's bounds, from the settings schema, so the panel's form checks what the settings will. */
export const numberBoundsSchema = z.object({
  minimum: z.number().optional(),
  exclusiveMinimum: z.number().optional(),
  maximum: z.number().optional(),
  integer: z.boolean(),
});
export type NumberBounds = z.output<typeof numberBoundsSchema>;

export const defaultsViewSchema = z.object({
  memory: z.string(),
  cpus: z.number(),
  pids: z.number(),
  timeoutSeconds: z.number(),
  maxStdoutBytes: z.number(),
  maxStderrBytes: z.number(),
  workspaceAccess: access,
  network: networkMode,
  /** The user's allowlist (edited in settings), shown beside the mode. */
  networkAllow: z.array(z.string()),
  /** Where the values come from: the workspace's settings or the user's. */
  target: z.enum(['user', 'workspace']),
  canUseWorkspace: z.boolean(),
  bounds: z.object({
    cpus: numberBoundsSchema,
    pids: numberBoundsSchema,
    timeoutSeconds: numberBoundsSchema,
    maxStdoutBytes: numberBoundsSchema,
    maxStderrBytes: numberBoundsSchema,
  }),
  /** What a size may look like (a regular expression's source), like `512m`. */
  sizePattern: z.string(),
});
export type DefaultsView = z.output<typeof defaultsViewSchema>;

export const activityViewSchema = z.object({
  tool: z.string(),
  summary: z.string(),
  exitCode: z.number().nullable(),
  ok: z.boolean(),
  durationMs: z.number(),
  at: z.string(),
  sandboxId: z.string().optional(),
});
export type ActivityView = z.output<typeof activityViewSchema>;

export const hostToWebviewSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('state'),
    engine: engineViewSchema,
    sessions: z.array(sessionViewSchema),
    defaults: defaultsViewSchema,
    activity: z.array(activityViewSchema),
  }),
  z.object({ type: z.literal('engine'), engine: engineViewSchema }),
  z.object({ type: z.literal('sessions'), sessions: z.array(sessionViewSchema) }),
  z.object({ type: z.literal('stats'), stats: statsViewSchema }),
  z.object({ type: z.literal('activity'), entry: activityViewSchema }),
  z.object({ type: z.literal('defaults'), defaults: defaultsViewSchema }),
  z.object({ type: z.literal('result'), action: z.string(), ok: z.boolean(), message: z.string() }),
]);
export type HostToWebview = z.output<typeof hostToWebviewSchema>;

/** The shape only: the host checks the values against the settings schema before it saves them. */
export const defaultsEditSchema = z.object({
  memory: z.string().max(64),
  cpus: z.number(),
  pids: z.number(),
  timeoutSeconds: z.number(),
  maxStdoutBytes: z.number(),
  maxStderrBytes: z.number(),
  workspaceAccess: access,
  network: networkMode,
  target: z.enum(['user', 'workspace']),
});
export type DefaultsEdit = z.output<typeof defaultsEditSchema>;

export const webviewToHostSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('retryEngine') }),
  z.object({ type: z.literal('showLog') }),
  z.object({ type: z.literal('openSession'), name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/), runtime }),
  z.object({ type: z.literal('restartSession'), sandboxId: z.string().min(1) }),
  z.object({ type: z.literal('closeSession'), sandboxId: z.string().min(1) }),
  z.object({ type: z.literal('openTerminal'), sandboxId: z.string().min(1) }),
  z.object({ type: z.literal('exportLog') }),
  z.object({ type: z.literal('reviewChanges'), sandboxId: z.string().min(1) }),
  z.object({ type: z.literal('applyChanges'), sandboxId: z.string().min(1) }),
  z.object({ type: z.literal('discardChanges'), sandboxId: z.string().min(1) }),
  z.object({ type: z.literal('openImage'), key: z.string().regex(/^files\/f_[0-9a-f]{16,64}$/) }),
  z.object({ type: z.literal('setAccess'), sandboxId: z.string().min(1), access }),
  z.object({ type: z.literal('saveDefaults'), defaults: defaultsEditSchema }),
]);
export type WebviewToHost = z.output<typeof webviewToHostSchema>;
