/** The status bar item: engine state and live sessions; a click offers what can be done. */
import * as vscode from 'vscode';
import type { SandboxService } from '../core/sessions/sandboxService';
import type { EngineState, EngineStatus } from './engineState';

export class SandboxStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('agentSandbox.status', vscode.StatusBarAlignment.Left, 50);
  private readonly disposables: vscode.Disposable[] = [];
  private sessions = 0;
  private running = 0;

  constructor(
    private readonly engine: EngineState,
    private readonly service: SandboxService,
  ) {
    this.item.name = vscode.l10n.t('Agent Sandbox');
    this.item.command = 'agentSandbox.statusActions';
    this.disposables.push(
      this.item,
      engine.onDidChange(() => this.refreshSessions()),
      service.onDidChangeSessions(() => this.refreshSessions()),
      vscode.commands.registerCommand('agentSandbox.statusActions', () => this.showActions()),
    );
    this.render();
    this.item.show();
  }

  /** Marks a call as running (the item spins while any call runs). */
  track<T>(work: Promise<T>): Promise<T> {
    this.running++;
    this.render();
    return work.finally(() => {
      this.running--;
      this.render();
    });
  }

  /** What the item shows now (for the extension's API and its tests, which cannot read the status bar). */
  get text(): string {
    return this.item.text;
  }

  dispose(): void {
    for (const disposable of this.disposables) disposable.dispose();
  }

  private async refreshSessions(): Promise<void> {
    if (this.engine.status.state === 'connected') {
      this.sessions = (await this.service.list().catch(() => [])).filter(
        (session) => session.state === 'running',
      ).length;
    }
    this.render();
  }

  private render(): void {
    const status: EngineStatus = this.engine.status;
    const icon = this.running > 0 ? '$(sync~spin)' : status.state === 'unavailable' ? '$(warning)' : '$(vm)';
    const tooltip = new vscode.MarkdownString(undefined, true);
    switch (status.state) {
      case 'connected': {
        // The engine in use is always named: "virtual" is a lighter isolation and must be visible.
        const sandbox = vscode.l10n.t('Sandbox ({0})', status.kind);
        this.item.text = `${icon} ${sandbox}: ${this.running > 0 ? vscode.l10n.t('running') : this.sessions === 0 ? vscode.l10n.t('ready') : this.sessions === 1 ? vscode.l10n.t('1 session') : vscode.l10n.t('{0} sessions', this.sessions)}`;
        tooltip.appendMarkdown(
          vscode.l10n.t(
            '**Agent Sandbox**: {0} {1} at `{2}`, {3} live session(s).',
            status.info.product,
            status.info.version,
            status.endpoint,
            this.sessions,
          ),
        );
        if (status.kind === 'virtual')
          tooltip.appendMarkdown(
            `\n\n${vscode.l10n.t('The virtual engine runs bash and Python inside the extension host: a lighter isolation than a container, with no real processes, package installs or network. Sessions end when VS Code closes. Setting: agentSandbox.engine.')}`,
          );
        this.item.backgroundColor = undefined;
        break;
      }
      case 'unavailable':
        this.item.text = `${icon} ${vscode.l10n.t('Sandbox: no engine')}`;
        tooltip.appendMarkdown(vscode.l10n.t('**Agent Sandbox**: no engine at `{0}`.', status.endpoint));
        tooltip.appendText(`\n\n${status.problem}`);
        this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        break;
      case 'connecting':
        this.item.text = `$(sync~spin) ${vscode.l10n.t('Sandbox: connecting')}`;
        tooltip.appendMarkdown(vscode.l10n.t('**Agent Sandbox**: connecting to `{0}`.', status.endpoint));
        break;
      default:
        this.item.text = `${icon} ${this.running > 0 ? vscode.l10n.t('Sandbox: running') : status.kind === 'virtual' ? vscode.l10n.t('Sandbox ({0})', status.kind) : vscode.l10n.t('Sandbox')}`;
        tooltip.appendMarkdown(
          vscode.l10n.t(
            '**Agent Sandbox**: the engine is contacted on first use{0}.',
            status.endpoint ? ` (\`${status.endpoint}\`)` : '',
          ),
        );
    }
    if (this.running > 0) tooltip.appendMarkdown(`\n\n${vscode.l10n.t('{0} call(s) running.', this.running)}`);
    this.item.tooltip = tooltip;
  }

  private async showActions(): Promise<void> {
    const actions: (vscode.QuickPickItem & { command: string })[] = [
      { label: `$(add) ${vscode.l10n.t('Open Session')}`, command: 'agentSandbox.openSession' },
      { label: `$(terminal) ${vscode.l10n.t('Open Terminal in Sandbox')}`, command: 'agentSandbox.openTerminal' },
      { label: `$(close) ${vscode.l10n.t('Close Session')}`, command: 'agentSandbox.closeSession' },
      { label: `$(lock) ${vscode.l10n.t('Set Workspace Access')}`, command: 'agentSandbox.setWorkspaceAccess' },
      { label: `$(output) ${vscode.l10n.t('Show Log')}`, command: 'agentSandbox.showLog' },
    ];
    if (this.engine.status.state !== 'connected') {
      actions.unshift({
        label: `$(refresh) ${vscode.l10n.t('Retry Engine Connection')}`,
        command: 'agentSandbox.retryEngine',
      });
    }
    const picked = await vscode.window.showQuickPick(actions, { placeHolder: vscode.l10n.t('Agent Sandbox') });
    if (picked) await vscode.commands.executeCommand(picked.command);
  }
}
