/**
 * The last check of approvals by reach, made where a call uses its sandbox: the session it is about
 * to use may reach no further than the call may. Approvals are decided on the session as it looked
 * before (or on what opening it would give); this refuses a session that was replaced meanwhile, or
 * one that another client opened under the same name with more access.
 */
import type { SessionInfo } from '../engine/engine';
import type { SandboxError } from '../errors';
import type { SandboxService } from '../sessions/sandboxService';
import { sandboxIdOf } from '../sessions/sessions';
import { widening, type Reach, type ReachKind } from './reach';
import { sessionView } from './targetView';
import type { AnyToolSpec } from './toolList';

/** A check for HandlerContext.admit: throws `refuse(...)` for a session whose reach for this call is not within `allowed`. */
export function admitWithin(
  spec: AnyToolSpec,
  input: unknown,
  allowed: Reach,
  service: SandboxService,
  refuse: (sandboxId: string, wider: readonly ReachKind[]) => SandboxError,
): (session: SessionInfo) => void {
  return (session) => {
    const wider = widening(spec.reach(input, sessionView(session, service)), allowed);
    if (wider.length) throw refuse(sandboxIdOf(session), wider);
  };
}
