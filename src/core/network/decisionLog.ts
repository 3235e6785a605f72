/**
 * Where an allowlist sandbox's network decisions are kept: one JSON line per decision, numbered, in
 * the sandbox's own folder of the host's state folder (egressProcesses.ts), written by its proxy
 * process and read by any Agent Sandbox process (the panel, the tools, `agent-sandbox`). Bounded
 * both ways: the file is rotated once past a size (one older generation kept), and a read takes
 * only the end of it.
 */
import { closeSync, openSync, readSync, renameSync, statSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { NetworkDecision } from './egressProxy';

export const DECISIONS_FILE = 'decisions.jsonl';
const OLDER_FILE = 'decisions.1.jsonl';
/** Past this, the file becomes the older generation and a new one starts. */
const ROTATE_AT_BYTES = 1024 * 1024;
/** Most of each file a read looks at: its end. */
const READ_TAIL_BYTES = 256 * 1024;
/** A requested name longer than any DNS name is kept cut: the sandbox chooses it. */
const MAX_HOST_CHARS = 300;
export const DEFAULT_MAX_DECISIONS = 200;
export const MAX_DECISIONS = 2000;

const loggedDecisionSchema = z.object({
  seq: z.number().int().positive(),
  at: z.string(),
  host: z.string(),
  port: z.number().int(),
  allowed: z.boolean(),
  rule: z.string().optional(),
  reason: z.string().optional(),
  address: z.string().optional(),
  bytesSent: z.number().int().nonnegative(),
  bytesReceived: z.number().int().nonnegative(),
  secrets: z.array(z.string()).optional(),
});

/** A decision as kept: numbered from 1 in the order the connections ended (refusals at once). */
export type LoggedDecision = z.output<typeof loggedDecisionSchema>;

/** What a read returns: the newest decisions after a point, oldest first. */
export interface NetworkDecisionPage {
  decisions: LoggedDecision[];
  /** The number of the newest decision kept (0 when none): pass it as `after` to get only later ones. */
  cursor: number;
  /** Some decisions after `after` are not in the page (more than `max`, or rotated away). */
  truncated: boolean;
}

/** Which decisions to read: those after a cursor (all kept when not given), at most `max` of the newest. */
export interface DecisionQuery {
  after?: number;
  max?: number;
  /**
   * A call's start (ms since the epoch): first wait, a moment at most, for the connections begun
   * since then to end and be logged (underWay.ts), so that the page has the call's own decisions.
   */
  since?: number;
}

/** A decision as kept, numbered: what the sandbox chose (the name, the reason's text) kept short. */
export function loggedDecision(seq: number, decision: NetworkDecision): LoggedDecision {
  return {
    seq,
    at: decision.at,
    host: decision.host.length > MAX_HOST_CHARS ? `${decision.host.slice(0, MAX_HOST_CHARS)}…` : decision.host,
    port: decision.port,
    allowed: decision.allowed,
    ...(decision.rule !== undefined ? { rule: decision.rule } : {}),
    ...(decision.reason !== undefined ? { reason: decision.reason.slice(0, 2 * MAX_HOST_CHARS) } : {}),
    ...(decision.address !== undefined ? { address: decision.address } : {}),
    bytesSent: decision.bytesSent,
    bytesReceived: decision.bytesReceived,
    ...(decision.secrets?.length ? { secrets: decision.secrets.slice(0, 20).map((note) => note.slice(0, 400)) } : {}),
  };
}

/** Appends decisions to a sandbox's log; one writer per folder (its proxy process). */
export class DecisionLog {
  private seq: number;

  constructor(private readonly dir: string) {
    this.seq = readDecisions(dir, { max: 1 }).cursor;
  }

  append(decision: NetworkDecision): LoggedDecision {
    const logged = loggedDecision(++this.seq, decision);
    const file = join(this.dir, DECISIONS_FILE);
    try {
      if (statSync(file).size >= ROTATE_AT_BYTES) renameSync(file, join(this.dir, OLDER_FILE));
    } catch {
      // No file yet.
    }
    appendFileSync(file, `${JSON.stringify(logged)}\n`, { mode: 0o600 });
    return logged;
  }
}

/** The newest `max` decisions after `after` (all kept ones when not given), oldest first. */
export function readDecisions(dir: string, options: DecisionQuery = {}): NetworkDecisionPage {
  const after = options.after ?? 0;
  const max = Math.max(1, Math.min(MAX_DECISIONS, options.max ?? DEFAULT_MAX_DECISIONS));
  const current = tailDecisions(join(dir, DECISIONS_FILE));
  let decisions = current.decisions;
  // The older generation only when the current one was read whole and does not reach back far enough.
  const oldestKept = decisions[0]?.seq;
  if (current.whole && decisions.length < max && (oldestKept === undefined || oldestKept > after + 1))
    decisions = [
      ...tailDecisions(join(dir, OLDER_FILE)).decisions.filter((entry) => entry.seq < (oldestKept ?? Infinity)),
      ...decisions,
    ];
  const cursor = decisions.at(-1)?.seq ?? 0;
  const newer = decisions.filter((entry) => entry.seq > after);
  const firstKept = newer[0]?.seq;
  const truncated = newer.length > max || (firstKept !== undefined && firstKept > after + 1);
  return { decisions: newer.slice(-max), cursor, truncated };
}

/**
 * The whole lines at the end of a file (at most READ_TAIL_BYTES), parsed, and whether that was the
 * whole file; lines that do not parse are left out.
 */
function tailDecisions(file: string): { decisions: LoggedDecision[]; whole: boolean } {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return { decisions: [], whole: true };
  }
  try {
    const size = statSync(file).size;
    const start = Math.max(0, size - READ_TAIL_BYTES);
    const buffer = Buffer.alloc(size - start);
    const read = readSync(fd, buffer, 0, buffer.length, start);
    let text = buffer.subarray(0, read).toString('utf8');
    if (start > 0) text = text.slice(text.indexOf('\n') + 1); // the first line is cut
    const decisions: LoggedDecision[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const parsed = loggedDecisionSchema.safeParse(JSON.parse(line));
        if (parsed.success) decisions.push(parsed.data);
      } catch {
        // A line cut by a crash mid-write.
      }
    }
    return { decisions, whole: start === 0 };
  } finally {
    closeSync(fd);
  }
}
