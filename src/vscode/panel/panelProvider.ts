/**
 * The Sandbox panel in VS Code's bottom panel. It sends the full state when the webview is ready,
 * then events; live stats stream only while the panel is visible. Every message from the webview
 * is validated before anything acts on it.
 */
import * as vscode from 'vscode';
import type { ActivityLog } from '../../core/sessions/activityLog';
import { errorMessage } from '../../core/errors';
import type { SandboxService } from '../../core/sessions/sandboxService';
import { NETWORK_MODES, settingsSchema, type Settings } from '../../core/spec/settings';
import {
  webviewToHostSchema,
  type DefaultsEdit,
  type HostToWebview,
  type SessionView,
  type WebviewToHost,
} from '../../shared/protocol';
import type { EngineState } from '../engineState';
import type { AccessGrant } from '../accessGrant';
import { confirmLooserAccess, confirmNetwork } from '../policyDialogs';
import { SECTION } from '../settings';
import { panelHtml } from './panelHtml';
import { PanelDecisions } from './panelDecisions';
import { exportAuditLog } from './panelNetwork';
import { secretsView } from './panelSecrets';
import type { PanelImages } from './panelImages';
import { activityView, copyChangesView, defaultsView, engineView, sessionView } from './panelViews';
import type { CopyReviewModel } from '../copyReview/copyReviewModel';
import { askingAboutChanges } from '../copyReview/closeAsking';

export interface PanelServices {
  extensionUri: vscode.Uri;
  service: SandboxService;
  engine: EngineState;
  activity: ActivityLog;
  /** Each session's last images, for the thumbnails. */
  images: PanelImages;
  /** The folder of those images' copies, which the webview may load. */
  imagesFolder: vscode.Uri;
  /** The workspace folder whose audit log the panel exports. */
  workspaceFolder(): string | undefined;
  settings(): Settings;
  /** The workspace access the user granted this workspace. */
  grant: AccessGrant;
  log: vscode.LogOutputChannel;
  track<T>(work: Promise<T>): Promise<T>;
  /** The copy sessions' changes awaiting review. */
  copyReview: Pick<CopyReviewModel, 'session' | 'onDidChange'>;
  /** The secrets' redactor, for what the panel shows and exports. */
  redact(text: string): string;
}

