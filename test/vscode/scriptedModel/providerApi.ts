// The stable language-model provider API (VS Code 1.104 and later) that @types/vscode 1.100, which
// the extension under test builds against, does not declare yet. Only what the scripted model uses.
import type * as vscode from 'vscode';

export interface ChatInformation {
  readonly id: string;
  readonly name: string;
  readonly family: string;
  readonly version: string;
  readonly maxInputTokens: number;
  readonly maxOutputTokens: number;
  readonly tooltip?: string;
  readonly capabilities: { readonly toolCalling?: boolean | number; readonly imageInput?: boolean };
}

/** A message as a provider receives it: role 1 user, 2 assistant, 3 system. */
export interface RequestMessage {
  readonly role: number;
  readonly content: readonly unknown[];
  readonly name: string | undefined;
}

export interface ResponseOptions {
  readonly tools?: readonly { readonly name: string }[];
}

export interface ChatProvider {
  provideLanguageModelChatInformation(
    options: { readonly silent: boolean },
    token: vscode.CancellationToken,
  ): ChatInformation[] | Thenable<ChatInformation[]>;
  provideLanguageModelChatResponse(
    model: ChatInformation,
    messages: readonly RequestMessage[],
    options: ResponseOptions,
    progress: vscode.Progress<vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart>,
    token: vscode.CancellationToken,
  ): Thenable<void>;
  provideTokenCount(
    model: ChatInformation,
    text: string | RequestMessage,
    token: vscode.CancellationToken,
  ): Thenable<number>;
}

export function registerProvider(api: typeof vscode, vendor: string, provider: ChatProvider): vscode.Disposable {
  const lm = api.lm as unknown as {
    registerLanguageModelChatProvider?: (vendor: string, provider: ChatProvider) => vscode.Disposable;
  };
  if (!lm.registerLanguageModelChatProvider)
    throw new Error(
      `vscode.lm.registerLanguageModelChatProvider is missing: VS Code ${api.version} is older than 1.104`,
    );
  return lm.registerLanguageModelChatProvider(vendor, provider);
}
