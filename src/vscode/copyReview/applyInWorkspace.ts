/**
 * Applying a copy session's changes from VS Code. What may be applied is decided by the core
 * (planApply: protected paths and new executable bits held back, conflicts never overwritten). Then,
 * when no read-write sandbox can touch the folder meanwhile, the changes go in as one workspace edit,
 * which VS Code can undo as one step: text files by their text, added files created, deleted files
 * deleted. Anything a workspace edit cannot carry exactly (binary or CRLF text, a file whose mode
 * matters, a file open with unsaved edits) and everything while a read-write sandbox runs goes through
 * the confined host-write path instead. Each file is read back through the confined read afterwards:
 * only what landed exactly is recorded as applied.
 */
import { copyFileLimit } from '../../core/files/sandboxFileBytes';
import * as vscode from 'vscode';
import type { Sandbox } from '../../core/engine/engine';
import {
  hostState,
  planApply,
  recordApplied,
  writeReadyChange,
  type ApplyPlan,
  type ReadyChange,
} from '../../core/files/copyApply';
import { isText } from '../../core/files/unifiedDiff';
import { saveBaseline, type BaselineEntry, type CopyBaseline } from '../../core/files/folderCopy';

export interface ApplyRequest {
  sandbox: Sandbox;
  baseline: CopyBaseline;
  /** Paths to apply; every change when empty. */
  paths?: readonly string[];
  /** The user confirmed the held-back changes too. */
  includeProtected: boolean;
  /** What the user reviewed (see planApply). */
  reviewed: ReadonlyMap<string, string | null>;
  /** A read-write sandbox of this folder runs: no workspace edit (it writes through links the sandbox may plant). */
  confinedOnly: boolean;
  stateDir: string;
}

/** A change applied by a workspace edit: when VS Code's undo puts the folder's file back, the change is pending again. */
export interface UndoableApply {
  path: string;
  /** The baseline's entry before the apply (none for an added file). */
  before?: BaselineEntry;
}

export interface AppliedReport {
  plan: ApplyPlan;
  /** Applied and checked. */
  applied: string[];
  /** Applied as one workspace edit (undoable): each with what the baseline had before. */
  undoable: UndoableApply[];
  /** Could not be applied, each with why. */
  failed: { path: string; why: string }[];
}

const PLAIN_MODE = 0o644;

/** Whether a workspace edit writes these bytes exactly: UTF-8 text without CR or BOM, a plain mode. */
function editable(ready: ReadyChange, hostText: string | undefined): boolean {
  if (ready.change.change === 'deleted') return true;
  const data = ready.data!;
  if ((ready.mode ?? PLAIN_MODE) & 0o111) return false;
  if (!isText(data) || data.includes(0x0d) || (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf)) return false;
  if (ready.change.change === 'added') return true;
  return hostText !== undefined && !hostText.includes('\r') && !hostText.startsWith('\ufeff');
}

export async function applyInWorkspace(request: ApplyRequest, signal?: AbortSignal): Promise<AppliedReport> {
  const { sandbox, baseline } = request;
  const maxBytes = copyFileLimit(sandbox);
  const plan = await planApply(sandbox, baseline, {
    paths: request.paths,
    includeProtected: request.includeProtected,
    reviewed: request.reviewed,
    maxBytes,
    signal,
  });
  const report: AppliedReport = { plan, applied: [], undoable: [], failed: [] };
  const folder = baseline.folder;
  const uriOf = (path: string) => vscode.Uri.joinPath(vscode.Uri.file(folder), ...path.split('/'));
  const edit = new vscode.WorkspaceEdit();
  const viaEdit: ReadyChange[] = [];
  const confined: ReadyChange[] = [];
  const documents: vscode.TextDocument[] = [];
  for (const ready of plan.ready) {
    let hostText: string | undefined;
    let document: vscode.TextDocument | undefined;
    if (!request.confinedOnly && ready.change.change === 'modified') {
      document = vscode.workspace.textDocuments.find(
        (doc) => doc.uri.toString() === uriOf(ready.change.path).toString(),
      );
      if (document?.isDirty) {
        report.failed.push({ path: ready.change.path, why: vscode.l10n.t('it has unsaved changes in an editor') });
        continue;
      }
      try {
        document = await vscode.workspace.openTextDocument(uriOf(ready.change.path));
        hostText = document.getText();
      } catch {
        hostText = undefined;
      }
    }
    if (request.confinedOnly || !editable(ready, hostText)) {
      confined.push(ready);
      continue;
    }
    const uri = uriOf(ready.change.path);
    if (ready.change.change === 'added') edit.createFile(uri, { contents: ready.data, overwrite: false });
    else if (ready.change.change === 'deleted') edit.deleteFile(uri, { ignoreIfNotExists: false });
    else {
      const whole = new vscode.Range(0, 0, document!.lineCount, 0);
      edit.replace(uri, whole, Buffer.from(ready.data!).toString('utf8'));
      documents.push(document!);
    }
    viaEdit.push(ready);
  }
  if (viaEdit.length) {
    const ok = await vscode.workspace.applyEdit(edit, { isRefactoring: false });
    if (!ok) {
      for (const ready of viaEdit)
        report.failed.push({ path: ready.change.path, why: vscode.l10n.t('VS Code did not apply the edit') });
    } else {
      for (const document of documents) await document.save();
      for (const ready of viaEdit) {
        // Read back through the confined read: only exactly what the sandbox had counts as applied.
        const now = await hostState(folder, ready.change.path, maxBytes);
        const wanted = ready.change.change === 'deleted' ? undefined : ready.sha256;
        if (now !== wanted) {
          report.failed.push({
            path: ready.change.path,
            why: vscode.l10n.t('the file in the folder is not what was applied'),
          });
          continue;
        }
        const before = baseline.files[ready.change.path];
        recordApplied(baseline, ready);
        report.applied.push(ready.change.path);
        report.undoable.push({ path: ready.change.path, ...(before ? { before: { ...before } } : {}) });
      }
    }
  }
  for (const ready of confined) {
    try {
      await writeReadyChange(folder, ready, request.includeProtected);
      recordApplied(baseline, ready);
      report.applied.push(ready.change.path);
    } catch (error) {
      report.failed.push({ path: ready.change.path, why: (error as Error).message.split('\n')[0]! });
    }
  }
  if (report.applied.length) await saveBaseline(request.stateDir, sandbox.info.id, baseline);
  return report;
}
