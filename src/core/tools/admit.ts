/**
 * The last check of approvals by reach, made where a call uses its sandbox: the session it is about
 * to use may reach no further than the call may. Approvals are decided on the session as it looked
 * before (or on what opening it would give); this refuses a session that was replaced meanwhile, or
 * one that another client opened under the same name with more access, or with the protection of
 * .git, .vscode, ... lifted where this caller keeps it.
 */
import type { SessionInfo } from '../engine/engine';
import { SandboxError } from '../errors';
import type { SandboxService } from '../sessions/sandboxService';
import { sandboxIdOf } from '../sessions/sessions';
import { widening, type Reach, type ReachKind } from './reach';
import { sessionView } from './targetView';
import type { AnyToolSpec } from './toolList';

export interface AdmitPolicy {
  /** What the call may reach: what the user granted and approved, or what the flags allow. */
  readonly allowed: Reach;
  /** The names at the top of the folder this caller keeps protected (protectedPathsFor). */
  readonly protectedPaths: readonly string[];
  /** Why they stay protected here, and how that is changed, for the message ("no --allow-config-writes", "--allow-config-writes"). */
  readonly keptBy: string;
  readonly liftWith: string;
}

/** A call refused because its sandbox reaches further than the caller allows: which sandbox, and what more. */
export class ReachRefusal extends SandboxError {
  constructor(
    readonly sandboxId: string,
    readonly wider: readonly ReachKind[],
    message: string,
    hint: string,
  ) {
    super('permission-denied', message, hint);
  }
}

/** A check for HandlerContext.admit: throws for a session this call may not use. */
export function admitWithin(
  spec: AnyToolSpec,
  input: unknown,
  policy: AdmitPolicy,
  service: SandboxService,
  refuse: (sandboxId: string, wider: readonly ReachKind[]) => SandboxError,
): (session: SessionInfo) => void {
  return (session) => {
    const reach = spec.reach(input, sessionView(session, service));
    const wider = widening(reach, policy.allowed);
    if (wider.length) throw refuse(sandboxIdOf(session), wider);
    if (reach.has('folder-write')) refuseUnprotected(session, policy);
  };
}

/** A read-write session whose opener lifted protections this caller keeps: its code could plant a git hook or a task. */
function refuseUnprotected(session: SessionInfo, policy: AdmitPolicy): void {
  const kept = new Set(session.protectedPaths ?? []);
  const open = policy.protectedPaths.filter((name) => !kept.has(name));
  if (!open.length) return;
  throw new SandboxError(
    'permission-denied',
    `Sandbox "${sandboxIdOf(session)}" can change ${open.join(', ')} in your workspace folder (${
      session.protectedPaths
        ? 'it was opened with that protection lifted'
        : 'it was opened before protections were recorded'
    }), where code runs on your machine; here they stay protected (${policy.keptBy}).`,
    `Close it (sandbox_close) and open it again from here, or lift the protection for this folder (${policy.liftWith}).`,
  );
}
