/**
 * The tools where no one is asked: `agent-sandbox tool` and the MCP server. The policy is what the
 * command's flags allow (most workspace access, network, whether an rw sandbox may change .git,
 * .vscode, ...), applied twice as in VS Code: when a session opens (it gets no more than that, with
 * a notice naming the flag) and when a call is about to use one (a session opened with more, by
 * another command or VS Code, is refused with a message naming the flag).
 */
import type { SandboxEngine, SessionClient, SessionInfo, SessionScope } from '../core/engine/engine';
import { SandboxError } from '../core/errors';
import { engineLabel } from '../core/engine/engineCapabilities';
import { protectedPathsFor } from '../core/policy/protectedPaths';
import type { KnownSecrets } from '../core/secrets/knownSecrets';
import type { SandboxService } from '../core/sessions/sandboxService';
import { TOOL_WORDS } from '../core/sessions/sessionWords';
import type { Settings } from '../core/spec/settings';
import { ReachRefusal, admitWithin } from '../core/tools/admit';
import { RESULT_CHARS, type TextBudget } from '../core/tools/fitBudget';
import { allowedNamesOf } from '../core/network/allowlist';
import { offeredDomains } from '../core/secrets/catalog';
import { ActivityFile } from '../core/sessions/activityFile';
import { summarizeInput } from '../core/sessions/activityLog';
import { policyReach, reachSentence, union, type ReachKind } from '../core/tools/reach';
import { callTool, parseToolInput, type ToolOutcome } from '../core/tools/runTool';
import { toolSpec, type ToolName } from '../core/tools/toolList';
import type { ProgressCallback } from '../core/engine/engine';
import { cliFileStore } from './commands';
import { cliSandboxService, cliSecrets } from './cliService';

export interface FlagPolicyOptions {
  engine: SandboxEngine;
  folder: string;
  settings: Settings;
  client: SessionClient;
  /** The command the flags belong to, for messages: "this command", "agent-sandbox mcp". */
  command: string;
  /** How the flags are changed, before the flag in messages: "run this command with", "start agent-sandbox mcp with". */
  withFlag: string;
  /** The scope of the default session (an MCP connection's own); the workspace's when absent. */
  defaultScope?: SessionScope;
  /** Why a session of this scope is not this caller's to use or close (another MCP connection's), or undefined. */
  notOurs?(scope: SessionScope): string | undefined;
  /** Where the service says what it did on its own (a copy session kept open for its unapplied changes). */
  log?(level: 'info' | 'warn', message: string): void;
  /** The secrets injected into every sandbox and redacted from results, the activity file and the log; the command line's when absent. */
  secrets?: KnownSecrets;
  /** Results keep the secrets' values (`agent-sandbox tool --show-secrets`, for a person); the activity file never does. */
  showSecrets?: boolean;
}

export interface CallOptions {
  signal: AbortSignal;
  /** What the user allowed for this one call beyond the flags (asked through the MCP client). */
  granted?: readonly ReachKind[];
  budget?: TextBudget;
  onProgress?: ProgressCallback;
}

export interface FlagPolicyTools {
  readonly service: SandboxService;
  /** One call: bad input throws a ToolInputError, a failing environment is an outcome with `failure`. */
  call(name: ToolName, input: unknown, options: CallOptions): Promise<ToolOutcome>;
}

/** The flags that set a policy, as they read in messages: "--workspace ro, no --network". */
export function flagsText(settings: Settings): string {
  const { mode, allow } = settings.network;
  const network =
    mode === 'full'
      ? '--network'
      : mode === 'allowlist'
        ? allow.map((name) => `--allow-domain ${name}`).join(' ')
        : 'no --network';
  return `--workspace ${settings.workspaceAccess}, ${network}`;
}

/** The network the flags allow, in words: "on", "off", or "only api.github.com, pypi.org". */
export function networkWords(settings: Settings): string {
  const { mode, allow } = settings.network;
  return mode === 'full' ? 'on' : mode === 'allowlist' ? `limited to ${allow.join(', ')}` : 'off';
}

