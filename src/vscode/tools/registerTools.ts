/** Registers the language-model tools: validate, confirm, run on the sandbox service, answer in text. */
import * as vscode from 'vscode';
import { z } from 'zod';
import { SandboxError, errorMessage } from '../../core/errors';
import type { FileStore } from '../../core/fileStore';
import type { SandboxService } from '../../core/sandboxService';
import type { Settings } from '../../core/settings';
import { formatError } from '../../core/tools/format';
import { TOOL_INPUT_SCHEMAS, type ToolName } from '../../core/tools/schemas';
import type { ExecResult } from '../../core/engine';
import { summarizeInput, type ActivityLog } from '../../core/activityLog';
import { sandboxIdFor } from '../../core/sessions';
import { abortSignalFrom } from '../cancellation';
import type { SandboxSecrets } from '../secrets';
import type { EngineState } from '../engineState';
import { describeInvocation } from './confirmations';
import { TOOL_HANDLERS } from './handlers';

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
  return (Object.keys(TOOL_INPUT_SCHEMAS) as ToolName[]).map((name) => vscode.lm.registerTool(name, new SandboxTool(name, services)));
}

/** Names every invalid field, so the model can correct its call. */
export function invalidInputMessage(name: ToolName, error: z.ZodError): string {
  const problems = error.issues.map((issue) => {
    const field = issue.path.length ? issue.path.join('.') : 'input';
    return `- ${field}: ${issue.message}`;
  });
  return `Invalid input for ${name}:\n${problems.join('\n')}\nNext: fix these fields and call ${name} again.`;
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
    return described.confirmation ? { invocationMessage: described.invocationMessage, confirmationMessages: described.confirmation } : { invocationMessage: described.invocationMessage };
  }

  async invoke(options: vscode.LanguageModelToolInvocationOptions<unknown>, token: vscode.CancellationToken): Promise<vscode.LanguageModelToolResult> {
    const started = performance.now();
    const parsed = TOOL_INPUT_SCHEMAS[this.name].safeParse(options.input);
    if (!parsed.success) {
      const message = invalidInputMessage(this.name, parsed.error);
      this.services.log.warn(`${this.name}: ${message.replace(/\n/g, ' ')}`);
      throw new Error(message);
    }
    const cancellation = abortSignalFrom(token);
    try {
      // Without the caller's budget, a bound that keeps one result from flooding the model's context.
      const budget = options.tokenizationOptions
        ? { tokenBudget: options.tokenizationOptions.tokenBudget, countTokens: (text: string) => options.tokenizationOptions!.countTokens(text) }
        : { maxChars: DEFAULT_RESULT_CHARS };
      const handler = TOOL_HANDLERS[this.name] as (input: unknown, context: Parameters<(typeof TOOL_HANDLERS)['sandbox_run']>[1]) => Promise<string>;
      const secrets = this.services.secrets;
      const redactResult = (result: ExecResult) => ({ ...result, stdout: secrets.redact(result.stdout), stderr: secrets.redact(result.stderr) });
      // Output is redacted before it is shortened to the budget, and the whole answer once more after.
      const raw = await this.services.track(handler(parsed.data, { service: this.services.service, engine: 'docker', signal: cancellation.signal, budget, redactResult, store: this.services.store, workspaceFolder: this.services.workspaceFolder() }));
      const text = secrets.redact(raw);
      this.services.engine.reportSuccess();
      this.services.log.info(`${this.name} (${Math.round(performance.now() - started)} ms): ${firstLine(text)}`);
      this.record(parsed.data, started, true, /\bexit code (\d+)/.exec(firstLine(text))?.[1]);
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
    } catch (error) {
      this.services.engine.reportFailure(error);
      const redact = (text: string) => this.services.secrets.redact(text);
      this.services.log.error(`${this.name} failed after ${Math.round(performance.now() - started)} ms: ${redact(errorMessage(error)).replace(/\n/g, ' ')}`);
      this.record(parsed.data, started, false);
      throw new Error(redact(SandboxError.is(error) ? formatError(error) : errorMessage(error)));
    } finally {
      cancellation.dispose();
    }
  }

  /** One line in the panel's Activity list, redacted like everything else. */
  private record(input: object, started: number, ok: boolean, exitCode?: string): void {
    const fields = input as { sandbox_id?: string; session?: string; scope?: string; agent?: string; workflow_run?: string };
    const scope = fields.scope === 'agent' ? { kind: 'agent' as const, key: fields.agent } : fields.scope === 'workflow' ? { kind: 'workflow' as const, key: fields.workflow_run } : undefined;
    const sandboxId = this.name === 'sandbox_run' ? undefined : this.name === 'sandbox_open' ? sandboxIdFor(scope, fields.session ?? 'default') : (fields.sandbox_id ?? 'default');
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

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? '';
}
