/**
 * The `vscode` module as the composition root's bundle sees it (esbuild.mjs points its imports of
 * `vscode` here): VS Code's own, except that registering a contribution that activation already
 * registered a stand-in for (standIns.ts) fills that stand-in, since VS Code takes one registration
 * per id. Everything else passes straight through.
 */
import * as vscode from 'vscode';
import type { StandInRegistry } from './standIns';

let standIns: StandInRegistry | undefined;

/** Called by the composition root before it registers anything. */
export function fillStandIns(registry: StandInRegistry | undefined): void {
  standIns = registry;
}

/** The namespace with some functions replaced; its other members (getters included) are read from it. */
function overriding<T extends object>(namespace: T, overrides: Partial<T>): T {
  const own: PropertyDescriptorMap = {};
  for (const [key, value] of Object.entries(overrides)) own[key] = { value, enumerable: true };
  // Defined, not assigned: an assignment would reach the namespace itself through the prototype.
  return Object.create(namespace, own) as T;
}

const commands = overriding(vscode.commands, {
  registerCommand: (id: string, handler: (...args: unknown[]) => unknown, thisArg?: unknown) =>
    standIns?.command(id, thisArg === undefined ? handler : handler.bind(thisArg)) ??
    vscode.commands.registerCommand(id, handler, thisArg),
});

const lm = overriding(vscode.lm, {
  registerTool: <T>(name: string, tool: vscode.LanguageModelTool<T>) =>
    standIns?.tool(name, tool as vscode.LanguageModelTool<unknown>) ?? vscode.lm.registerTool(name, tool),
  registerMcpServerDefinitionProvider: (
    id: string,
    provider: vscode.McpServerDefinitionProvider<vscode.McpServerDefinition>,
  ) => standIns?.mcpServerProvider(id, provider) ?? vscode.lm.registerMcpServerDefinitionProvider(id, provider),
});

const windowNamespace = overriding(vscode.window, {
  registerWebviewViewProvider: (
    viewId: string,
    provider: vscode.WebviewViewProvider,
    options?: Parameters<typeof vscode.window.registerWebviewViewProvider>[2],
  ) =>
    standIns?.webviewView(viewId, provider, options) ??
    vscode.window.registerWebviewViewProvider(viewId, provider, options),
});

const chat = overriding(vscode.chat, {
  createChatParticipant: (id: string, handler: vscode.ChatRequestHandler) =>
    standIns?.chatParticipant(id, handler) ?? vscode.chat.createChatParticipant(id, handler),
});

const replaced: Record<string, unknown> = { commands, lm, window: windowNamespace, chat };

/** What `import * as vscode from 'vscode'` gives the composition root's bundle. */
export const hostVscode = {} as typeof vscode;
replaced.default = hostVscode;
for (const key of Object.getOwnPropertyNames(vscode))
  Object.defineProperty(hostVscode, key, {
    enumerable: true,
    get: () => (key in replaced ? replaced[key] : (vscode as Record<string, unknown>)[key]),
  });
