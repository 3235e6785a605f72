/**
 * Stand-ins for what the manifest contributes (commands, language-model tools, webview views, chat
 * participants, MCP server providers), registered at activation so that activation loads none of the
 * extension's services. A stand-in's first use loads them (`load`); their own registrations then
 * fill the stand-ins (hostApi.ts) instead of registering a second time. Keep this module light: it
 * is part of dist/extension.js, which imports nothing but `vscode`.
 */
import * as vscode from 'vscode';

type Handler = (...args: unknown[]) => unknown;

/** What the composition root's registrations hand over; undefined when activation registered no stand-in. */
export interface StandInRegistry {
  command(id: string, handler: Handler): vscode.Disposable | undefined;
  tool(name: string, tool: vscode.LanguageModelTool<unknown>): vscode.Disposable | undefined;
  webviewView(viewId: string, provider: vscode.WebviewViewProvider, options: unknown): vscode.Disposable | undefined;
  chatParticipant(id: string, handler: vscode.ChatRequestHandler): vscode.ChatParticipant | undefined;
  mcpServerProvider(
    id: string,
    provider: vscode.McpServerDefinitionProvider<vscode.McpServerDefinition>,
  ): vscode.Disposable | undefined;
}

/** The parts of package.json's `contributes` that get a stand-in. */
export interface Contributes {
  commands?: { command: string }[];
  languageModelTools?: { name: string }[];
  views?: Record<string, { id: string; type?: string }[]>;
  chatParticipants?: { id: string }[];
  mcpServerDefinitionProviders?: { id: string }[];
}

type McpProvider = vscode.McpServerDefinitionProvider<vscode.McpServerDefinition>;

export class StandIns implements StandInRegistry, vscode.Disposable {
  private readonly commands = new Map<string, Handler | undefined>();
  private readonly tools = new Map<string, vscode.LanguageModelTool<unknown> | undefined>();
  private readonly views = new Map<string, vscode.WebviewViewProvider | undefined>();
  private readonly participants = new Map<
    string,
    { participant: vscode.ChatParticipant; handler?: vscode.ChatRequestHandler }
  >();
  private readonly mcpProviders = new Map<
    string,
    { changed: vscode.EventEmitter<void>; provider?: McpProvider; forwarding?: vscode.Disposable }
  >();
  private readonly registrations: vscode.Disposable[] = [];

  /** `load` builds the services (synchronously), whose registrations fill these stand-ins. */
  constructor(
    contributes: Contributes,
    private readonly load: () => void,
  ) {
    for (const { command } of contributes.commands ?? []) {
      this.commands.set(command, undefined);
      this.registrations.push(
        vscode.commands.registerCommand(command, (...args: unknown[]) => this.filled(this.commands, command)(...args)),
      );
    }
    for (const { name } of contributes.languageModelTools ?? []) {
      this.tools.set(name, undefined);
      this.registrations.push(
        vscode.lm.registerTool<unknown>(name, {
          prepareInvocation: (options, token) => this.filled(this.tools, name).prepareInvocation?.(options, token),
          invoke: (options, token) => this.filled(this.tools, name).invoke(options, token),
        }),
      );
    }
    for (const view of Object.values(contributes.views ?? {}).flat()) {
      if (view.type !== 'webview') continue;
      this.views.set(view.id, undefined);
      this.registrations.push(
        vscode.window.registerWebviewViewProvider(view.id, {
          resolveWebviewView: (webviewView, context, token) =>
            this.filled(this.views, view.id).resolveWebviewView(webviewView, context, token),
        }),
      );
    }
    for (const { id } of contributes.chatParticipants ?? []) {
      const participant = vscode.chat.createChatParticipant(id, (request, context, stream, token) => {
        this.load();
        const handler = this.participants.get(id)?.handler;
        if (!handler) throw new Error(notFilled('chat participant', id));
        return handler(request, context, stream, token);
      });
      this.participants.set(id, { participant });
      this.registrations.push(participant);
    }
    for (const { id } of contributes.mcpServerDefinitionProviders ?? []) {
      const changed = new vscode.EventEmitter<void>();
      this.mcpProviders.set(id, { changed });
      this.registrations.push(
        changed,
        vscode.lm.registerMcpServerDefinitionProvider(id, {
          onDidChangeMcpServerDefinitions: changed.event,
          provideMcpServerDefinitions: (token) => {
            this.load();
            const provider = this.mcpProviders.get(id)?.provider;
            if (!provider) throw new Error(notFilled('MCP server provider', id));
            return provider.provideMcpServerDefinitions(token);
          },
        }),
      );
    }
  }

  command(id: string, handler: Handler): vscode.Disposable | undefined {
    return this.fill(this.commands, id, handler);
  }

  tool(name: string, tool: vscode.LanguageModelTool<unknown>): vscode.Disposable | undefined {
    return this.fill(this.tools, name, tool);
  }

  webviewView(viewId: string, provider: vscode.WebviewViewProvider, options: unknown): vscode.Disposable | undefined {
    if (!this.views.has(viewId)) return undefined;
    // The stand-in was registered without options; options given later could not reach VS Code.
    if (options !== undefined) throw new Error(`${viewId}: register its stand-in (standIns.ts) with the same options`);
    return this.fill(this.views, viewId, provider);
  }

  chatParticipant(id: string, handler: vscode.ChatRequestHandler): vscode.ChatParticipant | undefined {
    const entry = this.participants.get(id);
    if (!entry) return undefined;
    entry.handler = handler;
    // Properties the caller sets (iconPath, followupProvider) land on the participant VS Code knows.
    return entry.participant;
  }

  mcpServerProvider(id: string, provider: McpProvider): vscode.Disposable | undefined {
    const entry = this.mcpProviders.get(id);
    if (!entry) return undefined;
    if (provider.resolveMcpServerDefinition)
      throw new Error(`${id}: the stand-in (standIns.ts) does not pass resolveMcpServerDefinition on`);
    entry.forwarding?.dispose();
    entry.provider = provider;
    entry.forwarding = provider.onDidChangeMcpServerDefinitions?.(() => entry.changed.fire());
    return new vscode.Disposable(() => {
      entry.forwarding?.dispose();
      entry.provider = undefined;
    });
  }

  dispose(): void {
    for (const registration of this.registrations) registration.dispose();
  }

  private fill<T>(map: Map<string, T | undefined>, key: string, value: T): vscode.Disposable | undefined {
    if (!map.has(key)) return undefined;
    map.set(key, value);
    return new vscode.Disposable(() => {
      if (map.get(key) === value) map.set(key, undefined);
    });
  }

  /** The implementation behind a stand-in, building the services on first use. */
  private filled<T>(map: Map<string, T | undefined>, key: string): T {
    this.load();
    const value = map.get(key);
    if (value === undefined) throw new Error(notFilled('contribution', key));
    return value;
  }
}

function notFilled(what: string, id: string): string {
  return `Agent Sandbox: the ${what} ${id} is declared in package.json but the extension did not register it.`;
}
