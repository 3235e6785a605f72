/**
 * The network decisions of a virtual sandbox, kept in this process's memory as long as the engine
 * (its sandboxes live no longer): numbered from 1, the newest MAX_DECISIONS kept, read with the
 * same queries and pages as the Docker engine's decision log (core/network/decisionLog.ts).
 */
import {
  DEFAULT_MAX_DECISIONS,
  MAX_DECISIONS,
  loggedDecision,
  type DecisionQuery,
  type LoggedDecision,
  type NetworkDecisionPage,
} from '../../core/network/decisionLog';
import type { NetworkDecision } from '../../core/network/egressProxy';

export class DecisionMemory {
  private readonly kept: LoggedDecision[] = [];
  private seq = 0;

  constructor(private readonly most = MAX_DECISIONS) {}

  append(decision: NetworkDecision): LoggedDecision {
    const logged = loggedDecision(++this.seq, decision);
    this.kept.push(logged);
    if (this.kept.length > this.most) this.kept.splice(0, this.kept.length - this.most);
    return logged;
  }

  /** The newest `max` decisions after `after` (all kept ones when not given), oldest first. */
  read(query: DecisionQuery = {}): NetworkDecisionPage {
    const after = query.after ?? 0;
    const max = Math.max(1, Math.min(MAX_DECISIONS, query.max ?? DEFAULT_MAX_DECISIONS));
    const newer = this.kept.filter((entry) => entry.seq > after);
    const firstKept = newer[0]?.seq;
    return {
      decisions: newer.slice(-max).map((entry) => ({ ...entry })),
      cursor: this.seq,
      truncated: newer.length > max || (firstKept !== undefined && firstKept > after + 1),
    };
  }
}
