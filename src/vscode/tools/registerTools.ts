/**
 * Registers every language-model tool of the list in core (toolList.ts): validate once, approve by
 * reach, run on the sandbox service, answer in parts a client shows the model.
 */
import * as vscode from 'vscode';
import { engineLabel } from '../../core/engine/engineCapabilities';
import { SandboxError } from '../../core/errors';
import type { FileStore } from '../../core/files/fileStore';
import { protectedPathsFor } from '../../core/policy/protectedPaths';
import { summarizeInput, type ActivityLog } from '../../core/sessions/activityLog';
import type { SandboxService } from '../../core/sessions/sandboxService';
import type { Settings } from '../../core/spec/settings';
import { admitWithin } from '../../core/tools/admit';
import { approvalFor, ReachGrants } from '../../core/tools/approvals';
import { NO_REACH, reachSentence, union, widening, type Reach, type ReachKind } from '../../core/tools/reach';
import { RESULT_CHARS } from '../../core/tools/fitBudget';
import { formatError } from '../../core/tools/format';
import { resultParts } from '../../core/tools/resultParts';
import type { ImageOutput } from '../../core/results/images';
import { allowedNamesOf } from '../../core/network/allowlist';
import type { PanelImages } from '../panel/panelImages';
import { callTool, failureText, parseToolInput } from '../../core/tools/runTool';
import { resolveTarget, viewTarget } from '../../core/tools/targetView';
import { TOOLS, type AnyToolSpec } from '../../core/tools/toolList';
import { abortSignalFrom } from '../cancellation';
import type { EngineState } from '../engineState';
import type { SandboxSecrets } from '../secrets';
import { askToWiden } from './approvals';
import { ClientConfirmations } from './clientConfirmations';
import { confirmationMarkdown, text } from './callText';

export interface ToolServices {
  service: SandboxService;
  engine: EngineState;
  settings(): Settings;
  log: vscode.LogOutputChannel;
  track<T>(work: Promise<T>): Promise<T>;
  /** The recent calls, for the panel. */
  activity: ActivityLog;
  /** Each session's last images, for the panel's thumbnails. */
  images?: PanelImages;
  /** Keeps host secrets out of results and the log. */
  secrets: SandboxSecrets;
  /** The local file store for sandbox_stage_file and sandbox_publish_file. */
  store: FileStore;
  /** The workspace folder the file tools may read and (after confirmation) write; undefined without one or when untrusted. */
  workspaceFolder(): string | undefined;
}

export function registerTools(services: ToolServices): vscode.Disposable[] {
  const grants = new ReachGrants();
  return TOOLS.map((spec) =>
    vscode.lm.registerTool(spec.name, new SandboxTool(spec as unknown as AnyToolSpec, services, grants)),
  );
}

class SandboxTool implements vscode.LanguageModelTool<unknown> {
  constructor(
    private readonly spec: AnyToolSpec,
    private readonly services: ToolServices,
    private readonly grants: ReachGrants,
  ) {}

  private readonly confirmations = new ClientConfirmations();

  prepareInvocation(options: vscode.LanguageModelToolInvocationPrepareOptions<unknown>): vscode.PreparedToolInvocation {
    const prepared = this.prepare(options.input);
    this.confirmations.note(options.input, prepared.confirmationMessages !== undefined);
    return prepared;
  }

  private prepare(input: unknown): vscode.PreparedToolInvocation {
    const parsed = this.spec.schema.safeParse(input);
    if (!parsed.success) return { invocationMessage: vscode.l10n.t('Checking the input of {0}', this.spec.name) };
    let settings: Settings;
    try {
      settings = this.services.settings();
    } catch {
      return { invocationMessage: this.spec.name };
    }
    const target = viewTarget(
      this.spec.target(parsed.data),
      this.services.service,
      knownEngine(this.services.engine, settings),
    );
    const description = this.spec.describe(parsed.data, { target, settings });
    const approval = approvalFor(
      this.spec,
      this.spec.reach(parsed.data, target),
      this.grants.granted(target, target.containerId),
      settings.confirmation,
    );
    // A call that widens its sandbox's reach is asked about in invoke, in our own dialog; the
    // client's confirmation, which it may remember for every later call of this tool, is only
    // for calls within what the user already granted. Under "always" it comes with every call that
    // changes something, also one our dialog may ask about: invoke decides on the sandbox it finds
    // in the engine, and a session this view does not know (opened by another client, or before a
    // reload) may turn out to need no dialog, so this view must not decide that no one asks.
    const confirm = approval.kind === 'client' || (settings.confirmation === 'always' && this.spec.changes);
    return confirm
      ? {
          invocationMessage: text(description.progress),
          confirmationMessages: { title: text(description.title), message: confirmationMarkdown(description) },
        }
      : { invocationMessage: text(description.progress) };
  }

