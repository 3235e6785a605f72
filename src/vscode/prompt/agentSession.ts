/** "Open Sandbox Session for <agent>": a code lens on the sandbox block, and the command it runs. */
import * as vscode from 'vscode';
import { errorMessage } from '../../core/errors';
import { secretsFromFrontmatter, specFromFrontmatter } from '../../core/spec/frontmatterSpec';
import { agentName, agentScopeKey, analyzePrompt } from '../../core/prompt/analyzePrompt';
import type { SandboxService } from '../../core/sessions/sandboxService';
import { DOTPROMPT } from './promptDiagnostics';
import { RUN_AGENT, runAgent } from '../chat/runAgentCommand';

export const OPEN_AGENT_SESSION = 'agentSandbox.openAgentSession';

export interface AgentSessionServices {
  service: SandboxService;
  log: vscode.LogOutputChannel;
  track<T>(work: Promise<T>): Promise<T>;
  engine: { reportSuccess(): void; reportFailure(error: unknown): void };
}

const lenses: vscode.CodeLensProvider = {
  provideCodeLenses(document) {
    const analysis = analyzePrompt(document.getText());
    const sandbox = analysis.sandbox;
    // "Run Agent" on every trusted .prompt file, at its first line.
    const run = vscode.workspace.isTrusted
      ? [
          new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), {
            title: vscode.l10n.t('Run Agent {0}', agentName(analysis, document.uri.path)),
            command: RUN_AGENT,
            arguments: [document.uri],
          }),
        ]
      : [];
    // Station's agent-harness sandbox (mode host/docker/e2b) is run by the harness, not by us; and a file
    // of an untrusted workspace must not pick the image and packages that run.
    if (!vscode.workspace.isTrusted || !sandbox || sandbox.style === 'harness' || sandbox.style === 'invalid')
      return run;
    const name = agentName(analysis, document.uri.path);
    const where = new vscode.Range(document.positionAt(sandbox.keyStart), document.positionAt(sandbox.keyEnd));
    return [
      ...run,
      new vscode.CodeLens(where, {
        title: vscode.l10n.t('Open Sandbox Session for {0}', name),
        command: OPEN_AGENT_SESSION,
        arguments: [document.uri],
      }),
    ];
  },
};

async function openAgentSession(services: AgentSessionServices, arg: unknown) {
  const uri =
    arg instanceof vscode.Uri
      ? arg
      : vscode.window.activeTextEditor?.document.languageId === DOTPROMPT
        ? vscode.window.activeTextEditor.document.uri
        : undefined;
  if (!uri) throw new Error(vscode.l10n.t('Open a .prompt file with a sandbox block first.'));
  if (!vscode.workspace.isTrusted)
    throw new Error(
      vscode.l10n.t(
        'This workspace is not trusted: its .prompt files cannot choose what a sandbox runs. Trust the workspace first.',
      ),
    );
  const document = await vscode.workspace.openTextDocument(uri);
  const analysis = analyzePrompt(document.getText());
  const name = agentName(analysis, uri.path);
  if (!analysis.sandbox || analysis.sandbox.style === 'harness')
    throw new Error(
      vscode.l10n.t('{0} has no sandbox block that Agent Sandbox runs.', vscode.workspace.asRelativePath(uri)),
    );
  const errors = analysis.problems.filter((problem) => problem.severity === 'error');
  if (errors.length > 0) {
    const first = errors[0]!;
    throw new Error(
      vscode.l10n.t(
        'Fix the problems of {0} first (line {1}: {2}).',
        vscode.workspace.asRelativePath(uri),
        first.range.start.line + 1,
        first.message,
      ),
    );
  }
  const layer = specFromFrontmatter(analysis.sandbox.value);
  const secrets = secretsFromFrontmatter(analysis.sandbox.value);
  const scope = { kind: 'agent' as const, key: agentScopeKey(name) };
  const opened = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: vscode.l10n.t('Opening the sandbox session of {0}', name),
    },
    (progress) =>
      services.track(
        services.service.openSession(
          { scope, layer, secrets },
          { onProgress: (p) => progress.report({ message: p.message }) },
        ),
      ),
  );
  services.engine.reportSuccess();
  const info = opened.sandbox.info;
  services.log.info(
    `${opened.created ? 'Opened' : 'Reused'} the session of agent ${scope.key} from ${uri.fsPath} (${info.runtime}, ${info.image}, workspace ${info.workspaceAccess}, network ${info.network ? 'on' : 'off'}).`,
  );
  for (const notice of [...opened.notices, ...info.notices]) services.log.warn(notice);
  void vscode.window.showInformationMessage(
    opened.created
      ? vscode.l10n.t('The sandbox session of {0} is open ({1}).', name, info.image)
      : vscode.l10n.t('The sandbox session of {0} was already open.', name),
  );
  return info;
}

export function registerAgentSession(services: AgentSessionServices): vscode.Disposable[] {
  return [
    vscode.languages.registerCodeLensProvider({ language: DOTPROMPT }, lenses),
    vscode.commands.registerCommand(RUN_AGENT, async (arg?: unknown) => {
      try {
        await runAgent(arg);
      } catch (error) {
        services.log.error(`runAgent: ${errorMessage(error)}`);
        void vscode.window.showErrorMessage(errorMessage(error).split('\n')[0]!);
      }
    }),
    vscode.commands.registerCommand(OPEN_AGENT_SESSION, async (arg?: unknown) => {
      try {
        return await openAgentSession(services, arg);
      } catch (error) {
        services.engine.reportFailure(error);
        services.log.error(`openAgentSession: ${errorMessage(error)}`);
        void vscode.window.showErrorMessage(errorMessage(error).split('\n')[0]!);
        return undefined;
      }
    }),
  ];
}
