/**
 * The composition root: builds the services and registers contributions. It is a bundle of its own
 * (dist/compositionRoot.js), which extension.ts loads on the first use of a feature; its registrations
 * fill the stand-ins activation registered (hostApi.ts). It makes no engine call: the engine is
 * reached on first use.
 */
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { folderKeeperLauncher } from '../core/sessions/folderKeeper';
import * as vscode from 'vscode';
import { FileStore } from '../core/files/fileStore';
import { WorkspaceLeases } from '../core/sessions/leases';
import { SandboxService } from '../core/sessions/sandboxService';
import { Housekeeping } from './housekeeping';
import { PanelImages } from './panel/panelImages';
import { SandboxPanel } from './panel/panelProvider';
import { ActivityLog } from '../core/sessions/activityLog';
import { ActivityFile } from '../core/sessions/activityFile';
import { SandboxSecrets } from './secrets';
import { registerSecretCommands } from './secretCommands';
import { registerCommands } from './commands';
import { EngineState } from './engineState';
import { virtualConsentPrompt } from './virtualConsent';
import { SECTION, readSettings } from './settings';
import { AccessGrant } from './accessGrant';
import { SandboxStatusBar } from './statusBar';
import { registerTools } from './tools/registerTools';
import { registerPromptLanguage } from './prompt/registerPromptLanguage';
import { registerCopyReview } from './copyReview/registerCopyReview';
import { registerSandboxParticipant } from './chat/sandboxParticipant';
import { NestedGitGuard } from './nestedGitGuard';
import type { CopyReviewModel } from './copyReview/copyReviewModel';
import { defaultStateDir } from '../core/sessions/leases';
import { mcpServerDefinitions, registerMcpServer, type McpServerDeps } from './mcpServerProvider';
import { fillStandIns } from './hostApi';
import type { StandInRegistry } from './standIns';

export interface AgentSandboxApi {
  readonly log: vscode.LogOutputChannel;
  readonly service: SandboxService;
  readonly engine: EngineState;
  readonly housekeeping: Housekeeping;
  /** What the status bar item shows now (the engine in use, sessions, calls running). */
  statusText(): string;
  readonly panel: SandboxPanel;
  readonly activity: ActivityLog;
  /** The changes of this folder's copy sessions, as Source Control › Sandbox changes shows them. */
  readonly copyReview: CopyReviewModel;
  /** Sets aside a .git a read-write sandbox creates below the top of the folder. */
  readonly gitGuard: NestedGitGuard;
  /** The MCP servers offered to VS Code now (agentSandbox.mcp.enabled). */
  mcpServerDefinitions(): vscode.McpStdioServerDefinition[];
}

