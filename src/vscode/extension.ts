/**
 * Activation, kept instant: it registers a stand-in for each contribution of package.json
 * (standIns.ts) and returns. The services (compositionRoot.ts, the bundle dist/compositionRoot.js
 * with the engines, schemas and prompt analysis) load on the first use of a feature: a command, a
 * tool, the panel, the participant, the MCP server list, an open `.prompt` file, the API; and at the
 * latest shortly after activation, for what a window does in the background (the sign of life that
 * keeps its sessions across a reload, the status bar item, housekeeping). No engine call either way.
 */
import * as vscode from 'vscode';
import type { AgentSandboxApi } from './compositionRoot';
import { StandIns, type Contributes } from './standIns';

export type { AgentSandboxApi } from './compositionRoot';

type CompositionRoot = typeof import('./compositionRoot');

/** Long enough to stay out of the window's startup, well within the lease's grace period (minutes). */
const BACKGROUND_START_MS = 1000;
const DOTPROMPT = 'dotprompt';

let loaded: { root: CompositionRoot; api: AgentSandboxApi } | undefined;

export function activate(context: vscode.ExtensionContext): AgentSandboxApi {
  let loading = false;
  const background = setTimeout(() => void load(), BACKGROUND_START_MS);
  const load = (): AgentSandboxApi => {
    if (loaded) return loaded.api;
    if (loading) throw new Error('Agent Sandbox: a contribution was used while the extension was loading');
    loading = true;
    try {
      clearTimeout(background);
      // A bundle of its own, beside this one: esbuild.mjs keeps it out of dist/extension.js.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const root = require('./compositionRoot.js') as CompositionRoot;
      loaded = { root, api: root.activate(context, standIns) };
      return loaded.api;
    } finally {
      loading = false;
    }
  };
  const standIns = new StandIns(context.extension.packageJSON.contributes as Contributes, () => void load());
  // The `.prompt` language features (diagnostics, completion, hover) come with the services.
  const soon = () => setTimeout(() => void load(), 0);
  for (const document of vscode.workspace.textDocuments)
    if (document.languageId === DOTPROMPT) {
      soon();
      break;
    }
  const opened = vscode.workspace.onDidOpenTextDocument((document) => {
    if (document.languageId === DOTPROMPT && !loaded) soon();
  });
  context.subscriptions.push(standIns, opened, { dispose: () => clearTimeout(background) });
  return {
    get log() {
      return load().log;
    },
    get service() {
      return load().service;
    },
    get engine() {
      return load().engine;
    },
    get housekeeping() {
      return load().housekeeping;
    },
    get panel() {
      return load().panel;
    },
    get activity() {
      return load().activity;
    },
    get copyReview() {
      return load().copyReview;
    },
    get gitGuard() {
      return load().gitGuard;
    },
    statusText: () => load().statusText(),
    mcpServerDefinitions: () => load().mcpServerDefinitions(),
  };
}

/** Sessions stay with the engine; the warm pool's containers are removed before the window goes. */
export async function deactivate(): Promise<void> {
  await loaded?.root.deactivate();
}