  async invoke(
    options: vscode.LanguageModelToolInvocationOptions<unknown>,
    token: vscode.CancellationToken,
  ): Promise<vscode.LanguageModelToolResult> {
    const started = performance.now();
    const confirmedByClient = this.confirmations.take(options.input);
    let input: unknown;
    try {
      input = parseToolInput(this.spec, options.input);
    } catch (error) {
      this.services.log.warn(`${this.spec.name}: ${(error as Error).message.replace(/\n/g, ' ')}`);
      throw error;
    }
    const cancellation = abortSignalFrom(token);
    const secrets = this.services.secrets;
    try {
      // 48k characters at most, and within the caller's token budget when it gives one (counted in bounded time, see tokenCount.ts).
      const tokenization = options.tokenizationOptions;
      const budget = tokenization
        ? {
            maxChars: RESULT_CHARS,
            tokenBudget: tokenization.tokenBudget,
            countTokens: (value: string) => tokenization.countTokens(value, token),
            signal: cancellation.signal,
          }
        : { maxChars: RESULT_CHARS, signal: cancellation.signal };
      // Decides the engine first (auto: Docker when it answers); without one the call is a result that says what to do.
      let engine;
      try {
        engine = await this.services.engine.ready();
      } catch (error) {
        this.services.engine.reportFailure(error);
        this.services.log.error(`${this.spec.name}: no engine: ${formatError(error).replace(/\n/g, ' ')}`);
        this.record(input, started, false);
        const reason = SandboxError.is(error) ? error.reason : 'engine-unavailable';
        return textResult(secrets.redact(failureText(reason, formatError(error))));
      }
      const approved = await this.approve(input, engine.kind, confirmedByClient, cancellation.signal);
      if ('declined' in approved) {
        this.record(input, started, false);
        return textResult(approved.declined);
      }
      const outcome = await this.services.track(
        callTool(this.spec, input, {
          service: this.services.service,
          engine: engineLabel(engine.kind, engine.capabilities),
          capabilities: engine.capabilities,
          signal: cancellation.signal,
          budget,
          redact: (value) => secrets.redact(value),
          store: this.services.store,
          workspaceFolder: this.services.workspaceFolder(),
          protectedPaths: protectedPathsFor(
            this.services.workspaceFolder(),
            this.services.settings().configWritesAllowedIn,
          ),
          // The approval was decided on the sandbox as it looked then: the one the call uses must be within it.
          admit: admitWithin(
            this.spec,
            input,
            {
              allowed: approved.allowed,
              protectedPaths: protectedPathsFor(
                this.services.workspaceFolder(),
                this.services.settings().configWritesAllowedIn,
              ),
              keptBy: 'the setting agentSandbox.configWritesAllowedIn does not list this folder',
              liftWith: 'the user setting agentSandbox.configWritesAllowedIn',
              allowedNames: allowedNamesOf(this.services.settings().network),
            },
            this.services.service,
            changedSince,
          ),
        }).finally(() => this.settleGrant(input)),
      );
      const { failure } = outcome;
      if (failure === 'engine-unavailable' || failure === 'engine-permission')
        this.services.engine.reportFailure(new SandboxError(failure, firstLine(outcome.text)));
      else this.services.engine.reportSuccess();
      this.services.log[failure ? 'warn' : 'info'](
        `${this.spec.name} (${Math.round(performance.now() - started)} ms): ${firstLine(outcome.text)}`,
      );
      this.record(input, started, !failure, outcome.exitCode);
      if (outcome.images?.length) this.showImages(input, outcome.images);
      return textResult(outcome.text, outcome.images);
    } catch (error) {
      this.services.engine.reportFailure((error as Error).cause ?? error);
      this.services.log.error(
        `${this.spec.name} failed after ${Math.round(performance.now() - started)} ms: ${(error as Error).message.replace(/\n/g, ' ')}`,
      );
      this.record(input, started, false);
      throw error;
    } finally {
      cancellation.dispose();
    }
  }

