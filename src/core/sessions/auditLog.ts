/**
 * The audit log of a workspace folder, as JSON Lines: every tool call kept in the folder's activity
 * file (from VS Code, `agent-sandbox tool` and `agent-sandbox mcp`) and every network decision of
 * the folder's allowlist sandboxes that are still there (with what became of bound secrets in each), oldest first. `agent-sandbox log` prints it;
 * the panel exports it.
 */
import type { SandboxEngine } from '../engine/engine';
import { MAX_DECISIONS } from '../network/decisionLog';
import { ActivityFile } from './activityFile';
import { sandboxIdOf } from './sessions';

export type AuditRecord =
  | ({ kind: 'tool' } & ReturnType<ActivityFile['read']>[number])
  | {
      kind: 'network';
      at: string;
      sandboxId: string;
      host: string;
      port: number;
      allowed: boolean;
      rule?: string;
      reason?: string;
      bytesSent: number;
      bytesReceived: number;
      /** What became of the bound secrets' placeholders in it ("TOKEN added for api.example.com"), never a value. */
      secrets?: string[];
    };

/** `redact`: the exporting process's secrets' redactor, over every text of every record (the file was redacted by whoever wrote it). */
export async function auditLog(
  folder: string,
  engine: SandboxEngine,
  signal?: AbortSignal,
  redact: (text: string) => string = (text) => text,
): Promise<AuditRecord[]> {
  const records = await collect(folder, engine, signal);
  return records.map(
    (record) =>
      Object.fromEntries(
        Object.entries(record).map(([key, value]) => [
          key,
          typeof value === 'string'
            ? redact(value)
            : Array.isArray(value)
              ? value.map((item: unknown) => (typeof item === 'string' ? redact(item) : item))
              : value,
        ]),
      ) as AuditRecord,
  );
}

async function collect(folder: string, engine: SandboxEngine, signal?: AbortSignal): Promise<AuditRecord[]> {
  const records: AuditRecord[] = new ActivityFile(folder, '').read().map((entry) => ({ kind: 'tool', ...entry }));
  if (engine.networkDecisions) {
    const sessions = await engine.list({ workspaceFolder: folder }, signal).catch(() => []);
    for (const session of sessions) {
      if (!session.spec.networkAllow.length || session.network) continue;
      const page = await engine.networkDecisions(session.id, { max: MAX_DECISIONS }).catch(() => undefined);
      for (const decision of page?.decisions ?? [])
        records.push({
          kind: 'network',
          at: decision.at,
          sandboxId: sandboxIdOf(session),
          host: decision.host,
          port: decision.port,
          allowed: decision.allowed,
          ...(decision.rule !== undefined ? { rule: decision.rule } : {}),
          ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
          bytesSent: decision.bytesSent,
          bytesReceived: decision.bytesReceived,
          ...(decision.secrets?.length ? { secrets: [...decision.secrets] } : {}),
        });
    }
  }
  return records.sort((a, b) => a.at.localeCompare(b.at));
}

/** One JSON object per line, ending with a newline (nothing for no records). */
export function jsonLines(records: readonly AuditRecord[]): string {
  return records.map((record) => `${JSON.stringify(record)}\n`).join('');
}
