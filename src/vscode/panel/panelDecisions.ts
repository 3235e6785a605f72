/**
 * The panel's view of the network: the decisions of allowlist sessions since it last looked, shown
 * as Activity entries (each sandbox's proxy keeps the decisions; this only shows them), with what
 * happened to bound secrets in each, counted per session for its card.
 */
import type { SandboxEngine, SessionInfo } from '../../core/engine/engine';
import { MAX_DECISIONS, type LoggedDecision } from '../../core/network/decisionLog';
import { sandboxIdOf } from '../../core/sessions/sessions';
import type { ActivityView } from '../../shared/protocol';
import { SecretCounts, boundNames, notesSuffix, type SecretUse } from './panelSecrets';

/** The panel shows this many of a session's newest decisions on its first look, and this many after (it counts them all). */
const FIRST_SHOWN = 20;
const LATER_SHOWN = 200;

export class PanelDecisions {
  /** Container id → the newest decision read. */
  private readonly cursors = new Map<string, number>();
  /** A look is under way (looks overlap: each would show the same decisions). */
  private following = false;
  /** The newest decisions shown, for a panel that (re)loads its whole state. */
  private readonly shown: ActivityView[] = [];
  /** Each session's bound secrets: how often added, how often not replaced. */
  private readonly secretCounts = new SecretCounts();

  /** The decisions shown so far (the newest KEPT), oldest first. */
  recent(): ActivityView[] {
    return [...this.shown];
  }

  /** A session's bound secrets' use, as counted from the decisions read so far. */
  secretUse(containerId: string): ReadonlyMap<string, SecretUse> {
    return this.secretCounts.of(containerId);
  }

  constructor(
    private readonly show: (entry: ActivityView) => void,
    /** The secrets' redactor: a name the sandbox looked up may hold a value. */
    private readonly redact: (text: string) => string = (text) => text,
    /** Told when a look changed a session's secret counts (its card shows them). */
    private readonly countsChanged: () => void = () => {},
  ) {}

  async follow(engine: SandboxEngine, sessions: readonly SessionInfo[]): Promise<void> {
    if (!engine.networkDecisions || this.following) return;
    this.following = true;
    let counted = false;
    try {
      this.secretCounts.keepOnly(sessions.map((session) => session.id));
      for (const session of sessions) {
        if (session.network || !session.spec.networkAllow.length) continue;
        const after = this.cursors.get(session.id);
        // Every kept decision is read (the counts cover them), the first look shows only the newest.
        const page = await engine
          .networkDecisions(session.id, after === undefined ? { max: MAX_DECISIONS } : { after, max: MAX_DECISIONS })
          .catch(() => undefined);
        if (!page) continue;
        this.cursors.set(session.id, page.cursor);
        const names = boundNames(session.spec);
        page.decisions.forEach((decision, index) => {
          if (this.secretCounts.count(session.id, names, decision)) counted = true;
          if (index < page.decisions.length - (after === undefined ? FIRST_SHOWN : LATER_SHOWN)) return;
          this.keep(activityOf(decision, sandboxIdOf(session)));
        });
      }
    } finally {
      this.following = false;
    }
    if (counted) this.countsChanged();
  }

  private keep(found: ActivityView): void {
    const entry = { ...found, summary: this.redact(found.summary) };
    this.shown.push(entry);
    if (this.shown.length > KEPT) this.shown.shift();
    this.show(entry);
  }
}

const KEPT = 100;

/** A decision as an Activity entry: where, allowed or refused, and what happened to bound secrets. */
export function activityOf(decision: LoggedDecision, sandboxId: string): ActivityView {
  return {
    tool: 'network',
    summary: `${decision.host}:${decision.port} ${
      decision.allowed
        ? `allowed (${decision.rule ?? 'allowlist'}), ${decision.bytesSent} B out, ${decision.bytesReceived} B in`
        : `refused: ${decision.reason ?? 'not on the allowlist'}`
    }${notesSuffix(decision.host, decision.secrets)}`,
    exitCode: null,
    ok: decision.allowed,
    durationMs: 0,
    at: decision.at,
    sandboxId,
  };
}
