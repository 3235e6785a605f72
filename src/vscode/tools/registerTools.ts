/** Registers the language-model tools: validate, confirm, run on the sandbox service, answer in text. */
import * as vscode from 'vscode';
import type { FileStore } from '../../core/files/fileStore';
import type { SandboxService } from '../../core/sessions/sandboxService';
import type { Settings } from '../../core/spec/settings';
import { TOOL_INPUT_SCHEMAS, type ToolName } from '../../core/tools/schemas';
import { summarizeInput, type ActivityLog } from '../../core/sessions/activityLog';
import { sandboxIdFor } from '../../core/sessions/sessions';
import { callTool, parseToolInput } from '../../core/tools/runTool';
import { SandboxError } from '../../core/errors';
import { protectedPathsFor } from '../../core/policy/protectedPaths';
import { formatError } from '../../core/tools/format';
import { resultParts } from '../../core/tools/resultParts';
import { engineLabel } from '../../core/engine/engineCapabilities';
import { abortSignalFrom } from '../cancellation';
import type { SandboxSecrets } from '../secrets';
import type { EngineState } from '../engineState';
import { describeInvocation } from './confirmations';

export interface ToolServices {
  service: SandboxService;
  engine: EngineState;
  settings(): Settings;
  log: vscode.LogOutputChannel;
  track<T>(work: Promise<T>): Promise<T>;
  /** The recent calls, for the panel. */
  activity: ActivityLog;
  /** Keeps host secrets out of results and the log. */
  secrets: SandboxSecrets;
  /** The local file store for sandbox_stage_file and sandbox_publish_file. */
  store: FileStore;
  /** The workspace folder the file tools may read and (after confirmation) write; undefined without one or when untrusted. */
  workspaceFolder(): string | undefined;
}

const DEFAULT_RESULT_CHARS = 48_000;

export function registerTools(services: ToolServices): vscode.Disposable[] {
  return (Object.keys(TOOL_INPUT_SCHEMAS) as ToolName[]).map((name) =>
    vscode.lm.registerTool(name, new SandboxTool(name, services)),
  );
}

class SandboxTool implements vscode.LanguageModelTool<unknown> {
  constructor(
    private readonly name: ToolName,
    private readonly services: ToolServices,
  ) {}

  prepareInvocation(options: vscode.LanguageModelToolInvocationPrepareOptions<unknown>): vscode.PreparedToolInvocation {
    const parsed = TOOL_INPUT_SCHEMAS[this.name].safeParse(options.input);
    if (!parsed.success) return { invocationMessage: vscode.l10n.t('Checking the input of {0}', this.name) };
    let settings: Settings;
    try {
      settings = this.services.settings();
    } catch {
      return { invocationMessage: this.name };
    }
    const described = describeInvocation(this.name, parsed.data, this.services.service, settings);
    return described.confirmation
      ? { invocationMessage: described.invocationMessage, confirmationMessages: described.confirmation }
      : { invocationMessage: described.invocationMessage };
  }

  async invoke(
    options: vscode.LanguageModelToolInvocationOptions<unknown>,
    token: vscode.CancellationToken,
  ): Promise<vscode.LanguageModelToolResult> {
    const started = performance.now();
    let input: object;
    try {
      input = parseToolInput(this.name, options.input);
    } catch (error) {
      this.services.log.warn(`${this.name}: ${(error as Error).message.replace(/\n/g, ' ')}`);
      throw error;
    }
    const cancellation = abortSignalFrom(token);
    try {
      // Without the caller's budget, a bound that keeps one result from flooding the model's context.
      // 48k characters at most, and within the caller's token budget when it gives one (counted in bounded time, see tokenCount.ts).
      const tokenization = options.tokenizationOptions;
      const budget = tokenization
        ? {
            maxChars: DEFAULT_RESULT_CHARS,
            tokenBudget: tokenization.tokenBudget,
            countTokens: (text: string) => tokenization.countTokens(text, token),
            signal: cancellation.signal,
          }
        : { maxChars: DEFAULT_RESULT_CHARS, signal: cancellation.signal };
      const secrets = this.services.secrets;
      // Decides the engine first (auto: Docker when it answers); without one the call is a result that says what to do.
      let engine;
      try {
        engine = await this.services.engine.ready();
      } catch (error) {
        this.services.engine.reportFailure(error);
        this.services.log.error(`${this.name}: no engine: ${formatError(error).replace(/\n/g, ' ')}`);
        this.record(input, started, false);
        const reason = SandboxError.is(error) ? error.reason : 'engine-unavailable';
        return textResult(secrets.redact(`failed · ${reason.replace(/-/g, ' ')}\n${formatError(error)}`));
      }
      const { text, failure } = await this.services.track(
        callTool(this.name, input, {
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
        }),
      );
      if (failure === 'engine-unavailable' || failure === 'engine-permission')
        this.services.engine.reportFailure(new SandboxError(failure, firstLine(text)));
      else this.services.engine.reportSuccess();
      this.services.log[failure ? 'warn' : 'info'](
        `${this.name} (${Math.round(performance.now() - started)} ms): ${firstLine(text)}`,
      );
      this.record(input, started, !failure, /\bexit code (\d+)/.exec(firstLine(text))?.[1]);
      return textResult(text);
    } catch (error) {
      this.services.engine.reportFailure((error as Error).cause ?? error);
      this.services.log.error(
        `${this.name} failed after ${Math.round(performance.now() - started)} ms: ${(error as Error).message.replace(/\n/g, ' ')}`,
      );
      this.record(input, started, false);
      throw error;
    } finally {
      cancellation.dispose();
    }
  }

  /** One line in the panel's Activity list, redacted like everything else. */
  private record(input: object, started: number, ok: boolean, exitCode?: string): void {
    const fields = input as {
      sandbox_id?: string;
      session?: string;
      scope?: string;
      agent?: string;
      workflow_run?: string;
    };
    const scope =
      fields.scope === 'agent'
        ? { kind: 'agent' as const, key: fields.agent }
        : fields.scope === 'workflow'
          ? { kind: 'workflow' as const, key: fields.workflow_run }
          : undefined;
    const sandboxId =
      this.name === 'sandbox_run'
        ? undefined
        : this.name === 'sandbox_open'
          ? sandboxIdFor(scope, fields.session ?? 'default')
          : (fields.sandbox_id ?? 'default');
    this.services.activity.record({
      tool: this.name,
      summary: this.services.secrets.redact(summarizeInput(this.name, input as Record<string, unknown>)),
      exitCode: exitCode === undefined ? null : Number(exitCode),
      ok: ok && (exitCode === undefined || exitCode === '0'),
      durationMs: Math.round(performance.now() - started),
      at: new Date().toISOString(),
      ...(sandboxId ? { sandboxId } : {}),
    });
  }
}

/** The text as the parts of a result, none longer than a client shows the model (see resultParts.ts). */
function textResult(text: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult(resultParts(text).map((part) => new vscode.LanguageModelTextPart(part)));
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? '';
}
