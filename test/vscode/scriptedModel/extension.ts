// The scripted model of the agent-loop tier: a language model that Copilot Chat's agent loop talks
// to like any other. For the case named in the chat query (see ../agentLoop/script.ts) it answers
// each request with the next turn of the case's script (tool calls, or the closing text), and writes
// down every tool result the loop sends back, part by part, exactly as a model receives it.
// provideTokenCount answers with a real byte-pair count (o200k_base, the vocabulary Copilot assumes for
// a model an extension contributes). Copilot counts tool results, and answers our tools'
// countTokens, with its own o200k_base tokenizer instead (checked in Copilot Chat 0.67.0: the prompt
// renderer takes its tokenizer from the endpoint's name for it), so that is what our tools meet here.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import * as vscode from 'vscode';
import {
  CASE_MARKER,
  MODEL_ID,
  PROBE_TOOL,
  VENDOR,
  callId,
  caseFile,
  loopDir,
  readJson,
  transcriptFile,
  turnOfCall,
  type CaseScript,
  type ReceivedPart,
  type TokenCounting,
  type Transcript,
} from '../agentLoop/script';
import { registerProvider, type ChatInformation, type RequestMessage, type ResponseOptions } from './providerApi';

const USER = 1;
const ASSISTANT = 2;

const MODEL: ChatInformation = {
  id: MODEL_ID,
  name: 'Scripted',
  family: 'scripted',
  version: '1',
  maxInputTokens: 128_000,
  maxOutputTokens: 8_192,
  tooltip: 'Plays the script of an agent-loop test case',
  capabilities: { toolCalling: true, imageInput: true },
};

const encoder = new Tiktoken(o200k);

export function activate(context: vscode.ExtensionContext): void {
  if (!process.env.AGENT_SANDBOX_AGENT_LOOP_DIR) return;
  context.subscriptions.push(
    registerProvider(vscode, VENDOR, {
      provideLanguageModelChatInformation: () => [MODEL],
      provideLanguageModelChatResponse: async (_model, messages, options, progress) => {
        answer(messages, options, progress);
      },
      provideTokenCount: async (_model, text) => countTokens(typeof text === 'string' ? text : messageText(text)),
    }),
    // The control for what Copilot does with a long part: one text part, as long as asked.
    vscode.lm.registerTool<{ chars: number }>(PROBE_TOOL, {
      invoke: (options) =>
        new vscode.LanguageModelToolResult([
          new vscode.LanguageModelTextPart(`probe headline\n${'y'.repeat(options.input.chars)}`),
        ]),
    }),
  );
}

export function deactivate(): void {}

/** What the loop asked this model to count since the case's last request (a note for the transcript). */
let counted: TokenCounting = { calls: 0, longestText: 0, longestRun: 0, ms: 0 };

function countTokens(text: string): number {
  const started = performance.now();
  const tokens = encoder.encode(text).length;
  counted = {
    calls: counted.calls + 1,
    longestText: Math.max(counted.longestText, text.length),
    longestRun: Math.max(counted.longestRun, longestRun(text)),
    ms: counted.ms + (performance.now() - started),
  };
  return tokens;
}

function longestRun(text: string): number {
  let longest = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    run = code === 0x20 || code === 0x0a ? 0 : run + 1;
    if (run > longest) longest = run;
  }
  return longest;
}