export function flagPolicyTools(options: FlagPolicyOptions): FlagPolicyTools {
  const { engine, folder, settings, command, withFlag } = options;
  const secrets = options.secrets ?? cliSecrets();
  const redact = secrets.redact;
  // The tools speak to the model, in the tools' words, and keep at most sessions.maxSessions open, as in VS Code.
  const service = cliSandboxService(engine, folder, settings, {
    words: TOOL_WORDS,
    makesRoom: true,
    secrets,
    client: options.client,
    defaultScope: options.defaultScope,
    log: options.log && ((level, message) => options.log!(level, redact(message))),
    raisedBy: {
      workspaceAccess: `${withFlag} --workspace ro or rw`,
      network: `${withFlag} --network`,
      networkAllow: `${withFlag} --allow-domain NAME`,
    },
  });
  // The same store, and the same limit per file, as `agent-sandbox files`.
  const store = cliFileStore();
  const protectedPaths = protectedPathsFor(folder, settings.configWritesAllowedIn);
  const flags = flagsText(settings);
  // The domains of the bound secrets offered: a session that asked for one reaches them (withBoundDomains).
  const boundDomains = offeredDomains(settings.secrets);
  const flagNames = allowedNamesOf(settings.network);
  const activity = new ActivityFile(folder, options.client ?? 'cli', undefined, redact);
  return {
    service,
    async call(name, input, call) {
      const spec = toolSpec(name);
      const parsed = parseToolInput(spec, input);
      const started = performance.now();
      const outcome = await callTool(spec, parsed, {
        service,
        engine: engineLabel(engine.kind, engine.capabilities),
        capabilities: engine.capabilities,
        signal: call.signal,
        // The same bound as in VS Code: a result fits a model's context whatever the output's shape.
        budget: call.budget ?? { maxChars: RESULT_CHARS, signal: call.signal },
        redact: options.showSecrets ? (text) => text : redact,
        redactKept: redact,
        store,
        workspaceFolder: folder,
        protectedPaths,
        onProgress: call.onProgress,
        admit: admitAlso(
          admitWithin(
            spec,
            parsed,
            {
              allowed: union(
                policyReach(settings.workspaceAccess, settings.network.mode, settings.secrets.length > 0),
                new Set<ReachKind>(boundDomains.length ? ['allowlist'] : []),
                new Set(call.granted ?? []),
              ),
              protectedPaths,
              keptBy: `${command} has no --allow-config-writes`,
              liftWith: `${withFlag} --allow-config-writes`,
              allowedNames: flagNames,
              offeredSecrets: settings.secrets,
            },
            service,
            (sandboxId, wider) =>
              new ReachRefusal(
                sandboxId,
                wider,
                `Sandbox "${sandboxId}" would ${reachSentence(wider)}: more than ${command} allows (${flags}). It was opened with more access before, by another command or VS Code.`,
                `Use a sandbox within these flags (sandbox_open with another session name), or ${withFlag} the flags that allow it (--workspace ro or rw, --network).`,
              ),
          ),
          options.notOurs,
        ),
      });
      // The folder's activity file, as VS Code keeps it: every call, for audit (agent-sandbox log).
      const target = spec.target(parsed);
      activity.append({
        tool: name,
        summary: redact(summarizeInput(name, parsed as Record<string, unknown>)),
        exitCode: outcome.exitCode ?? null,
        ok: !outcome.failure && (outcome.exitCode === undefined || outcome.exitCode === 0),
        durationMs: Math.round(performance.now() - started),
        at: new Date().toISOString(),
        ...(target.kind === 'run' ? {} : { sandboxId: target.sandboxId ?? service.defaultSandboxId() }),
      });
      return outcome;
    },
  };
}

/** The policy's check, after refusing a session that is not this caller's (notOurs). */
function admitAlso(
  admit: (session: SessionInfo) => void,
  notOurs: FlagPolicyOptions['notOurs'],
): (session: SessionInfo) => void {
  return (session) => {
    const why = notOurs?.(session.scope);
    if (why)
      throw new SandboxError(
        'permission-denied',
        why,
        'Use your own sandboxes: omit sandbox_id for the default one, or open a named one with sandbox_open.',
      );
    admit(session);
  };
}
