/**
 * Approvals by reach. A client such as Copilot remembers "allow" per tool name, so a click on a
 * harmless call would approve every later call of that tool, whatever it can touch. Here a call's
 * reach (reach.ts) is compared with what the user granted for the sandbox it targets:
 * - a call that widens that reach is asked about in our own dialog, whatever the client approved;
 * - a call within it that can touch the folder or the network gets the client's confirmation, which
 *   the client may remember;
 * - a call that stays inside a private sandbox runs without asking, unless the user wants every
 *   call that runs code or changes files confirmed (setting agentSandbox.confirmation "always").
 */
import { NO_REACH, RUN_TARGET, union, widening, type Reach, type ReachKind, type TargetView } from './reach';

export type ConfirmationRule = 'reach' | 'always';

export type Approval =
  | { readonly kind: 'none' }
  /** The client's own confirmation (VS Code's card), which it may remember per tool. */
  | { readonly kind: 'client' }
  /** Our dialog: the call reaches further than the user granted for this sandbox. */
  | { readonly kind: 'ask'; readonly widening: readonly ReachKind[] };

export function approvalFor(
  spec: { readonly changes: boolean },
  reach: Reach,
  granted: Reach,
  rule: ConfirmationRule,
): Approval {
  const wider = widening(reach, granted);
  if (wider.length) return { kind: 'ask', widening: wider };
  if (spec.changes && (rule === 'always' || reach.size > 0)) return { kind: 'client' };
  return { kind: 'none' };
}

interface Grant {
  reach: Reach;
  /** The container the grant was given for, once known: a new container under the same name starts with none. */
  containerId?: string;
}

/** What the user granted per sandbox, in this window, until the sandbox closes. */
export class ReachGrants {
  private readonly grants = new Map<string, Grant>();

  /** The reach granted for the sandbox the target describes (nothing for a different container under its name). */
  granted(target: TargetView, containerId?: string): Reach {
    const grant = this.grants.get(target.sandboxId);
    if (!grant) return NO_REACH;
    if (grant.containerId !== undefined && (!target.open || grant.containerId !== containerId)) {
      this.grants.delete(target.sandboxId);
      return NO_REACH;
    }
    return grant.reach;
  }

  grant(sandboxId: string, reach: Reach, containerId?: string): void {
    // One-off sandboxes have no container to tie a grant to, and each may ask for other secrets: a
    // grant for them never covers secrets, so every one-off sandbox with secrets is asked about, naming them.
    if (sandboxId === RUN_TARGET && reach.has('secrets'))
      reach = new Set([...reach].filter((kind) => kind !== 'secrets'));
    const had = this.grants.get(sandboxId);
    this.grants.set(sandboxId, {
      reach: union(had?.reach ?? NO_REACH, reach),
      containerId: containerId ?? had?.containerId,
    });
  }

  /**
   * Ties a grant given before its sandbox was open to the container that the call opened; when the
   * call opened none (it failed), the grant goes: it was for that sandbox, not for one opened later
   * under its name.
   */
  bind(sandboxId: string, containerId: string | undefined): void {
    const grant = this.grants.get(sandboxId);
    if (!grant || grant.containerId !== undefined) return;
    if (containerId) grant.containerId = containerId;
    else this.grants.delete(sandboxId);
  }

  forget(sandboxId: string): void {
    this.grants.delete(sandboxId);
  }
}
