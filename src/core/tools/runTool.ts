/**
 * One tool call from raw input to the text the model reads: validate with the tool's schema, run
 * its handler, keep host secrets out (before the output is shortened to the budget and once more
 * after). The VS Code tools and the hostile-input suite both go through here.
 */
import type { ExecResult } from '../engine/engine';
import { SandboxError, errorMessage, type SandboxErrorReason } from '../errors';
import { formatError } from './format';
import { TOOL_HANDLERS, type HandlerContext } from './handlers';
import { TOOL_INPUT_SCHEMAS, type ToolName } from './schemas';

export interface ToolCallContext extends Omit<HandlerContext, 'redactResult'> {
  /** Replaces host secrets in text; identity when there are none. */
  redact(text: string): string;
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

/** Parses the input; throws a ToolInputError naming every bad field. */
export function parseToolInput(name: ToolName, input: unknown): object {
  const parsed = TOOL_INPUT_SCHEMAS[name].safeParse(input);
  if (!parsed.success) throw new ToolInputError(invalidInputMessage(name, parsed.error.issues));
  return parsed.data;
}

/** Runs a tool; the text is the answer, a thrown Error's message is what the model reads on failure. */
export async function runTool(name: ToolName, input: unknown, context: ToolCallContext): Promise<string> {
  const parsed = parseToolInput(name, input);
  const redactResult = (result: ExecResult): ExecResult => ({
    ...result,
    stdout: context.redact(result.stdout),
    stderr: context.redact(result.stderr),
  });
  const handler = TOOL_HANDLERS[name] as (input: unknown, context: HandlerContext) => Promise<string>;
  try {
    return context.redact(await handler(parsed, { ...context, redactResult, redactText: context.redact }));
  } catch (error) {
    throw new Error(context.redact(SandboxError.is(error) ? formatError(error) : errorMessage(error)), {
      cause: error,
    });
  }
}

/** Failures that come from the call's input: the model fixes its call. Anything else is the environment's. */
const INPUT_REASONS: ReadonlySet<SandboxErrorReason> = new Set([
  'invalid-input',
  'path-outside-workspace',
  'file-not-found',
  'not-a-file',
  'is-a-directory',
  'file-exists',
  'session-not-found',
  'session-exists',
]);

export interface ToolOutcome {
  /** What the model reads. */
  text: string;
  /** Set when the call failed for a reason of the environment (engine down, session dead, a limit, the policy). */
  failure?: SandboxErrorReason;
}

/**
 * Runs a tool as clients should see it: bad input is thrown (the model fixes its call); a failing
 * environment (engine down, image missing, session dead, a limit hit, the user's policy) is a
 * result that says what happened and what to do, since clients append "check your input" to a
 * thrown error, which is wrong advice there.
 */
export async function callTool(name: ToolName, input: unknown, context: ToolCallContext): Promise<ToolOutcome> {
  try {
    return { text: await runTool(name, input, context) };
  } catch (error) {
    const cause = (error as Error).cause;
    if (error instanceof ToolInputError || !SandboxError.is(cause) || INPUT_REASONS.has(cause.reason)) throw error;
    return { text: `failed · ${cause.reason.replace(/-/g, ' ')}\n${(error as Error).message}`, failure: cause.reason };
  }
}
