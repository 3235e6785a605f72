// Loads the built extension with a stand-in `vscode` module and times require() and activate().
// Run as a child process so that every sample starts with an empty module cache.
// Usage: node activationChild.cjs <path to dist/extension.js>   (prints one JSON line)
'use strict';
const Module = require('node:module');
const path = require('node:path');
const os = require('node:os');

/** Any property, call or construction yields another stand-in; only what activate() reads is real. */
function standIn(name) {
  const target = function () {};
  const assigned = new Map();
  return new Proxy(target, {
    set(_, key, value) {
      assigned.set(key, value);
      return true;
    },
    get(_, key) {
      if (assigned.has(key)) return assigned.get(key);
      if (key === 'then') return undefined; // never a thenable
      if (key === Symbol.toPrimitive) return () => name;
      if (key === Symbol.iterator) return function* () {};
      if (key === 'toString' || key === 'toJSON') return () => name;
      return standIn(`${name}.${String(key)}`);
    },
    apply() {
      return standIn(`${name}()`);
    },
    construct() {
      return standIn(`new ${name}`);
    },
  });
}

class StandInDisposable {
  constructor(fn) {
    this.fn = fn;
  }
  static from(...items) {
    return new StandInDisposable(() => items.forEach((item) => item?.dispose?.()));
  }
  dispose() {
    this.fn?.();
  }
}
class EventEmitter {
  constructor() {
    this.listeners = new Set();
    this.event = (listener) => {
      this.listeners.add(listener);
      return new StandInDisposable(() => this.listeners.delete(listener));
    };
  }
  fire(value) {
    for (const listener of [...this.listeners]) listener(value);
  }
  dispose() {
    this.listeners.clear();
  }
}
const uri = (fsPath) => ({
  fsPath,
  path: fsPath,
  scheme: 'file',
  toString: () => `file://${fsPath}`,
  with: () => uri(fsPath),
});
const configuration = {
  get: () => undefined,
  has: () => false,
  inspect: () => undefined,
  update: async () => undefined,
};
const overrides = {
  Disposable: StandInDisposable,
  EventEmitter,
  Uri: {
    file: uri,
    joinPath: (base, ...parts) => uri(path.join(base.fsPath, ...parts)),
    parse: (text) => uri(text.replace(/^file:\/\//, '')),
  },
  l10n: { t: (message, ...args) => String(message).replace(/\{(\d+)\}/g, (_, index) => String(args[Number(index)])) },
  version: '1.100.0',
  env: standIn('vscode.env'),
  workspace: new Proxy(
    { getConfiguration: () => configuration, workspaceFolders: undefined, isTrusted: true },
    {
      get: (target, key) => (key in target ? target[key] : standIn(`vscode.workspace.${String(key)}`)),
    },
  ),
};
// esbuild's interop copies the module's own property names, so every namespace and class must be one.
const NAMES = [
  'window',
  'commands',
  'languages',
  'lm',
  'chat',
  'extensions',
  'tasks',
  'debug',
  'authentication',
  'tests',
  'notebooks',
  'scm',
  'comments',
  'Range',
  'Position',
  'Selection',
  'Location',
  'Diagnostic',
  'DiagnosticSeverity',
  'DiagnosticTag',
  'CompletionItem',
  'CompletionItemKind',
  'CompletionList',
  'CompletionTriggerKind',
  'MarkdownString',
  'SnippetString',
  'Hover',
  'CodeAction',
  'CodeActionKind',
  'CodeLens',
  'WorkspaceEdit',
  'TextEdit',
  'ThemeColor',
  'ThemeIcon',
  'StatusBarAlignment',
  'ProgressLocation',
  'ConfigurationTarget',
  'LanguageModelToolResult',
  'LanguageModelTextPart',
  'LanguageModelPromptTsxPart',
  'TreeItem',
  'TreeItemCollapsibleState',
  'ViewColumn',
  'ExtensionMode',
  'FileType',
  'RelativePattern',
  'CancellationTokenSource',
  'CancellationError',
  'TerminalLocation',
  'FoldingRange',
  'DocumentLink',
  'SemanticTokensLegend',
  'SemanticTokensBuilder',
  'QuickPickItemKind',
  'UIKind',
  'LogLevel',
  'EndOfLine',
  'TextEditorRevealType',
  'OverviewRulerLane',
];
for (const name of NAMES) if (!(name in overrides)) overrides[name] = standIn(`vscode.${name}`);
const vscode = overrides;

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'vscode' ? 'vscode' : resolve.call(this, request, ...rest);
};
require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: vscode };

const file = path.resolve(process.argv[2] ?? 'dist/extension.js');
const storage = path.join(os.tmpdir(), `agent-sandbox-bench-${process.pid}`);
const context = {
  subscriptions: [],
  extensionUri: uri(path.dirname(path.dirname(file))),
  extensionPath: path.dirname(path.dirname(file)),
  globalStorageUri: uri(storage),
  storageUri: uri(storage),
  logUri: uri(storage),
  extension: {
    packageJSON: require(path.join(path.dirname(path.dirname(file)), 'package.json')),
    id: 'agent-sandbox.agent-sandbox',
  },
  globalState: { get: () => undefined, update: async () => undefined, keys: () => [] },
  workspaceState: { get: () => undefined, update: async () => undefined, keys: () => [] },
  secrets: {
    get: async () => undefined,
    store: async () => undefined,
    delete: async () => undefined,
    onDidChange: () => new StandInDisposable(),
  },
  environmentVariableCollection: standIn('environmentVariableCollection'),
  extensionMode: 3,
};

const loadedBefore = new Set(Object.keys(require.cache));
const t0 = performance.now();
const extension = require(file);
const t1 = performance.now();
const api = extension.activate(context);
const t2 = performance.now();
// Activation makes no engine call: no socket may be open besides stdio.
const sockets = process
  ._getActiveHandles()
  .filter((handle) => handle?.constructor?.name === 'Socket' && (handle._handle?.fd ?? -1) > 2).length;
// The first use of a feature then loads the services (dist/compositionRoot.js); reading the API's log does.
const t3 = performance.now();
void api?.log;
const firstUseMs = performance.now() - t3;
for (const item of context.subscriptions) {
  try {
    item?.dispose?.();
  } catch {
    /* a stand-in may not dispose */
  }
}
process.stdout.write(
  `${JSON.stringify({ requireMs: t1 - t0, activateMs: t2 - t1, firstUseMs, modules: Object.keys(require.cache).filter((key) => !loadedBefore.has(key)).length, sockets })}\n`,
);
process.exit(0);
