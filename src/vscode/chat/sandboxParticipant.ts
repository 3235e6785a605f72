/**
 * The @sandbox chat participant. `/run path/to/agent.prompt {input}` runs a `.prompt` agent: the file
 * rendered with Dotprompt (refused, with the editor's diagnostics, when it has errors), its model when
 * one of that name is available (else the chat's), its tools, a session built from its `sandbox:`
 * block, up to `max_steps` turns, and its answer checked against the output schema. Without a
 * command, a free-form request runs with every sandbox tool.
 */
import { isAbsolute } from 'node:path';
import * as vscode from 'vscode';
import {
  FREE_FORM_BRIEFING,
  SANDBOX_TOOL_NAMES,
  agentSessionAsk,
  agentTools,
  checkOutput,
  sandboxBriefing,
} from '../../core/prompt/agentRun';
import type { RenderedMessage } from '../../core/prompt/render';
import { partialsBeside } from '../../core/prompt/renderPartials';
import { errorMessage } from '../../core/errors';
import type { SandboxService } from '../../core/sessions/sandboxService';
import { sandboxIdOf } from '../../core/sessions/sessions';
import { runAgentLoop, type LoopOutcome } from './agentLoop';

export const PARTICIPANT_ID = 'agentSandbox.sandbox';

export interface ParticipantServices {
  service: SandboxService;
  log: vscode.LogOutputChannel;
  track<T>(work: Promise<T>): Promise<T>;
  engine: { reportSuccess(): void; reportFailure(error: unknown): void };
  workspaceFolder(): string | undefined;
}

export interface AgentResultMetadata {
  agent?: string;
  steps: number;
  toolCalls: number;
  ended: LoopOutcome['ended'] | 'refused';
  outputProblems?: string[];
}

