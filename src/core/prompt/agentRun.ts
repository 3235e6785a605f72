/**
 * The pure parts of running a `.prompt` agent (or a free-form @sandbox request): which of the sandbox
 * tools it may call, which of them work on its session, what it is told about its sandbox, and the
 * check of its final answer against the file's output schema.
 */
import { z } from 'zod';
import { errorMessage } from '../errors';
import type { OpenRequest } from '../sessions/serviceTypes';
import { TOOLS } from '../tools/toolList';
import { agentScopeKey } from './analyzePrompt';
import type { RenderedPrompt } from './render';

/** The sandbox tools, by name. */
export const SANDBOX_TOOL_NAMES: readonly string[] = TOOLS.map((tool) => tool.name);

/** Tools that work on a session (they take sandbox_id); sandbox_run makes a one-off sandbox of its own. */
const SESSION_TOOLS = new Set(SANDBOX_TOOL_NAMES.filter((name) => name !== 'sandbox_run' && name !== 'sandbox_open'));

/**
 * The tools an agent may call: those its `tools:` list names (`sandbox_exec`, or `exec` for short),
 * every sandbox tool when it names none. Names that are no sandbox tool are returned apart.
 */
export function agentTools(requested: readonly string[]): { tools: string[]; unknown: string[] } {
  if (requested.length === 0) return { tools: [...SANDBOX_TOOL_NAMES], unknown: [] };
  const tools: string[] = [];
  const unknown: string[] = [];
  for (const name of requested) {
    const full = SANDBOX_TOOL_NAMES.includes(name) ? name : `sandbox_${name}`;
    if (!SANDBOX_TOOL_NAMES.includes(full)) unknown.push(name);
    else if (!tools.includes(full)) tools.push(full);
  }
  return { tools, unknown };
}

/**
 * What opening the agent's own session asks for: its scope (named after the agent), its `sandbox:`
 * block as a layer, and the secrets the block names (the policy picks them from those the user offers,
 * and the confirmations of the session's calls name them).
 */
export function agentSessionAsk(prompt: Pick<RenderedPrompt, 'name' | 'sandbox' | 'secrets'>): OpenRequest {
  return {
    scope: { kind: 'agent', key: agentScopeKey(prompt.name) },
    layer: prompt.sandbox,
    ...(prompt.secrets?.length ? { secrets: prompt.secrets } : {}),
  };
}

/** The input of a tool call with the agent's session filled in where the call names none. */
export function withSession(tool: string, input: unknown, sandboxId: string | undefined): unknown {
  if (!sandboxId || !SESSION_TOOLS.has(tool) || typeof input !== 'object' || input === null || Array.isArray(input))
    return input;
  const object = input as Record<string, unknown>;
  return object.sandbox_id === undefined ? { ...object, sandbox_id: sandboxId } : input;
}

/** What the agent is told first: where its work runs. */
export function sandboxBriefing(sandboxId: string | undefined, tools: readonly string[]): string {
  const lines = [
    "You work through the Agent Sandbox tools: code runs in a local, isolated Linux container, never on the user's machine.",
    `Tools you may call: ${tools.join(', ')}.`,
  ];
  if (sandboxId)
    lines.push(
      `Your persistent sandbox is sandbox_id "${sandboxId}": its files and processes last between calls; pass it as sandbox_id.`,
    );
  lines.push('Run code to check your work before you answer; answer briefly when you are done.');
  return lines.join(' ');
}

/** The briefing of a free-form @sandbox request. */
export const FREE_FORM_BRIEFING = [
  'You are @sandbox in VS Code: you answer by running code in Agent Sandbox, a local isolated Linux container.',
  'Use sandbox_run for one-off code, sandbox_exec (with code for a persistent Python interpreter) for work that builds up, and the sandbox_fs_* tools for files.',
  'Plots and pictures you make come back as images. Check your work by running it; answer briefly.',
].join(' ');

export interface OutputCheck {
  /** The answer's JSON value, when it has one. */
  value?: unknown;
  /** Why the answer does not match the output the file asks for; empty when it does. */
  problems: string[];
}

/** The JSON value in an answer: the whole text, a fenced ```json block, or the outermost {...} / [...]. */
export function jsonOfAnswer(text: string): { value?: unknown; problem?: string } {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n```/.exec(text);
  const candidates = [text.trim(), fenced?.[1]?.trim()];
  const start = text.search(/[[{]/);
  const end = Math.max(text.lastIndexOf('}'), text.lastIndexOf(']'));
  if (start >= 0 && end > start) candidates.push(text.slice(start, end + 1));
  let last = '';
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      return { value: JSON.parse(candidate) as unknown };
    } catch (error) {
      last = errorMessage(error);
    }
  }
  return { problem: `the answer holds no JSON value${last ? ` (${last})` : ''}` };
}

/** Checks the final answer against the file's output (`format: json` and/or a schema). */
export function checkOutput(output: { format?: string; schema?: Record<string, unknown> }, text: string): OutputCheck {
  if (!output.schema && output.format !== 'json') return { problems: [] };
  const { value, problem } = jsonOfAnswer(text);
  if (problem) return { problems: [problem] };
  if (!output.schema) return { value, problems: [] };
  let checker;
  try {
    checker = z.fromJSONSchema(output.schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    return { value, problems: [`the output schema cannot be checked: ${errorMessage(error)}`] };
  }
  const parsed = checker.safeParse(value);
  if (parsed.success) return { value, problems: [] };
  return {
    value,
    problems: parsed.error.issues.map((issue) => {
      const where = issue.path.length ? issue.path.map(String).join('.') : 'the answer';
      return `${where}: ${issue.message}`;
    }),
  };
}

/** The first line of a tool result, as its headline in the chat. */
export function headline(text: string): string {
  const first = text.split('\n', 1)[0]!.trim();
  return first.length > 200 ? `${first.slice(0, 199)}…` : first;
}
