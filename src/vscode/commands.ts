/** The "Sandbox" commands of the command palette. */
import * as vscode from 'vscode';
import { askAboutHeld, askingAboutChanges } from './copyReview/closeAsking';
import type { Runtime, WorkspaceAccess } from '../core/spec/spec';
import { RUNTIMES, WORKSPACE_ACCESS } from '../core/spec/spec';
import type { SandboxService } from '../core/sessions/sandboxService';
import type { SessionInfo } from '../core/engine/engine';
import { errorMessage } from '../core/errors';
import { formatExecResult } from '../core/tools/format';
import { engineLabel } from '../core/engine/engineCapabilities';
import type { EngineState } from './engineState';
import type { Housekeeping } from './housekeeping';
import type { SandboxSecrets } from './secrets';
import type { AccessGrant } from './accessGrant';
import { confirmLooserAccess } from './policyDialogs';
import { openSandboxTerminal } from './sandboxTerminal';

export interface CommandServices {
  service: SandboxService;
  engine: EngineState;
  log: vscode.LogOutputChannel;
  /** Where Run Selection / Run File show their results. */
  runOutput: vscode.OutputChannel;
  track<T>(work: Promise<T>): Promise<T>;
  housekeeping: Housekeeping;
  secrets: SandboxSecrets;
  grant: AccessGrant;
}

const LANGUAGE_RUNTIMES: Record<string, Runtime> = { python: 'python', javascript: 'node', shellscript: 'bash' };