export class SandboxPanel implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = 'agentSandbox.panel';
  private view: vscode.WebviewView | undefined;
  private live: vscode.Disposable[] = [];
  private readonly stats = new Map<string, { dispose(): void }>();
  private refreshTimer: NodeJS.Timeout | undefined;
  /** Looks at the engine's sessions begun so far; only the latest one's answer is sent. */
  private looks = 0;
  /** Network decisions of allowlist sessions, shown in Activity. */
  private readonly decisions = new PanelDecisions(
    (entry) => this.post({ type: 'activity', entry }),
    (text) => this.services.redact(text),
    () => this.scheduleSessions(), // the cards' secret counts
  );
  /** The sessions last sent, as JSON: a poll that finds the same sends nothing. */
  private lastSessions: string | undefined;

  constructor(private readonly services: PanelServices) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.services.extensionUri, 'dist'), this.services.imagesFolder],
    };
    view.webview.html = panelHtml(view.webview, this.services.extensionUri);
    view.webview.onDidReceiveMessage((message: unknown) => void this.receive(message));
    view.onDidChangeVisibility(() => (view.visible ? this.startLive() : this.stopLive()));
    view.onDidDispose(() => {
      this.stopLive();
      this.view = undefined;
    });
    if (view.visible) this.startLive();
  }

  /** Handles one message from the webview; anything that is not a valid message is refused. */
  async receive(raw: unknown): Promise<void> {
    const parsed = webviewToHostSchema.safeParse(raw);
    if (!parsed.success) {
      this.services.log.warn(
        `Sandbox panel sent an invalid message: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
      );
      return;
    }
    const message = parsed.data;
    try {
      const result = await this.act(message);
      if (result) this.post({ type: 'result', action: message.type, ok: true, message: result });
    } catch (error) {
      this.services.engine.reportFailure(error);
      this.services.log.error(`Sandbox panel, ${message.type}: ${errorMessage(error)}`);
      this.post({ type: 'result', action: message.type, ok: false, message: errorMessage(error).split('\n')[0]! });
    }
  }

  dispose(): void {
    this.stopLive();
  }

  private async act(message: WebviewToHost): Promise<string | undefined> {
    const { service, track } = this.services;
    switch (message.type) {
      case 'ready':
        if (this.services.engine.status.state === 'unknown') await this.services.engine.check();
        await this.sendState();
        return undefined;
      case 'retryEngine': {
        const status = await this.services.engine.check();
        await this.sendState();
        return status.state === 'connected'
          ? vscode.l10n.t('Connected to {0} {1}.', status.info.product, status.info.version)
          : undefined;
      }
      case 'showLog':
        this.services.log.show(true);
        return undefined;
      case 'openSession': {
        const opened = await track(
          service.openSession({ session: message.name, runtime: message.runtime, byUser: true }),
        );
        this.services.engine.reportSuccess();
        return opened.created
          ? vscode.l10n.t('Opened session {0}.', message.name)
          : vscode.l10n.t('Session {0} was already open.', message.name);
      }
      case 'closeSession': {
        const closed = await askingAboutChanges('close', (discardChanges) =>
          track(service.close(message.sandboxId, { discardChanges })),
        );
        return closed ? vscode.l10n.t('Closed session {0}.', message.sandboxId) : undefined;
      }
      case 'restartSession': {
        if (
          !(await this.confirm(
            vscode.l10n.t(
              'Restart session {0}? Its files, installed packages and processes are lost.',
              message.sandboxId,
            ),
            vscode.l10n.t('Restart'),
          ))
        )
          return undefined;
        const restarted = await askingAboutChanges('restart', (discardChanges) =>
          track(service.restart(message.sandboxId, { byUser: true, discardChanges })),
        );
        return restarted ? vscode.l10n.t('Restarted session {0}.', message.sandboxId) : undefined;
      }
      case 'reviewChanges':
        await vscode.commands.executeCommand('workbench.view.scm');
        return undefined;
      case 'applyChanges':
        await vscode.commands.executeCommand('agentSandbox.copy.applyAll', { sandboxId: message.sandboxId });
        return undefined;
      case 'discardChanges':
        await vscode.commands.executeCommand('agentSandbox.copy.discardAll', { sandboxId: message.sandboxId });
        return undefined;
      case 'exportLog':
        return exportAuditLog(this.services.workspaceFolder(), this.services.engine.get(), this.services.redact);
      case 'openImage': {
        const file = this.services.images.fileFor(message.key);
        if (!file) return vscode.l10n.t('That image is no longer shown.');
        await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(file), { preview: true });
        return undefined;
      }
      case 'openTerminal':
        await vscode.commands.executeCommand('agentSandbox.openTerminal', message.sandboxId);
        return undefined;
      case 'setAccess': {
        if (message.access !== 'none' && !vscode.workspace.isTrusted)
          throw new Error(vscode.l10n.t('This workspace is not trusted: sandboxes cannot see it.'));
        const question = vscode.l10n.t(
          'Recreate session {0} with workspace access "{1}"? The container is replaced: its files outside the workspace folder, installed packages and processes are lost.',
          message.sandboxId,
          message.access,
        );
        if (!(await this.confirm(question, vscode.l10n.t('Recreate')))) {
          await this.sendSessions(true); // puts the dropdown back
          return undefined;
        }
        const restarted = await askingAboutChanges('restart', (discardChanges) =>
          track(service.restart(message.sandboxId, { workspaceAccess: message.access, byUser: true, discardChanges })),
        );
        if (!restarted) {
          await this.sendSessions(true); // puts the dropdown back
          return undefined;
        }
        return vscode.l10n.t(
          'Session {0} now has workspace access "{1}".',
          message.sandboxId,
          restarted.sandbox.info.workspaceAccess,
        );
      }
      case 'saveDefaults':
        await this.saveDefaults(message.defaults);
        return vscode.l10n.t('Saved the defaults to your {0} settings.', message.defaults.target);
    }
  }

  private async confirm(question: string, action: string): Promise<boolean> {
    return (await vscode.window.showWarningMessage(question, { modal: true }, action)) === action;
  }

  private async saveDefaults(defaults: DefaultsEdit): Promise<void> {
    // The settings schema's own bounds, checked before anything is saved; the panel shows the first problem.
    const checked = settingsSchema.safeParse({
      timeoutSeconds: defaults.timeoutSeconds,
      limits: {
        memory: defaults.memory,
        cpus: defaults.cpus,
        pids: defaults.pids,
        maxStdoutBytes: defaults.maxStdoutBytes,
        maxStderrBytes: defaults.maxStderrBytes,
      },
    });
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      throw new Error(vscode.l10n.t('{0}: {1}', `${SECTION}.${issue.path.join('.')}`, issue.message));
    }
    const target =
      defaults.target === 'workspace' && vscode.workspace.workspaceFolders?.length
        ? vscode.ConfigurationTarget.Workspace
        : vscode.ConfigurationTarget.Global;
    const config = vscode.workspace.getConfiguration(SECTION);
    const current = this.services.settings();
    // Looser access or network is the user's own decision, asked in a modal dialog; workspace settings could not loosen them anyway.
    if (!(await confirmLooserAccess(this.services.service.allowedAccess(), defaults.workspaceAccess))) return;
    if (!(await confirmNetwork(current.network.mode, defaults.network, current.network.allow))) return;
    const values: [string, unknown][] = [
      ['limits.memory', defaults.memory],
      ['limits.cpus', defaults.cpus],
      ['limits.pids', defaults.pids],
      ['timeoutSeconds', defaults.timeoutSeconds],
      ['limits.maxStdoutBytes', defaults.maxStdoutBytes],
      ['limits.maxStderrBytes', defaults.maxStderrBytes],
    ];
    for (const [key, value] of values) await config.update(key, value, target);
    await this.services.grant.set(defaults.workspaceAccess);
    // Raising the network's mode is a user setting (a workspace may only lower it); lowering it may go to either.
    await config.update(
      'network.mode',
      defaults.network,
      NETWORK_MODES.indexOf(defaults.network) > NETWORK_MODES.indexOf(current.network.mode)
        ? vscode.ConfigurationTarget.Global
        : target,
    );
    this.services.settings(); // throws, with the setting named, if the result is not valid
  }

  private startLive(): void {
    this.stopLive();
    const { engine, service, activity } = this.services;
    this.live.push(
      engine.onDidChange((status) => {
        this.post({ type: 'engine', engine: engineView(status, engineKind(engine)) });
        if (status.state === 'connected') this.scheduleSessions();
      }),
      service.onDidChangeSessions(() => this.scheduleSessions()),
      this.services.copyReview.onDidChange(() => this.scheduleSessions()),
      this.services.images.onDidChange(() => this.scheduleSessions()),
      // Sessions other programs open or close in this folder (the CLI, an MCP client) show too.
      poll(() => this.scheduleSessions(), SESSIONS_POLL_MS),
      activity.onEntry((entry) => {
        this.post({ type: 'activity', entry: activityView(entry) });
        this.scheduleSessions();
      }),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (!event.affectsConfiguration(SECTION)) return;
        try {
          this.post({ type: 'defaults', defaults: defaultsView(this.services.settings()) });
        } catch {
          // Invalid settings are reported by the extension's own listener.
        }
      }),
    );
    void this.sendState();
  }

  private stopLive(): void {
    for (const disposable of this.live) disposable.dispose();
    this.live = [];
    for (const watcher of this.stats.values()) watcher.dispose();
    this.stats.clear();
    clearTimeout(this.refreshTimer);
    this.lastSessions = undefined;
  }

  /** Coalesces bursts of changes (a restart is a close and an open) into one sessions update. */
  private scheduleSessions(): void {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => void this.sendSessions(), 100);
  }

  private async sendState(): Promise<void> {
    const { engine, activity } = this.services;
    let defaults;
    try {
      defaults = defaultsView(this.services.settings());
    } catch {
      defaults = undefined;
    }
    ++this.looks; // a poll under way answers for an older moment than this
    const sessions = await this.sessionViews();
    if (!defaults) return;
    this.lastSessions = JSON.stringify(sessions);
    this.post({
      type: 'state',
      engine: engineView(engine.status, engineKind(engine)),
      sessions,
      defaults,
      // The tool calls and the network decisions shown so far, in the order they happened.
      activity: [...activity.recent().map(activityView), ...this.decisions.recent()].sort((a, b) =>
        a.at.localeCompare(b.at),
      ),
    });
  }

  /**
   * Sends the sessions when they changed since the last sending (or always, with `force`). Only the
   * latest look is sent: a slower one that started before it (a poll during a restart) is dropped.
   */
  private async sendSessions(force = false): Promise<void> {
    const look = ++this.looks;
    const sessions = await this.sessionViews();
    if (look !== this.looks) return;
    const text = JSON.stringify(sessions);
    if (!force && text === this.lastSessions) return;
    this.lastSessions = text;
    this.post({ type: 'sessions', sessions });
  }

  private async sessionViews() {
    const { engine, service, activity } = this.services;
    if (engine.status.state !== 'connected') return [];
    const sessions = await service.list().catch(() => []);
    if (this.view?.visible) void this.decisions.follow(this.services.engine.get(), sessions);
    const views = sessions.map((session) => ({
      ...sessionView(session, service, activity, engine.get()),
      ...this.imagesView(session.id),
      ...copyChangesView(this.services.copyReview.session(session.id)),
      // Names and bindings only: the spec's values and placeholders stay here.
      ...secretsView(session.spec, this.decisions.secretUse(session.id)),
    }));
    this.followStats(views.filter((view) => view.state !== 'dead').map((view) => view.id));
    return views;
  }

  /** A session's last images, as the webview loads them; nothing when it has none (or the panel is gone). */
  private imagesView(containerId: string): { images?: SessionView['images'] } {
    const webview = this.view?.webview;
    const images = this.services.images.lastFor(containerId);
    if (!webview || !images.length) return {};
    return {
      images: images.map(({ key, name, source, file, width, height }) => ({
        key,
        name,
        source,
        src: webview.asWebviewUri(vscode.Uri.file(file)).toString(),
        ...(width !== undefined && height !== undefined ? { width, height } : {}),
      })),
    };
  }

  /** Live stats for exactly the running sessions, only while the panel is visible. */
  private followStats(ids: string[]): void {
    if (!this.view?.visible) return;
    for (const [id, watcher] of this.stats) {
      if (ids.includes(id)) continue;
      watcher.dispose();
      this.stats.delete(id);
    }
    const engine = this.services.engine.get();
    for (const id of ids) {
      if (this.stats.has(id) || !engine.watchStats) continue;
      this.stats.set(
        id,
        engine.watchStats(id, (stats) => this.post({ type: 'stats', stats })),
      );
    }
  }

  private post(message: HostToWebview): void {
    void this.view?.webview.postMessage(message);
  }
}

/** The engine's name for the panel, without reaching the engine. */
function engineKind(engine: EngineState): string {
  try {
    return engine.get().kind;
  } catch {
    return 'engine';
  }
}

/** While the panel is visible, how often it asks the engine for sessions other processes opened or closed. */
const SESSIONS_POLL_MS = 3_000;

function poll(tick: () => void, ms: number): { dispose(): void } {
  const timer = setInterval(tick, ms);
  return { dispose: () => clearInterval(timer) };
}
