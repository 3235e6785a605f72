/**
 * The commands of the copy review: open a change (diff, or merge for a conflict), apply, discard,
 * mark a merged conflict resolved, refresh. Each takes the Source Control rows or group it was
 * invoked on, or `{ sessionId | sandboxId, paths?, confirmed? }` (the panel, a keybinding).
 */
import { copyFileLimit } from '../../core/files/sandboxFileBytes';
import * as vscode from 'vscode';
import { discardCopyChanges } from '../../core/files/copyDiscard';
import { keepBaseObject, baseObject } from '../../core/files/copyObjects';
import { readHostFile } from '../../core/files/hostFiles/readHostFile';
import { errorMessage } from '../../core/errors';
import type { SessionInfo } from '../../core/engine/engine';
import { applyInWorkspace, type AppliedReport } from './applyInWorkspace';
import type { CopyReviewModel, ReviewChange, SessionChanges } from './copyReviewModel';
import { diffTitle, type ChangeRow, type CopyReviewView, type SessionGroup } from './copyReviewView';
import { copyUri } from './sandboxFileSystem';

export interface CopyCommandDeps {
  model: CopyReviewModel;
  view: CopyReviewView;
  stateDir: string;
  /** This folder's sessions, from the engine. */
  list(): Promise<SessionInfo[]>;
  log: vscode.LogOutputChannel;
}

interface Target {
  session: SessionChanges;
  /** The session's changes as the user saw them before this command (the rows it was invoked on, or the view). */
  seen: readonly ReviewChange[];
  /** The changes chosen; every change of the session when the whole group was. */
  changes: ReviewChange[];
  whole: boolean;
}

interface Request {
  sessionId?: string;
  sandboxId?: string;
  paths?: string[];
  confirmed?: boolean;
}

function isRow(value: unknown): value is ChangeRow {
  return typeof value === 'object' && value !== null && 'change' in value && 'sessionId' in value;
}

function isGroup(value: unknown): value is SessionGroup {
  return typeof value === 'object' && value !== null && 'resourceStates' in value && 'sessionId' in value;
}

/** The sessions and changes the arguments name, from the latest listing. */
async function targetsOf(model: CopyReviewModel, args: unknown[]): Promise<{ targets: Target[]; confirmed: boolean }> {
  // What the view showed, before the listing is taken again: apply holds back what differs from it.
  const before = new Map(model.sessions().map((session) => [session.id, session.changes]));
  const rows = args.flat().filter(isRow);
  await model.refresh();
  const targets = new Map<string, Target>();
  let confirmed = false;
  const add = (sessionId: string, paths: string[] | undefined) => {
    const session = model.session(sessionId);
    if (!session) throw new Error(vscode.l10n.t('No copy session {0} is open in this folder.', sessionId));
    const seenRows = rows.filter((row) => row.sessionId === session.id).map((row) => row.change);
    const seen = [
      ...seenRows,
      ...(before.get(session.id) ?? session.changes).filter(
        (change) => !seenRows.some((row) => row.path === change.path),
      ),
    ];
    const target = targets.get(session.id) ?? { session, seen, changes: [], whole: false };
    targets.set(session.id, target);
    if (!paths) {
      target.whole = true;
      target.changes = [...session.changes];
      return;
    }
    for (const path of paths) {
      const change = session.changes.find((candidate) => candidate.path === path);
      if (!change) throw new Error(vscode.l10n.t('Session {0} has no change at {1}.', session.name, path));
      if (!target.changes.includes(change)) target.changes.push(change);
    }
  };
  for (const arg of args.flat()) {
    if (isRow(arg)) add(arg.sessionId, [arg.change.path]);
    else if (isGroup(arg)) add(arg.sessionId!, undefined);
    else if (typeof arg === 'object' && arg !== null) {
      const request = arg as Request;
      const id = request.sessionId ?? request.sandboxId;
      if (id) add(id, request.paths);
      confirmed ||= request.confirmed === true;
    }
  }
  if (!targets.size) {
    const sessions = model.sessions().filter((session) => session.changes.length);
    if (sessions.length === 1) add(sessions[0]!.id, undefined);
    else if (!sessions.length) throw new Error(vscode.l10n.t('No copy session has changes to review.'));
    else throw new Error(vscode.l10n.t('Choose a session in Source Control › Sandbox changes.'));
  }
  return { targets: [...targets.values()], confirmed };
}