export function registerCommands(services: CommandServices): vscode.Disposable[] {
  const { service, log } = services;
  const withErrors =
    (name: string, run: (...args: unknown[]) => Promise<unknown>) =>
    async (...args: unknown[]) => {
      try {
        return await run(...args);
      } catch (error) {
        services.engine.reportFailure(error);
        log.error(`${name}: ${errorMessage(error)}`);
        // Not awaited: the command finishes while the message waits for the user.
        void vscode.window
          .showErrorMessage(errorMessage(error).split('\n')[0]!, vscode.l10n.t('Show Log'))
          .then((choice) => choice && log.show(true));
        return undefined;
      }
    };
  const register = (id: string, run: (...args: unknown[]) => Promise<unknown>) =>
    vscode.commands.registerCommand(`agentSandbox.${id}`, withErrors(id, run));

  return [
    vscode.commands.registerCommand('agentSandbox.showLog', () => log.show(true)),
    register('retryEngine', async () => {
      const status = await services.engine.check();
      if (status.state === 'connected')
        void vscode.window.showInformationMessage(
          vscode.l10n.t('Connected to {0} {1}.', status.info.product, status.info.version),
        );
      else if (status.state === 'unavailable') throw new Error(status.problem);
    }),

    register('cleanUpOrphans', async () => {
      const removed = await services.track(services.housekeeping.cleanUpOrphans());
      services.engine.reportSuccess();
      void vscode.window.showInformationMessage(
        removed.length
          ? vscode.l10n.t('Removed {0} orphaned sandbox(es); the log says which and why.', removed.length)
          : vscode.l10n.t('No orphaned sandboxes.'),
      );
      return removed.map(({ session, reason }) => ({
        id: session.id,
        name: session.name,
        workspaceFolder: session.workspaceFolder,
        reason,
      }));
    }),

    register('openSession', async (arg?: unknown) => {
      const request =
        typeof arg === 'object' && arg !== null ? (arg as { session?: string; runtime?: Runtime }) : undefined;
      const session =
        request?.session ??
        (await vscode.window.showInputBox({
          title: vscode.l10n.t('Open Sandbox Session'),
          prompt: vscode.l10n.t('Session name'),
          value: 'default',
          validateInput: (value) =>
            /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(value)
              ? undefined
              : vscode.l10n.t('Use letters, digits, ".", "_" or "-".'),
        }));
      if (!session) return undefined;
      const runtime = request?.runtime ?? (await pickRuntime());
      if (!runtime) return undefined;
      const opened = await progress(vscode.l10n.t('Opening sandbox session {0}', session), (onProgress) =>
        services.track(service.openSession({ session, runtime }, { onProgress })),
      );
      services.engine.reportSuccess();
      const info = opened.sandbox.info;
      log.info(
        `${opened.created ? 'Opened' : 'Reused'} session ${session} (${info.runtime}, ${info.image}, workspace ${info.workspaceAccess}, network ${info.network ? 'on' : 'off'}).`,
      );
      for (const notice of [...opened.notices, ...info.notices]) log.warn(notice);
      if (!request) {
        const open = vscode.l10n.t('Open Terminal');
        const choice = await vscode.window.showInformationMessage(
          opened.created
            ? vscode.l10n.t('Sandbox session {0} is open ({1}).', session, info.image)
            : vscode.l10n.t('Sandbox session {0} was already open.', session),
          open,
        );
        if (choice === open) await vscode.commands.executeCommand('agentSandbox.openTerminal', session);
      }
      return info;
    }),

    register('closeSession', async (arg?: unknown) => {
      const session =
        typeof arg === 'string' ? arg : (await pickSession(service, vscode.l10n.t('Close which session?')))?.name;
      if (!session) return undefined;
      const closed = await askingAboutChanges('close', (discardChanges) =>
        services.track(service.close(session, { discardChanges })),
      );
      if (closed) log.info(`Closed session ${closed.name ?? closed.id}.`);
      return closed;
    }),

    register('closeAllSessions', async (arg?: unknown) => {
      const sessions = await service.list();
      if (sessions.length === 0) {
        void vscode.window.showInformationMessage(vscode.l10n.t('No sandbox sessions are open.'));
        return [];
      }
      if (arg !== 'confirmed') {
        const close = vscode.l10n.t('Close {0} Sessions', sessions.length);
        const choice = await vscode.window.showWarningMessage(
          vscode.l10n.t('Close every sandbox session of this workspace? Their files and processes are lost.'),
          { modal: true },
          close,
        );
        if (choice !== close) return undefined;
      }
      const { closed, held } = await services.track(service.closeAll());
      log.info(
        `Closed ${closed.length} session(s)${held.length ? `; kept ${held.length} copy session(s) with unapplied changes` : ''}.`,
      );
      if (arg !== 'confirmed' && held.length)
        await askAboutHeld(held, async () => {
          const more = await services.track(service.closeAll({ discardChanges: true }));
          closed.push(...more.closed);
        });
      return closed;
    }),

    register('restartSession', async (arg?: unknown) => {
      const session =
        typeof arg === 'string' ? arg : (await pickSession(service, vscode.l10n.t('Restart which session?')))?.name;
      if (!session) return undefined;
      if (typeof arg !== 'string') {
        const restart = vscode.l10n.t('Restart');
        const choice = await vscode.window.showWarningMessage(
          vscode.l10n.t('Restart session {0}? Its files, installed packages and processes are lost.', session),
          { modal: true },
          restart,
        );
        if (choice !== restart) return undefined;
      }
      const restarted = await askingAboutChanges('restart', (discardChanges) =>
        progress(vscode.l10n.t('Restarting sandbox session {0}', session), (onProgress) =>
          services.track(service.restart(session, { onProgress, discardChanges })),
        ),
      );
      if (!restarted) return undefined;
      log.info(`Restarted session ${session}.`);
      return restarted.sandbox.info;
    }),

    register('runSelection', async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) throw new Error(vscode.l10n.t('Open a file and select the code to run.'));
      const selection = editor.selection.isEmpty
        ? editor.document.lineAt(editor.selection.active.line).range
        : editor.selection;
      return runCode(services, editor.document, editor.document.getText(selection));
    }),

    register('runFile', async (uri?: unknown) => {
      const document =
        uri instanceof vscode.Uri
          ? await vscode.workspace.openTextDocument(uri)
          : vscode.window.activeTextEditor?.document;
      if (!document) throw new Error(vscode.l10n.t('Open the file to run.'));
      return runCode(services, document, document.getText());
    }),

    register('openTerminal', async (arg?: unknown) => {
      let session = typeof arg === 'string' ? arg : undefined;
      if (!session) {
        const sessions = await service.list();
        session =
          sessions.length === 0
            ? 'default'
            : (await pickSession(service, vscode.l10n.t('Open a terminal in which session?'), sessions))?.name;
      }
      if (!session) return undefined;
      const { sandbox } = await services.track(service.openSession({ session }));
      services.engine.reportSuccess();
      return openSandboxTerminal(
        vscode.l10n.t('Sandbox: {0}', session),
        (dimensions) => sandbox.openShell(dimensions),
        undefined,
        services.secrets.terminalRedaction(),
      );
    }),

    register('setWorkspaceAccess', async (arg?: unknown) => {
      const current = service.allowedAccess();
      const access = (
        typeof arg === 'string' && (WORKSPACE_ACCESS as readonly string[]).includes(arg)
          ? arg
          : await pickAccess(current)
      ) as WorkspaceAccess | undefined;
      if (!access) return undefined;
      if (access !== 'none' && !vscode.workspace.isTrusted)
        throw new Error(
          vscode.l10n.t('This workspace is not trusted: sandboxes cannot see it. Trust the workspace first.'),
        );
      // Whatever the arguments (an agent can call commands), more access than now needs the user's own click.
      if (!(await confirmLooserAccess(current, access))) return undefined;
      await services.grant.set(access);
      log.info(`Workspace access set to ${access} for this workspace.`);
      const effective = service.allowedAccess();
      if (effective !== access)
        void vscode.window.showWarningMessage(
          vscode.l10n.t(
            'Workspace settings lower sandbox workspace access to "{0}" (agentSandbox.workspaceAccess in .vscode/settings.json).',
            effective,
          ),
        );
      const stale = (await service.list().catch(() => [])).filter((session) => session.workspaceAccess !== effective);
      // Asked only when a person ran the command from the palette; a caller with arguments restarts what it wants itself.
      if (stale.length > 0 && arg === undefined) {
        const restart = vscode.l10n.t('Restart Sessions');
        const choice = await vscode.window.showWarningMessage(
          vscode.l10n.t(
            '{0} open session(s) still have the old access. Restart them now? Their files and processes are lost.',
            stale.length,
          ),
          { modal: true },
          restart,
        );
        if (choice === restart) {
          for (const session of stale)
            if (session.name)
              await services.track(
                askingAboutChanges('restart', (discardChanges) =>
                  service.close(session.name!, { discardChanges }),
                ).then(
                  (closed) =>
                    closed &&
                    service.openSession({
                      session: session.name,
                      runtime: session.runtime,
                      workspaceAccess: effective,
                      network: session.network,
                    }),
                ),
              );
        }
      }
      return effective;
    }),
  ];
}