/** `path [input JSON]`: the path may be quoted; the rest of the line is the input. */
export function parseRunArguments(text: string): { path?: string; input?: string } {
  const trimmed = text.trim();
  if (!trimmed) return {};
  const quoted = /^(["'])(.+?)\1\s*([\s\S]*)$/.exec(trimmed);
  if (quoted) return { path: quoted[2], input: quoted[3]!.trim() || undefined };
  const path = trimmed.split(/\s+/, 1)[0]!;
  const input = trimmed.slice(path.length).trim();
  return { path, input: input || undefined };
}

/** The model a file names, when one of that name is available: by id, by family, or vendor/id. */
async function modelNamed(name: string | undefined): Promise<vscode.LanguageModelChat | undefined> {
  if (!name) return undefined;
  const last = name.split('/').pop()!;
  const models = await vscode.lm.selectChatModels();
  return models.find(
    (model) =>
      model.id === name ||
      `${model.vendor}/${model.id}` === name ||
      model.id === last ||
      model.family === last ||
      model.family === name,
  );
}

function chatMessages(rendered: readonly RenderedMessage[], notes: string[]) {
  const messages: vscode.LanguageModelChatMessage[] = [];
  for (const message of rendered) {
    const parts: (vscode.LanguageModelTextPart | vscode.LanguageModelDataPart)[] = [];
    for (const part of message.content) {
      if ('text' in part) parts.push(new vscode.LanguageModelTextPart(part.text));
      else {
        const data = /^data:([^;,]+);base64,(.*)$/s.exec(part.media.url);
        if (data) parts.push(vscode.LanguageModelDataPart.image(Buffer.from(data[2]!, 'base64'), data[1]!));
        else {
          notes.push(
            vscode.l10n.t(
              'A picture of the prompt ({0}) was left out: it is not inline data.',
              part.media.url.slice(0, 60),
            ),
          );
        }
      }
    }
    if (!parts.length) continue;
    // The chat API has no system role: the system message goes first, as the user's.
    messages.push(
      message.role === 'model'
        ? vscode.LanguageModelChatMessage.Assistant(parts.filter((p) => p instanceof vscode.LanguageModelTextPart))
        : vscode.LanguageModelChatMessage.User(parts),
    );
  }
  return messages;
}

/** Text shown as it is in Markdown: its `*`, backticks, brackets and the like escaped. */
function plain(text: string): string {
  return text.replace(/[\\`*_{}[\]()<>#+!|~]/g, (char) => `\\${char}`);
}

function fileUri(path: string, folder: string | undefined): vscode.Uri {
  if (isAbsolute(path)) return vscode.Uri.file(path);
  if (!folder) throw new Error(vscode.l10n.t('Open a folder first: {0} is relative to it.', path));
  return vscode.Uri.joinPath(vscode.Uri.file(folder), ...path.split(/[\\/]/));
}

async function runAgentFile(
  services: ParticipantServices,
  request: vscode.ChatRequest,
  stream: vscode.ChatResponseStream,
  token: vscode.CancellationToken,
): Promise<vscode.ChatResult> {
  const refused = (message: string): vscode.ChatResult => {
    stream.markdown(message);
    return {
      errorDetails: { message: message.split('\n')[0]! },
      metadata: { steps: 0, toolCalls: 0, ended: 'refused' },
    };
  };
  const referenced = request.references
    .map((ref) => ref.value)
    .find((value): value is vscode.Uri => value instanceof vscode.Uri && value.path.endsWith('.prompt'));
  const args = parseRunArguments(request.prompt);
  if (!args.path && !referenced)
    return refused(vscode.l10n.t('Name the agent file: `@sandbox /run path/to/agent.prompt {"input": "value"}`.'));
  if (!vscode.workspace.isTrusted)
    return refused(
      vscode.l10n.t(
        'This workspace is not trusted: its .prompt files cannot choose what a sandbox runs. Trust the workspace first.',
      ),
    );
  const uri = referenced ?? fileUri(args.path!, services.workspaceFolder());
  const inputText = referenced && !args.input && args.path?.startsWith('{') ? request.prompt.trim() : args.input;
  let input: Record<string, unknown> | undefined;
  if (inputText) {
    try {
      const parsed = JSON.parse(inputText) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      input = parsed as Record<string, unknown>;
    } catch (error) {
      return refused(
        vscode.l10n.t(
          'The input after the file name must be a JSON object, like {"topic": "tides"} ({0}).',
          errorMessage(error),
        ),
      );
    }
  }
  let document: vscode.TextDocument;
  try {
    document = await vscode.workspace.openTextDocument(uri);
  } catch {
    return refused(vscode.l10n.t('There is no file {0}.', vscode.workspace.asRelativePath(uri)));
  }
  const shown = vscode.workspace.asRelativePath(uri);
  // Dotprompt (with Handlebars) loads on the first run, not when VS Code starts.
  const { renderPrompt } = await import('../../core/prompt/render');
  const outcome = await renderPrompt({
    text: document.getText(),
    file: shown,
    input,
    readPartial: partialsBeside(uri.fsPath),
  });
  if (!outcome.ok) {
    const lines = outcome.problems.map((problem) =>
      problem.where === 'file'
        ? `- ${vscode.l10n.t('line {0}, column {1}', problem.line, problem.column)}: ${plain(problem.message)}`
        : `- ${vscode.l10n.t('input')}: ${plain(problem.message)}`,
    );
    const result = refused(`${vscode.l10n.t('{0} cannot run until these are fixed:', shown)}\n\n${lines.join('\n')}\n`);
    const first = outcome.problems.find((problem) => problem.where === 'file');
    if (first && first.where === 'file')
      stream.anchor(new vscode.Location(uri, new vscode.Position(first.line - 1, first.column - 1)), shown);
    return result;
  }
  const prompt = outcome.prompt;
  const notes = [...prompt.notes];
  const named = await modelNamed(prompt.model);
  const model = named ?? request.model;
  if (prompt.model && !named)
    notes.push(
      vscode.l10n.t(
        'The file names the model {0}, which is not available here: it runs with {1}.',
        prompt.model,
        model.name,
      ),
    );
  const { tools, unknown } = agentTools(prompt.tools);
  if (unknown.length) notes.push(vscode.l10n.t('Not sandbox tools, so not offered: {0}.', unknown.join(', ')));
  stream.progress(vscode.l10n.t('Opening the sandbox of {0}', prompt.name));
  const opened = await services.track(services.service.openSession(agentSessionAsk(prompt)));
  services.engine.reportSuccess();
  const sandboxId = sandboxIdOf(opened.sandbox.info);
  const info = opened.sandbox.info;
  stream.markdown(
    `${vscode.l10n.t('Running **{0}** with {1}, in sandbox `{2}` ({3}, workspace {4}, network {5}), at most {6} steps.', prompt.name, model.name, sandboxId, info.runtime, info.workspaceAccess, info.network ? 'on' : 'off', prompt.maxSteps)}\n\n`,
  );
  const messages = [
    vscode.LanguageModelChatMessage.User(sandboxBriefing(sandboxId, tools)),
    ...chatMessages(prompt.messages, notes),
  ];
  for (const note of [...notes, ...opened.notices]) stream.markdown(`*${note}*\n\n`);
  const loop = await runAgentLoop({
    model,
    messages,
    tools,
    maxSteps: prompt.maxSteps,
    sandboxId,
    toolInvocationToken: request.toolInvocationToken,
    stream,
    token,
  });
  const metadata: AgentResultMetadata = {
    agent: prompt.name,
    steps: loop.steps,
    toolCalls: loop.toolCalls,
    ended: loop.ended,
  };
  ending(stream, loop);
  if (loop.ended === 'answer' && prompt.output) {
    const check = checkOutput(prompt.output, loop.text);
    metadata.outputProblems = check.problems;
    stream.markdown(
      check.problems.length
        ? `\n\n${vscode.l10n.t('The answer does not match the output schema of {0}:', shown)}\n\n${check.problems.map((problem) => `- ${problem}`).join('\n')}\n`
        : `\n\n${vscode.l10n.t('The answer matches the output schema of {0}.', shown)}\n`,
    );
  }
  services.log.info(
    `Agent ${prompt.name} (${shown}): ${loop.ended} after ${loop.steps} step(s), ${loop.toolCalls} tool call(s).`,
  );
  return { metadata };
}

function ending(stream: vscode.ChatResponseStream, loop: LoopOutcome): void {
  if (loop.ended === 'step-limit')
    stream.markdown(
      `\n\n${vscode.l10n.t('Stopped after {0} steps, the limit (max_steps). Raise max_steps in the file to let it go on.', loop.steps)}\n`,
    );
  else if (loop.ended === 'cancelled') stream.markdown(`\n\n${vscode.l10n.t('Cancelled.')}\n`);
}

async function freeForm(
  services: ParticipantServices,
  request: vscode.ChatRequest,
  context: vscode.ChatContext,
  stream: vscode.ChatResponseStream,
  token: vscode.CancellationToken,
): Promise<vscode.ChatResult> {
  const messages = [vscode.LanguageModelChatMessage.User(FREE_FORM_BRIEFING)];
  for (const turn of context.history) {
    if (turn instanceof vscode.ChatRequestTurn) messages.push(vscode.LanguageModelChatMessage.User(turn.prompt));
    else if (turn instanceof vscode.ChatResponseTurn) {
      const said = turn.response
        .map((part) => (part instanceof vscode.ChatResponseMarkdownPart ? part.value.value : ''))
        .join('');
      if (said) messages.push(vscode.LanguageModelChatMessage.Assistant(said));
    }
  }
  const attached = request.references
    .map((ref) => (ref.value instanceof vscode.Uri ? vscode.workspace.asRelativePath(ref.value) : undefined))
    .filter((path): path is string => Boolean(path));
  messages.push(
    vscode.LanguageModelChatMessage.User(
      attached.length
        ? `${request.prompt}\n\n(Files the user attached, in the workspace: ${attached.join(', ')})`
        : request.prompt,
    ),
  );
  const loop = await runAgentLoop({
    model: request.model,
    messages,
    tools: SANDBOX_TOOL_NAMES,
    maxSteps: 8,
    toolInvocationToken: request.toolInvocationToken,
    stream,
    token,
  });
  ending(stream, loop);
  return {
    metadata: { steps: loop.steps, toolCalls: loop.toolCalls, ended: loop.ended } satisfies AgentResultMetadata,
  };
}

export function registerSandboxParticipant(services: ParticipantServices): vscode.Disposable[] {
  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, async (request, context, stream, token) => {
    try {
      return request.command === 'run'
        ? await runAgentFile(services, request, stream, token)
        : await freeForm(services, request, context, stream, token);
    } catch (error) {
      services.engine.reportFailure(error);
      services.log.error(`@sandbox: ${errorMessage(error)}`);
      const [message, ...hint] = errorMessage(error).split('\n');
      stream.markdown(`${message}${hint.length ? `\n\n${hint.join(' ')}` : ''}\n`);
      return { errorDetails: { message: message! }, metadata: { steps: 0, toolCalls: 0, ended: 'refused' } };
    }
  });
  participant.iconPath = new vscode.ThemeIcon('vm');
  return [participant];
}