export function activate(context: vscode.ExtensionContext, standIns?: StandInRegistry): AgentSandboxApi {
  fillStandIns(standIns);
  const log = vscode.window.createOutputChannel('Agent Sandbox', { log: true });
  const grant = new AccessGrant(SECTION, workspaceFolder);
  const warned = new Set<string>();
  // Policy from the user's settings and grant; a workspace value that would loosen it is ignored, and said once in the log.
  const settings = () =>
    readSettings({
      accessGrant: grant.get(),
      onIgnored: (message) => {
        if (warned.has(message)) return;
        warned.add(message);
        log.warn(message);
      },
    });
  const runOutput = vscode.window.createOutputChannel(vscode.l10n.t('Agent Sandbox: Runs'));
  const keeperFor = (host: string | undefined) =>
    folderKeeperLauncher({
      nodePath: process.execPath,
      cliPath: join(context.extensionPath, 'dist', 'cli.js'),
      args: host ? ['--engine-host', host] : [],
    });
  const engine = new EngineState(settings, log, virtualConsentPrompt(context.globalState, log), {
    keep: (sessionId) => keeperFor(settings().engineHost || undefined).keep(sessionId),
  });
  const secrets = new SandboxSecrets(settings, context.secrets);
  // Every offered secret's value is redacted from the start, asked for by a sandbox or not.
  void secrets.loadOffered().catch((error: Error) => log.warn(`Could not read the stored secrets: ${error.message}`));
  const service = new SandboxService({
    engine: () => engine.get(),
    settings,
    workspaceFolder,
    trusted: () => vscode.workspace.isTrusted,
    client: 'vscode',
    secrets,
    secretValue: (name) => secrets.value(name),
    log: (level, message) => (level === 'warn' ? log.warn(secrets.redact(message)) : log.info(secrets.redact(message))),
  });
  const statusBar = new SandboxStatusBar(engine, service);
  const track = <T>(work: Promise<T>) => statusBar.track(work);
  // Every call is also kept in the folder's activity file, for audit (agent-sandbox log, the panel's export).
  const activity = new ActivityLog(
    100,
    (entry) => {
      const folder = workspaceFolder();
      if (folder) new ActivityFile(folder, 'vscode', undefined, secrets.redact).append(entry);
    },
    secrets.redact,
  );
  const imagesFolder = vscode.Uri.joinPath(context.globalStorageUri, 'images');
  const images = new PanelImages(imagesFolder.fsPath);
  const copyReview = registerCopyReview({
    engine: () => engine.get(),
    list: () => service.list(),
    onDidChangeSessions: (listener) => service.onDidChangeSessions(listener),
    onEngineConnected: (listener) =>
      engine.onDidChange((status) => {
        if (status.state === 'connected') listener();
      }),
    activity,
    workspaceFolder,
    stateDir: defaultStateDir(),
    log,
  });
  const panel = new SandboxPanel({
    extensionUri: context.extensionUri,
    service,
    engine,
    activity,
    images,
    imagesFolder,
    workspaceFolder,
    settings,
    grant,
    log,
    track,
    copyReview: copyReview.model,
    redact: secrets.redact,
  });
  const housekeeping = new Housekeeping(
    service,
    engine,
    new WorkspaceLeases(),
    settings,
    workspaceFolder,
    context.extensionPath,
    log,
  );
  const mcp: McpServerDeps = {
    extensionPath: context.extensionPath,
    version: context.extension.packageJSON.version as string,
    settings,
    workspaceFolder,
  };
  const gitGuard = new NestedGitGuard({
    workspaceFolder,
    list: () => service.list(),
    onDidChangeSessions: (listener) => service.onDidChangeSessions(listener),
    log,
  });
  const store = new FileStore(vscode.Uri.joinPath(context.globalStorageUri, 'files').fsPath);

  context.subscriptions.push(
    log,
    runOutput,
    engine,
    statusBar,
    ...registerTools({
      service,
      engine,
      settings,
      log,
      track,
      store,
      secrets,
      activity,
      images,
      workspaceFolder: () => (vscode.workspace.isTrusted ? workspaceFolder() : undefined),
    }),
    ...registerCommands({ service, engine, log, runOutput, track, housekeeping, secrets, grant }),
    ...registerSecretCommands(secrets),
    ...registerPromptLanguage({ service, engine, log, track }),
    ...registerSandboxParticipant({
      service,
      engine,
      log,
      track,
      workspaceFolder: () => (vscode.workspace.isTrusted ? workspaceFolder() : undefined),
    }),
    ...registerMcpServer(mcp),
    housekeeping,
    panel,
    ...copyReview.disposables,
    gitGuard,
    vscode.window.registerWebviewViewProvider(SandboxPanel.viewId, panel),
    vscode.commands.registerCommand('agentSandbox.showPanel', () =>
      vscode.commands.executeCommand(`${SandboxPanel.viewId}.focus`),
    ),
    // A secret added (here or in another window) is redacted from then on.
    context.secrets.onDidChange(() => void secrets.loadOffered().catch(() => undefined)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration(SECTION)) return;
      if (event.affectsConfiguration(`${SECTION}.secrets`)) void secrets.loadOffered().catch(() => undefined);
      try {
        settings();
        log.info('Settings changed; new sandboxes use them.');
      } catch (error) {
        log.error((error as Error).message);
        void vscode.window.showErrorMessage(
          vscode.l10n.t(
            'Agent Sandbox settings are invalid: {0}',
            (error as Error).message.split('\n').slice(1).join(' '),
          ),
        );
      }
      if (
        event.affectsConfiguration(`${SECTION}.engine`) ||
        event.affectsConfiguration(`${SECTION}.engineHost`) ||
        event.affectsConfiguration(`${SECTION}.images`)
      )
        service.reset();
      housekeeping.schedule();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => service.reset()),
  );
  shutdown = async () => {
    await service.closeInterpreters();
    await engine.shutdown();
  };
  log.info(
    `Agent Sandbox ${context.extension.packageJSON.version as string} activated (${vscode.env.appName} ${vscode.version}, extension host ${process.version}).`,
  );
  return {
    log,
    service,
    engine,
    housekeeping,
    panel,
    activity,
    copyReview: copyReview.model,
    gitGuard,
    statusText: () => statusBar.text,
    mcpServerDefinitions: () => mcpServerDefinitions(mcp),
  };
}

let shutdown: (() => Promise<void>) | undefined;

/** Sessions stay with the engine; the warm pool's containers are removed before the window goes. */
export async function deactivate(): Promise<void> {
  await shutdown?.();
}

/** The folder that owns this window's sessions: the first workspace folder, as the CLI names it. */
function workspaceFolder(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.find((candidate) => candidate.uri.scheme === 'file');
  if (!folder) return undefined;
  try {
    return realpathSync(folder.uri.fsPath);
  } catch {
    return folder.uri.fsPath;
  }
}