  /**
   * Asks in our own dialog when the call reaches further than the user granted for its sandbox,
   * whatever the client approved, or when it needs VS Code's confirmation and did not get it (see
   * clientConfirmations.ts); returns what the call may reach, or the result text when the user
   * declines.
   */
  private async approve(
    input: unknown,
    engine: 'docker' | 'virtual',
    confirmedByClient: boolean,
    signal: AbortSignal,
  ): Promise<{ allowed: Reach } | { declined: string }> {
    const service = this.services.service;
    const settings = this.services.settings();
    const target = await resolveTarget(this.spec.target(input), service, engine, signal);
    const containerId = target.containerId;
    const reach = this.spec.reach(input, target);
    const granted = this.grants.granted(target, containerId);
    const approval = approvalFor(this.spec, reach, granted, settings.confirmation);
    if (approval.kind === 'none' || (approval.kind === 'client' && confirmedByClient))
      return { allowed: union(granted, reach) };
    const wider = approval.kind === 'ask';
    const asked = wider ? approval.widening : widening(reach, NO_REACH);
    const description = this.spec.describe(input, { target, settings });
    const answer = await askToWiden(
      description,
      asked,
      target,
      this.services.workspaceFolder(),
      wider ? 'wider' : 'unconfirmed',
    );
    this.services.log.info(
      `${this.spec.name}: asked ${wider ? 'to' : 'unconfirmed by VS Code, to'} ${asked.join(', ') || 'run'} for sandbox ${target.sandboxId}: ${answer}`,
    );
    if (answer === 'declined')
      return {
        declined: failureText(
          'permission-denied',
          wider
            ? `The user did not allow this call: it would ${asked.join(', ').replace(/-/g, ' ')} for sandbox ${target.sandboxId}, more than they allowed for it.\nNext: do the work without it (a sandbox without workspace access or network), or ask the user whether they want to allow it.`
            : `The user did not allow this call in sandbox ${target.sandboxId}.\nNext: ask the user whether they want it, or do the work another way.`,
        ),
      };
    if (answer === 'sandbox') this.grants.grant(target.sandboxId, reach, containerId);
    return { allowed: union(granted, reach) };
  }

  /**
   * A grant given for a sandbox this call was to open is tied to its container now that it exists,
   * or dropped when the call opened none: it was for that sandbox, not for whatever opens later
   * under its name.
   */
  private settleGrant(input: unknown): void {
    const called = this.spec.target(input);
    if (called.kind === 'run') return;
    const id = called.sandboxId ?? this.services.service.defaultSandboxId();
    this.grants.bind(id, this.services.service.known(id)?.id);
  }

  /** A call's images become its session's last ones in the panel. */
  private showImages(input: unknown, images: readonly ImageOutput[]): void {
    const target = this.spec.target(input);
    if (target.kind === 'run') return;
    const containerId = this.services.service.known(target.sandboxId ?? this.services.service.defaultSandboxId())?.id;
    if (!containerId) return;
    this.services.images
      ?.keep(containerId, images)
      .catch((error: unknown) =>
        this.services.log.warn(`The panel cannot show the images of ${this.spec.name}: ${(error as Error).message}`),
      );
  }

  /** One line in the panel's Activity list, redacted like everything else. */
  private record(input: unknown, started: number, ok: boolean, exitCode?: number | null): void {
    const target = this.spec.target(input);
    const sandboxId = target.kind === 'run' ? undefined : (target.sandboxId ?? 'default');
    this.services.activity.record({
      tool: this.spec.name,
      summary: this.services.secrets.redact(summarizeInput(this.spec.name, input as Record<string, unknown>)),
      exitCode: exitCode ?? null,
      ok: ok && (exitCode === undefined || exitCode === 0),
      durationMs: Math.round(performance.now() - started),
      at: new Date().toISOString(),
      ...(sandboxId ? { sandboxId } : {}),
    });
  }
}

/** Refuses a sandbox that reaches further than the call was approved for (another client opened or replaced it meanwhile). */
function changedSince(sandboxId: string, wider: readonly ReachKind[]): SandboxError {
  return new SandboxError(
    'permission-denied',
    `Sandbox "${sandboxId}" changed after this call was approved: it would now ${reachSentence(wider)}, which the user did not allow for this call. Another client opened or replaced it meanwhile.`,
    'Call again: the user is asked about the sandbox as it is now.',
  );
}

/** The engine calls will run on, when it is known without asking it (confirmations name it). */
function knownEngine(engine: EngineState, settings: Settings): 'docker' | 'virtual' | undefined {
  if (settings.engine !== 'auto') return settings.engine;
  return engine.status.state === 'connected' ? engine.status.kind : undefined;
}

/**
 * The text as the parts of a result, none longer than a client shows the model (see resultParts.ts),
 * then the images the call returned as image parts (the text, headline first, says what they are).
 */
function textResult(value: string, images: readonly ImageOutput[] = []): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([
    ...resultParts(value).map((part) => new vscode.LanguageModelTextPart(part)),
    ...images.map((image) => vscode.LanguageModelDataPart.image(image.data, image.mime)),
  ]);
}

function firstLine(value: string): string {
  return value.split('\n', 1)[0] ?? '';
}
