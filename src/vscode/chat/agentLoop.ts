/**
 * The tool-calling loop of @sandbox: the model answers, each tool call it makes runs through
 * vscode.lm.invokeTool with the chat's invocation token (so VS Code shows the call and asks where
 * our tools' rules say to), and the results go back, until the model stops calling tools or the step
 * limit is reached. Every step shows in the chat: the model's text, each call with its input, the
 * result's headline and any image. Cancelling the request cancels the running call and ends the loop.
 */
import * as vscode from 'vscode';
import { headline, withSession } from '../../core/prompt/agentRun';
import { summarizeInput } from '../../core/sessions/activityLog';
import { errorMessage } from '../../core/errors';

export interface LoopRequest {
  model: vscode.LanguageModelChat;
  messages: vscode.LanguageModelChatMessage[];
  /** The tools the model may call, by name. */
  tools: readonly string[];
  maxSteps: number;
  /** The agent's session, filled into session tools' calls that name none. */
  sandboxId?: string;
  toolInvocationToken: vscode.ChatParticipantToolToken;
  stream: vscode.ChatResponseStream;
  token: vscode.CancellationToken;
}

export interface LoopOutcome {
  /** The model's text of its last answer. */
  text: string;
  /** Model turns taken. */
  steps: number;
  toolCalls: number;
  ended: 'answer' | 'step-limit' | 'cancelled';
}

/** Inline code in Markdown, whatever backticks the text holds. */
function code(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${longest ? ' ' : ''}${text}${longest ? ' ' : ''}${fence}`;
}

function resultText(result: vscode.LanguageModelToolResult): string {
  return result.content
    .map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : ''))
    .join('')
    .trim();
}

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Shows each image of a result in the chat, inline as data: the chat loads no image from a file of this machine. */
function showImages(result: vscode.LanguageModelToolResult, stream: vscode.ChatResponseStream): number {
  let shown = 0;
  for (const part of result.content) {
    if (!(part instanceof vscode.LanguageModelDataPart) || !IMAGE_TYPES.has(part.mimeType)) continue;
    const data = `data:${part.mimeType};base64,${Buffer.from(part.data).toString('base64')}`;
    stream.markdown(new vscode.MarkdownString(`\n\n![${vscode.l10n.t('Image from the sandbox')}](${data})\n\n`));
    shown++;
  }
  return shown;
}

export async function runAgentLoop(request: LoopRequest): Promise<LoopOutcome> {
  const { model, messages, stream, token } = request;
  const allowed = new Set(request.tools);
  const tools = vscode.lm.tools.filter((tool) => allowed.has(tool.name));
  let toolCalls = 0;
  let text = '';
  for (let step = 1; step <= request.maxSteps; step++) {
    if (token.isCancellationRequested) return { text, steps: step - 1, toolCalls, ended: 'cancelled' };
    const calls: vscode.LanguageModelToolCallPart[] = [];
    text = '';
    try {
      const response = await model.sendRequest(
        messages,
        {
          tools,
          toolMode: vscode.LanguageModelChatToolMode.Auto,
          justification: vscode.l10n.t('Runs an agent in Agent Sandbox'),
        },
        token,
      );
      for await (const part of response.stream) {
        if (part instanceof vscode.LanguageModelTextPart) {
          text += part.value;
          stream.markdown(part.value);
        } else if (part instanceof vscode.LanguageModelToolCallPart) calls.push(part);
      }
    } catch (error) {
      if (token.isCancellationRequested) return { text, steps: step, toolCalls, ended: 'cancelled' };
      throw error;
    }
    if (calls.length === 0) return { text, steps: step, toolCalls, ended: 'answer' };
    messages.push(
      vscode.LanguageModelChatMessage.Assistant([...(text ? [new vscode.LanguageModelTextPart(text)] : []), ...calls]),
    );
    const results: vscode.LanguageModelToolResultPart[] = [];
    for (const call of calls) {
      if (token.isCancellationRequested) return { text, steps: step, toolCalls, ended: 'cancelled' };
      const input = withSession(call.name, call.input, request.sandboxId) as object;
      const summary = summarizeInput(call.name, input as Record<string, unknown>);
      stream.markdown(`\n\n**${call.name}** ${summary ? code(summary) : ''}\n\n`);
      toolCalls++;
      let result: vscode.LanguageModelToolResult;
      if (!allowed.has(call.name)) {
        result = new vscode.LanguageModelToolResult([
          new vscode.LanguageModelTextPart(
            `${call.name} is not one of this agent's tools (${request.tools.join(', ')}); call one of those.`,
          ),
        ]);
      } else {
        try {
          result = await vscode.lm.invokeTool(
            call.name,
            { input, toolInvocationToken: request.toolInvocationToken },
            token,
          );
        } catch (error) {
          if (token.isCancellationRequested) return { text, steps: step, toolCalls, ended: 'cancelled' };
          // Bad input is thrown by the tool: the model reads why and may call again.
          result = new vscode.LanguageModelToolResult([
            new vscode.LanguageModelTextPart(`Error: ${errorMessage(error)}`),
          ]);
        }
      }
      const shown = headline(resultText(result));
      if (shown) stream.markdown(`> ${shown.replace(/[\\`*_[\]<>]/g, (char) => `\\${char}`)}\n\n`);
      showImages(result, stream);
      results.push(new vscode.LanguageModelToolResultPart(call.callId, result.content));
    }
    messages.push(vscode.LanguageModelChatMessage.User(results));
  }
  return { text, steps: request.maxSteps, toolCalls, ended: 'step-limit' };
}
