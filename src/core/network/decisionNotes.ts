/**
 * What a call's network decisions tell the model, in one or two lines of the result: which names
 * it reached, and which it was refused and why, so that the agent asks the user to add a name
 * instead of retrying it.
 */
import type { Sandbox } from '../engine/engine';
import type { LoggedDecision } from './decisionLog';

/** Names shown per line at most; the rest are counted. */
const MOST_NAMES = 8;

/** Where a sandbox's decisions stood when a call began, and when that was. */
export interface DecisionsCursor {
  after: number;
  since: number;
}

/** The sandbox's decisions cursor before a call: undefined when it keeps none (no allowlist, or an engine without them). */
export async function decisionsCursor(sandbox: Sandbox): Promise<DecisionsCursor | undefined> {
  if (!sandbox.networkDecisions || !sandbox.info.spec.networkAllow.length || sandbox.info.spec.network)
    return undefined;
  const since = Date.now();
  const after = (await sandbox.networkDecisions({ max: 1 }).catch(() => undefined))?.cursor;
  return after === undefined ? undefined : { after, since };
}

/**
 * The lines about the decisions made since `cursor` (none when there were none). A connection is
 * logged when it ends, which may come just after the call's program ended: the read waits a moment
 * for the connections begun during the call.
 */
export async function decisionNotes(sandbox: Sandbox, cursor: DecisionsCursor | undefined): Promise<string[]> {
  if (cursor === undefined || !sandbox.networkDecisions) return [];
  const page = await sandbox
    .networkDecisions({ after: cursor.after, since: cursor.since, max: 500 })
    .catch(() => undefined);
  return page ? describeDecisions(page.decisions, page.truncated) : [];
}

export function describeDecisions(decisions: readonly LoggedDecision[], truncated = false): string[] {
  const lines: string[] = [];
  const allowed = decisions.filter((decision) => decision.allowed);
  const refused = decisions.filter((decision) => !decision.allowed);
  if (allowed.length) {
    const names = counted(allowed.map((decision) => `${decision.host}:${decision.port}`));
    lines.push(
      `Network: ${allowed.length} connection${allowed.length === 1 ? '' : 's'} through the allowlist (${names}).`,
    );
  }
  if (refused.length) {
    const reasons = [
      ...new Map(refused.map((decision) => [`${decision.host}:${decision.port}`, decision.reason])).entries(),
    ];
    const shown = reasons
      .slice(0, MOST_NAMES)
      .map(([target, reason]) => `${target} (${reason ?? 'refused'})`)
      .join('; ');
    lines.push(
      `Network refused ${refused.length} connection${refused.length === 1 ? '' : 's'}: ${shown}${reasons.length > MOST_NAMES ? `; and ${reasons.length - MOST_NAMES} more` : ''}. Retrying will not help: ask the user to add the name to the sandbox's allowlist (agentSandbox.network.allow) if it is needed.`,
    );
  }
  if (truncated) lines.push('Network: more decisions were made than are shown.');
  return lines;
}

/** "pypi.org:443 ×3, files.pythonhosted.org:443" (at most MOST_NAMES). */
function counted(targets: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const target of targets) counts.set(target, (counts.get(target) ?? 0) + 1);
  const each = [...counts].map(([target, count]) => (count > 1 ? `${target} ×${count}` : target));
  return each.length > MOST_NAMES
    ? `${each.slice(0, MOST_NAMES).join(', ')} and ${each.length - MOST_NAMES} more`
    : each.join(', ');
}