function list(paths: readonly string[], max = 5): string {
  return paths.length > max ? `${paths.slice(0, max).join(', ')} (+${paths.length - max})` : paths.join(', ');
}

export function registerCopyCommands(deps: CopyCommandDeps): vscode.Disposable[] {
  const { model, view, stateDir, log } = deps;
  const guarded =
    (name: string, run: (...args: unknown[]) => Promise<unknown>) =>
    async (...args: unknown[]) => {
      try {
        return await run(...args);
      } catch (error) {
        log.error(`${name}: ${errorMessage(error)}`);
        void vscode.window.showErrorMessage(errorMessage(error).split('\n')[0]!);
        return undefined;
      }
    };

  const apply = async (...args: unknown[]): Promise<AppliedReport[]> => {
    const { targets, confirmed } = await targetsOf(model, args);
    const reports: AppliedReport[] = [];
    for (const target of targets) {
      const held = target.changes.filter((change) => change.held && change.held !== 'a link' && !change.conflict);
      let includeProtected = confirmed;
      if (held.length && !confirmed) {
        const all = vscode.l10n.t('Apply Them Too');
        const without = vscode.l10n.t('Apply the Others');
        const others = target.changes.length > held.length;
        const choice = await vscode.window.showWarningMessage(
          vscode.l10n.t(
            '{0} of these changes need your own confirmation: {1}. Editor and version-control configuration and executable files can run code on this machine.',
            held.length,
            held.map((change) => `${change.path} (${change.held})`).join(', '),
          ),
          { modal: true },
          ...(others ? [all, without] : [all]),
        );
        if (choice === undefined) continue;
        includeProtected = choice === all;
      }
      const { sandbox, baseline } = await model.open(target.session.id);
      const sessions = await deps.list();
      const confinedOnly = sessions.some((session) => session.workspaceAccess === 'rw' && session.state !== 'stopped');
      const report = await applyInWorkspace({
        sandbox,
        baseline,
        paths: target.whole ? undefined : target.changes.map((change) => change.path),
        includeProtected,
        reviewed: model.reviewed(target.session.id, target.seen),
        confinedOnly,
        stateDir,
      });
      reports.push(report);
      model.appliedUndoably(target.session.id, report.undoable);
      const parts = [
        vscode.l10n.t(
          'Applied {0} of {1} change(s) from session {2}.',
          report.applied.length,
          target.changes.length,
          target.session.name,
        ),
      ];
      if (report.undoable.length)
        parts.push(vscode.l10n.t('Edit › Undo in one of the files takes them back as one step.'));
      if (confinedOnly && report.applied.length)
        parts.push(
          vscode.l10n.t('A read-write sandbox of this folder is running, so they were written directly (no undo).'),
        );
      if (report.plan.conflicts.length)
        parts.push(vscode.l10n.t('Conflicts, left as they are: {0}. Open each to merge.', list(report.plan.conflicts)));
      if (report.plan.heldBack.length)
        parts.push(
          vscode.l10n.t('Held back: {0}.', list(report.plan.heldBack.map((item) => `${item.path} (${item.why})`))),
        );
      if (report.failed.length)
        parts.push(vscode.l10n.t('Not applied: {0}.', list(report.failed.map((item) => `${item.path} (${item.why})`))));
      log.info(parts.join(' '));
      const problem = report.plan.conflicts.length || report.plan.heldBack.length || report.failed.length;
      void (problem
        ? vscode.window.showWarningMessage(parts.join(' '))
        : vscode.window.showInformationMessage(parts.join(' ')));
    }
    await model.refresh();
    return reports;
  };

  const discard = async (...args: unknown[]) => {
    const { targets, confirmed } = await targetsOf(model, args);
    const outcomes = [];
    for (const target of targets) {
      if (!target.changes.length) continue;
      if (!confirmed) {
        const button = vscode.l10n.t('Discard Changes');
        const choice = await vscode.window.showWarningMessage(
          vscode.l10n.t(
            'Discard {0} change(s) of session {1}: {2}? The sandbox gets the folder’s version back; this cannot be undone.',
            target.changes.length,
            target.session.name,
            list(target.changes.map((change) => change.path)),
          ),
          { modal: true },
          button,
        );
        if (choice !== button) continue;
      }
      const { sandbox, baseline } = await model.open(target.session.id);
      const outcome = await discardCopyChanges(sandbox, baseline, {
        paths: target.whole ? undefined : target.changes.map((change) => change.path),
        maxBytes: copyFileLimit(sandbox),
        stateDir,
      });
      log.info(`Discarded ${outcome.discarded.length} change(s) of session ${target.session.sandboxId}.`);
      if (outcome.kept.length)
        void vscode.window.showWarningMessage(
          vscode.l10n.t('Kept: {0}.', list(outcome.kept.map((item) => `${item.path} (${item.why})`))),
        );
      outcomes.push(outcome);
    }
    await model.refresh();
    return outcomes;
  };

  const openChange = async (arg: unknown) => {
    const request = (isRow(arg) ? { sessionId: arg.sessionId, path: arg.change.path } : arg) as {
      sessionId: string;
      path: string;
    };
    const session = model.session(request.sessionId);
    const change = session?.changes.find((candidate) => candidate.path === request.path);
    if (!session || !change) throw new Error(vscode.l10n.t('That change is no longer there.'));
    const host = view.hostUri(change.path)!;
    const sandboxSide =
      change.change === 'deleted' ? copyUri(session.id, change.path, 'empty') : copyUri(session.id, change.path);
    if (change.conflict && change.change === 'modified') {
      const { baseline } = await model.open(session.id);
      const base = baseline.files[change.path]?.sha256;
      if (base && (await baseObject(stateDir, session.id, base))) {
        await vscode.commands.executeCommand('_open.mergeEditor', {
          base: copyUri(session.id, change.path, { base }),
          input1: { uri: copyUri(session.id, change.path, 'host'), title: vscode.l10n.t('Folder') },
          input2: { uri: sandboxSide, title: vscode.l10n.t('Sandbox {0}', session.name) },
          output: host,
        });
        return 'merge';
      }
    }
    const folderSide = change.change === 'added' ? copyUri(session.id, change.path, 'empty') : host;
    await vscode.commands.executeCommand(
      'vscode.diff',
      folderSide,
      sandboxSide,
      diffTitle(change.path, session.name, change.conflict),
      {
        preview: true,
      },
    );
    return 'diff';
  };

  /** A merged conflict: the folder's file (the merge's result) goes into the sandbox and becomes the base. */
  const resolved = async (...args: unknown[]) => {
    const { targets } = await targetsOf(model, args);
    for (const target of targets) {
      const { sandbox, baseline } = await model.open(target.session.id);
      const maxBytes = copyFileLimit(sandbox);
      for (const change of target.changes) {
        const merged = await readHostFile(baseline.folder, change.path, maxBytes).catch(() => undefined);
        if (merged) await keepBaseObject(stateDir, target.session.id, merged);
      }
      await discardCopyChanges(sandbox, baseline, {
        paths: target.changes.map((change) => change.path),
        maxBytes,
        stateDir,
      });
    }
    await model.refresh();
  };

  return [
    vscode.commands.registerCommand('agentSandbox.copy.openChange', guarded('openChange', openChange)),
    vscode.commands.registerCommand('agentSandbox.copy.apply', guarded('apply', apply)),
    vscode.commands.registerCommand('agentSandbox.copy.applyAll', guarded('applyAll', apply)),
    vscode.commands.registerCommand('agentSandbox.copy.discard', guarded('discard', discard)),
    vscode.commands.registerCommand('agentSandbox.copy.discardAll', guarded('discardAll', discard)),
    vscode.commands.registerCommand('agentSandbox.copy.markResolved', guarded('markResolved', resolved)),
    vscode.commands.registerCommand(
      'agentSandbox.copy.refresh',
      guarded('refresh', () => model.refresh()),
    ),
    vscode.commands.registerCommand('agentSandbox.copy.changes', () =>
      model.sessions().map((session) => ({ ...session, changes: session.changes.map((change) => ({ ...change })) })),
    ),
  ];
}
