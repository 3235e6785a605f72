// What a case of the agent-loop tier is, as files in the folder the runner shares
// ($AGENT_SANDBOX_AGENT_LOOP_DIR): the suite writes CASE.case.json, the scripted model
// (test/vscode/scriptedModel) plays it inside Copilot's agent loop and writes CASE.transcript.json,
// and the runner notes every confirmation card and dialog it sees in CASE.ui.jsonl.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The model's vendor and id, as the scripted model's package.json contributes them. */
export const VENDOR = 'agent-sandbox-scripted';
export const MODEL_ID = 'scripted';
/** A tool of the scripted model's extension that returns one text part of `chars` characters (a control). */
export const PROBE_TOOL = 'scripted_probe_long_part';

/** One call the model makes; its callId is `${case}-t${turn}-c${index}`. */
export interface ScriptedCall {
  readonly name: string;
  readonly input: object;
}

/** One answer of the model: tool calls (the loop runs them and comes back), or the closing text. */
export type Turn = { readonly calls: readonly ScriptedCall[] } | { readonly text: string };

export interface CaseScript {
  readonly id: string;
  readonly turns: readonly Turn[];
}

/** One part of a tool result, exactly as the model received it. */
export type ReceivedPart =
  | { readonly type: 'text'; readonly value: string }
  | { readonly type: 'data'; readonly mimeType: string; readonly bytes: number; readonly text?: string }
  | { readonly type: 'other'; readonly kind: string; readonly json: string };

/** A tool result the model received, the first time it saw it. */
export interface ReceivedResult {
  readonly callId: string;
  /** The tool the call named (from the assistant message that made it). */
  readonly tool: string | undefined;
  readonly isError: boolean;
  readonly parts: readonly ReceivedPart[];
  /** The request (1-based) that carried it first. */
  readonly request: number;
}

export interface Transcript {
  readonly id: string;
  /** Requests of this case the model answered, in order. */
  readonly requests: {
    readonly turn: number;
    readonly toolsOffered: readonly string[];
    readonly answered: 'calls' | 'text' | 'no such turn';
    /** What the loop asked the model to count before this request (not our tools' counting: Copilot's own tokenizer does that). */
    readonly tokenCounting: TokenCounting;
  }[];
  readonly results: ReceivedResult[];
  /** The model gave its closing text: from here the loop has nothing left to run. */
  ended: boolean;
}

export interface TokenCounting {
  readonly calls: number;
  /** The longest text in one call, and its longest run without a space or line break. */
  readonly longestText: number;
  readonly longestRun: number;
  /** Time spent counting, for a person reading the transcript (no test asserts on it). */
  readonly ms: number;
}

/** A confirmation card or a modal dialog the runner saw while the case ran. */
export interface SeenConfirmation {
  readonly where: 'card' | 'dialog';
  readonly title: string;
  readonly message: string;
  readonly buttons: readonly string[];
}

export function loopDir(): string {
  const dir = process.env.AGENT_SANDBOX_AGENT_LOOP_DIR;
  if (!dir)
    throw new Error('AGENT_SANDBOX_AGENT_LOOP_DIR is not set: run this tier with runInCodeServer.mjs --agent-loop');
  return dir;
}

export const caseFile = (id: string) => path.join(loopDir(), `${id}.case.json`);
export const transcriptFile = (id: string) => path.join(loopDir(), `${id}.transcript.json`);
export const seenFile = (id: string) => path.join(loopDir(), `${id}.ui.jsonl`);
/** Holds the id of the case that runs now; the runner notes confirmations only while it exists. */
export const activeFile = () => path.join(loopDir(), 'active');

/** The marker in the chat query that tells the model which script to play. */
export const caseMarker = (id: string) => `[scripted-case:${id}]`;
export const CASE_MARKER = /\[scripted-case:([\w-]+)\]/;

export function callId(caseId: string, turn: number, index: number): string {
  return `${caseId}-t${turn}-c${index}`;
}

/** The turn a callId of this case was made in, or undefined for a call that is not this case's. */
export function turnOfCall(caseId: string, id: string): number | undefined {
  const match = /-t(\d+)-c\d+$/.exec(id);
  return match && id.startsWith(`${caseId}-t`) ? Number(match[1]) : undefined;
}

export function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export function readSeen(id: string): SeenConfirmation[] {
  try {
    return fs
      .readFileSync(seenFile(id), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as SeenConfirmation);
  } catch {
    return [];
  }
}