async function runCode(services: CommandServices, document: vscode.TextDocument, code: string) {
  const runtime = LANGUAGE_RUNTIMES[document.languageId] ?? (await pickRuntime(['python', 'node', 'bash']));
  if (!runtime) return undefined;
  if (code.trim() === '') throw new Error(vscode.l10n.t('There is no code to run.'));
  const result = await progress(
    vscode.l10n.t('Running {0} in a sandbox', runtime),
    (onProgress, signal) => services.track(services.service.run({ code, runtime }, { onProgress, signal })),
    true,
  );
  services.engine.reportSuccess();
  const name = vscode.workspace.asRelativePath(document.uri);
  services.runOutput.appendLine(`▶ ${name} (${runtime}) — ${new Date().toLocaleTimeString()}`);
  const engine = services.engine.get();
  services.runOutput.appendLine(
    services.secrets.redact(await formatExecResult(result, { engine: engineLabel(engine.kind, engine.capabilities) })),
  );
  services.runOutput.appendLine('');
  services.runOutput.show(true);
  services.log.info(
    `Ran ${name} (${runtime}): ${result.outcome}, exit code ${result.exitCode}, ${result.durationMs} ms.`,
  );
  return result;
}

function progress<T>(
  title: string,
  work: (onProgress: (p: { message: string }) => void, signal: AbortSignal) => Promise<T>,
  cancellable = false,
): Promise<T> {
  return Promise.resolve(
    vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title, cancellable },
      (report, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort(new Error('cancelled by the user')));
        return work((p) => report.report({ message: p.message }), controller.signal);
      },
    ),
  );
}

async function pickRuntime(runtimes: readonly Runtime[] = RUNTIMES): Promise<Runtime | undefined> {
  const picked = await vscode.window.showQuickPick(
    runtimes.map((runtime) => ({ label: runtime })),
    { placeHolder: vscode.l10n.t('Runtime') },
  );
  return picked?.label as Runtime | undefined;
}

async function pickAccess(current: WorkspaceAccess): Promise<WorkspaceAccess | undefined> {
  const descriptions: Record<WorkspaceAccess, string> = {
    none: vscode.l10n.t('/workspace is private to the sandbox'),
    copy: vscode.l10n.t('a private copy of the folder, made at open; the folder is not changed'),
    ro: vscode.l10n.t('the folder is mounted read-only'),
    rw: vscode.l10n.t('the folder is mounted read-write'),
  };
  const picked = await vscode.window.showQuickPick(
    WORKSPACE_ACCESS.map((access) => ({
      label: access,
      description: descriptions[access],
      picked: access === current,
    })),
    { placeHolder: vscode.l10n.t('How may sandboxes see this workspace? (now: {0})', current) },
  );
  return picked?.label as WorkspaceAccess | undefined;
}

async function pickSession(
  service: SandboxService,
  placeHolder: string,
  known?: SessionInfo[],
): Promise<SessionInfo | undefined> {
  const sessions = known ?? (await service.list());
  if (sessions.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No sandbox sessions are open.'));
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    sessions.map((session) => ({
      label: session.name ?? session.id.slice(0, 12),
      description: `${session.runtime} · ${session.image} · ${session.state}`,
      detail: vscode.l10n.t('workspace {0} · network {1}', session.workspaceAccess, session.network ? 'on' : 'off'),
      session,
    })),
    { placeHolder },
  );
  return picked?.session;
}