function answer(
  messages: readonly RequestMessage[],
  options: ResponseOptions,
  progress: vscode.Progress<vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart>,
): void {
  const caseId = caseOf(messages);
  const script = caseId ? readJson<CaseScript>(caseFile(caseId)) : undefined;
  if (!caseId || !script) {
    // Copilot's own side requests (a title for the chat, and the like) name no case.
    const last = [...messages].reverse().find((message) => message.role === USER);
    fs.appendFileSync(
      path.join(loopDir(), 'other-requests.jsonl'),
      `${JSON.stringify({ caseId, firstChars: (last ? messageText(last) : '').slice(0, 300) })}\n`,
    );
    progress.report(new vscode.LanguageModelTextPart('Scripted model: no test case in this request.'));
    return;
  }
  const turn = nextTurn(caseId, messages);
  const transcript: Transcript =
    (turn > 0 ? readJson<Transcript>(transcriptFile(caseId)) : undefined) ??
    ({ id: caseId, requests: [], results: [], ended: false } satisfies Transcript);
  const request = transcript.requests.length + 1;
  const tokenCounting = { ...counted, ms: Math.round(counted.ms) };
  counted = { calls: 0, longestText: 0, longestRun: 0, ms: 0 };
  const known = new Set(transcript.results.map((result) => result.callId));
  const names = callNames(messages);
  for (const message of messages) {
    for (const part of message.content) {
      if (!isToolResult(part) || known.has(part.callId)) continue;
      known.add(part.callId);
      transcript.results.push({
        callId: part.callId,
        tool: names.get(part.callId),
        isError: part.isError === true,
        parts: part.content.map(receivedPart),
        request,
      });
    }
  }
  const step = script.turns[turn];
  const toolsOffered = (options.tools ?? []).map((tool) => tool.name);
  if (!step) {
    transcript.requests.push({ turn, toolsOffered, answered: 'no such turn', tokenCounting });
    transcript.ended = true;
    progress.report(new vscode.LanguageModelTextPart(`Scripted model: the script of ${caseId} has no turn ${turn}.`));
  } else if ('calls' in step) {
    transcript.requests.push({ turn, toolsOffered, answered: 'calls', tokenCounting });
    step.calls.forEach((call, index) =>
      progress.report(
        new vscode.LanguageModelToolCallPart(callId(caseId, turn, index), call.name, call.input as object),
      ),
    );
  } else {
    transcript.requests.push({ turn, toolsOffered, answered: 'text', tokenCounting });
    transcript.ended = true;
    progress.report(new vscode.LanguageModelTextPart(step.text));
  }
  writeAtomically(transcriptFile(caseId), JSON.stringify(transcript, null, 2));
}

/** The case the conversation is about: the last marker in a user message. */
function caseOf(messages: readonly RequestMessage[]): string | undefined {
  let found: string | undefined;
  for (const message of messages) {
    if (message.role !== USER) continue;
    const match = CASE_MARKER.exec(messageText(message));
    if (match) found = match[1];
  }
  return found;
}

/** One past the last turn whose calls the conversation holds (0 before any). */
function nextTurn(caseId: string, messages: readonly RequestMessage[]): number {
  let next = 0;
  let assistantTurns = 0;
  for (const message of messages) {
    if (message.role !== ASSISTANT) continue;
    const calls = message.content.filter(isToolCall);
    if (calls.length) assistantTurns++;
    for (const call of calls) {
      const turn = turnOfCall(caseId, call.callId);
      if (turn !== undefined) next = Math.max(next, turn + 1);
    }
  }
  // Should the loop rename call ids, count the answers that made calls instead.
  return Math.max(next, assistantTurns);
}

function callNames(messages: readonly RequestMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages)
    for (const part of message.content) if (isToolCall(part)) names.set(part.callId, part.name);
  return names;
}

// By shape rather than class: the extension host hands results over as its own subclasses.
function isToolCall(part: unknown): part is { callId: string; name: string; input: unknown } {
  const call = part as { callId?: unknown; name?: unknown };
  return typeof call?.callId === 'string' && typeof call.name === 'string' && 'input' in (part as object);
}

function isToolResult(part: unknown): part is { callId: string; content: unknown[]; isError?: boolean } {
  const result = part as { callId?: unknown; content?: unknown };
  return typeof result?.callId === 'string' && Array.isArray(result.content);
}

function receivedPart(part: unknown): ReceivedPart {
  const text = textOf(part);
  if (text !== undefined) return { type: 'text', value: text };
  const data = part as { mimeType?: unknown; data?: unknown };
  if (typeof data.mimeType === 'string' && data.data instanceof Uint8Array) {
    const textual = /^text\/|json/.test(data.mimeType);
    return {
      type: 'data',
      mimeType: data.mimeType,
      bytes: data.data.byteLength,
      ...(textual ? { text: new TextDecoder().decode(data.data) } : {}),
    };
  }
  return {
    type: 'other',
    kind: (part as object | undefined)?.constructor?.name ?? typeof part,
    json: JSON.stringify(part) ?? String(part),
  };
}

function textOf(part: unknown): string | undefined {
  if (part instanceof vscode.LanguageModelTextPart) return part.value;
  // A text part of the extension host's own making: a string value and nothing that marks another kind.
  const shaped = part as { value?: unknown; mimeType?: unknown; callId?: unknown; id?: unknown } | undefined;
  const other = shaped?.mimeType !== undefined || shaped?.callId !== undefined || shaped?.id !== undefined;
  return typeof shaped?.value === 'string' && !other ? shaped.value : undefined;
}

function messageText(message: RequestMessage): string {
  return message.content
    .map((part) => textOf(part) ?? '')
    .filter(Boolean)
    .join('\n');
}

function writeAtomically(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
}
