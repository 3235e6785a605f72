/**
 * One tool call from raw input to the text the model reads: validate once with the tool's schema, run
 * its handler, keep host secrets out (before the output is shortened to the budget and once more
 * after), and make it safe to show in a terminal (no escape sequences from the sandbox). VS Code, the CLI's `tool` command and the hostile suite all go through here.
 */
import type { ExecResult } from '../engine/engine';
import { SandboxError, errorMessage, type SandboxErrorReason } from '../errors';
import { ReachRefusal } from './admit';
import { terminalSafe } from '../results/terminalSafe';
import { formatError } from './format';
import type { ReachKind } from './reach';
import type { HandlerContext } from './handlerContext';
import { toolSpec, type AnyToolSpec, type ToolName } from './toolList';
import type { ToolOutput } from './toolSpec';

export interface ToolCallContext extends Omit<HandlerContext, 'redactResult'> {
  /** Replaces host secrets in text; identity when there are none. */
  redact(text: string): string;
  /** For what is kept on the host (file store names): `redact` when absent. Redacts even where a person asked to see the result's secrets. */
  redactKept?(text: string): string;
}

export class ToolInputError extends Error {}

/** Names every invalid field, so the model can correct its call. */
export function invalidInputMessage(
  name: string,
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
): string {
  const problems = issues.map(
    (issue) => `- ${issue.path.length ? issue.path.map(String).join('.') : 'input'}: ${issue.message}`,
  );
  return `Invalid input for ${name}:\n${problems.join('\n')}\nNext: fix these fields and call ${name} again.`;
}

/** Parses the input with the tool's schema; throws a ToolInputError naming every bad field. */
export function parseToolInput(spec: AnyToolSpec, input: unknown): unknown {
  const parsed = spec.schema.safeParse(input);
  if (!parsed.success) throw new ToolInputError(invalidInputMessage(spec.name, parsed.error.issues));
  return parsed.data;
}

/** Runs a tool on parsed input; a thrown Error's message is what the model reads on failure. */
export async function runTool(spec: AnyToolSpec, parsed: unknown, context: ToolCallContext): Promise<ToolOutput> {
  const redactResult = (result: ExecResult): ExecResult => ({
    ...result,
    stdout: context.redact(result.stdout),
    stderr: context.redact(result.stderr),
    ...(result.value !== undefined ? { value: context.redact(result.value) } : {}),
  });
  try {
    const output = await spec.run(parsed, {
      ...context,
      redactResult,
      redactText: context.redactKept ?? context.redact,
    });
    return { ...output, text: terminalSafe(context.redact(output.text)) };
  } catch (error) {
    throw new Error(terminalSafe(context.redact(SandboxError.is(error) ? formatError(error) : errorMessage(error))), {
      cause: error,
    });
  }
}

/** Failures that come from the call's input: the model fixes its call. Anything else is the environment's. */
export const INPUT_REASONS: ReadonlySet<SandboxErrorReason> = new Set([
  'invalid-input',
  'path-outside-workspace',
  'file-not-found',
  'not-a-file',
  'is-a-directory',
  'file-exists',
  'session-not-found',
  'session-exists',
]);

export interface ToolOutcome extends ToolOutput {
  /** Set when the call failed for a reason of the environment (engine down, session dead, a limit, the policy). */
  failure?: SandboxErrorReason;
  /** Set when the policy refused the call's sandbox for reaching further than allowed: a front end may ask its user. */
  refusal?: { readonly sandboxId: string; readonly wider: readonly ReachKind[] };
}

/** A failure of the environment as a result: its first line says "failed · <reason>", then what happened and what to do. */
export function failureText(reason: SandboxErrorReason, message: string): string {
  return `failed · ${reason.replace(/-/g, ' ')}\n${message}`;
}

/**
 * Runs a tool as clients should see it: bad input is thrown (the model fixes its call); a failing
 * environment (engine down, image missing, session dead, a limit hit, the user's policy) is a
 * result that says what happened and what to do, since clients append "check your input" to a
 * thrown error, which is wrong advice there.
 */
export async function callTool(spec: AnyToolSpec, parsed: unknown, context: ToolCallContext): Promise<ToolOutcome> {
  try {
    return await runTool(spec, parsed, context);
  } catch (error) {
    const cause = (error as Error).cause;
    if (error instanceof ToolInputError || !SandboxError.is(cause) || INPUT_REASONS.has(cause.reason)) throw error;
    return {
      text: failureText(cause.reason, (error as Error).message),
      failure: cause.reason,
      ...(cause instanceof ReachRefusal ? { refusal: { sandboxId: cause.sandboxId, wider: cause.wider } } : {}),
    };
  }
}

/** Validates and runs a tool by its name; the text the model reads (benchmarks and tests call tools this way). */
export async function runNamedTool(name: ToolName, input: unknown, context: ToolCallContext): Promise<string> {
  const spec = toolSpec(name);
  return (await runTool(spec, parseToolInput(spec, input), context)).text;
}

/** Like callTool, by the tool's name and with raw input. */
export async function callNamedTool(name: ToolName, input: unknown, context: ToolCallContext): Promise<ToolOutcome> {
  const spec = toolSpec(name);
  return callTool(spec, parseToolInput(spec, input), context);
}
