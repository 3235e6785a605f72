/**
 * The panel's view of the network: the decisions of allowlist sessions since it last looked, shown
 * as Activity entries (each sandbox's proxy keeps the decisions; this only shows them), and the
 * export of the folder's audit log.
 */
import * as vscode from 'vscode';
import type { SandboxEngine, SessionInfo } from '../../core/engine/engine';
import { auditLog, jsonLines } from '../../core/sessions/auditLog';
import { sandboxIdOf } from '../../core/sessions/sessions';
import type { ActivityView } from '../../shared/protocol';

export class PanelDecisions {
  /** Container id → the newest decision shown. */
  private readonly cursors = new Map<string, number>();
  /** A look is under way (looks overlap: each would show the same decisions). */
  private following = false;
  /** The newest decisions shown, for a panel that (re)loads its whole state. */
  private readonly shown: ActivityView[] = [];

  /** The decisions shown so far (the newest KEPT), oldest first. */
  recent(): ActivityView[] {
    return [...this.shown];
  }

  constructor(
    private readonly show: (entry: ActivityView) => void,
    /** The secrets' redactor: a name the sandbox looked up may hold a value. */
    private readonly redact: (text: string) => string = (text) => text,
  ) {}

  async follow(engine: SandboxEngine, sessions: readonly SessionInfo[]): Promise<void> {
    if (!engine.networkDecisions || this.following) return;
    this.following = true;
    try {
      for (const session of sessions) {
        if (session.network || !session.spec.networkAllow.length) continue;
        const after = this.cursors.get(session.id);
        const page = await engine
          .networkDecisions(session.id, after === undefined ? { max: 20 } : { after, max: 200 })
          .catch(() => undefined);
        if (!page) continue;
        this.cursors.set(session.id, page.cursor);
        for (const decision of page.decisions)
          this.keep({
            tool: 'network',
            summary: `${decision.host}:${decision.port} ${
              decision.allowed
                ? `allowed (${decision.rule ?? 'allowlist'}), ${decision.bytesSent} B out, ${decision.bytesReceived} B in`
                : `refused: ${decision.reason ?? 'not on the allowlist'}`
            }`,
            exitCode: null,
            ok: decision.allowed,
            durationMs: 0,
            at: decision.at,
            sandboxId: sandboxIdOf(session),
          });
      }
    } finally {
      this.following = false;
    }
  }

  private keep(found: ActivityView): void {
    const entry = { ...found, summary: this.redact(found.summary) };
    this.shown.push(entry);
    if (this.shown.length > KEPT) this.shown.shift();
    this.show(entry);
  }
}

const KEPT = 100;

/** Saves the folder's audit log (tool calls and network decisions) where the user picks, as JSON Lines. */
export async function exportAuditLog(
  folder: string | undefined,
  engine: SandboxEngine,
  redact: (text: string) => string,
): Promise<string | undefined> {
  if (!folder) return vscode.l10n.t('Open a folder first: the audit log is kept per workspace folder.');
  const target = await vscode.window.showSaveDialog({
    defaultUri: vscode.Uri.file(`${folder}/agent-sandbox-log-${new Date().toISOString().slice(0, 10)}.jsonl`),
    filters: { 'JSON Lines': ['jsonl'] },
    title: vscode.l10n.t('Export the Agent Sandbox audit log'),
  });
  if (!target) return undefined;
  const records = await auditLog(folder, engine, undefined, redact);
  await vscode.workspace.fs.writeFile(target, Buffer.from(jsonLines(records)));
  return vscode.l10n.t('Exported {0} records to {1}.', records.length, target.fsPath);
}
