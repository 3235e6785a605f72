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
import { coveredBy } from '../sessions/sessionPolicy';
import { unofferedSecret, type SecretEntry } from '../secrets/catalog';
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
  /**
   * The names an allowlist sandbox may reach for this caller (the user's allowlist, or the flags');
   * 'any' when the whole network is allowed. A session opened elsewhere with more names is refused.
   */
  readonly allowedNames: readonly string[] | 'any';
  /**
   * The secrets this caller offers, where its flags are the whole policy (the CLI's tool and mcp,
   * which ask no one): a session holding any other secret is refused. VS Code asks its user instead,
   * naming the session's secrets.
   */
  readonly offeredSecrets?: readonly SecretEntry[];
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
    if (policy.offeredSecrets) refuseUnofferedSecrets(session, policy.offeredSecrets);
    if (reach.has('allowlist')) refuseWiderAllowlist(session, policy);
    if (reach.has('folder-write')) refuseUnprotected(session, policy);
  };
}

/** An allowlist session that reaches names beyond what this caller allows (opened by another client with more). */
function refuseWiderAllowlist(session: SessionInfo, policy: AdmitPolicy): void {
  if (policy.allowedNames === 'any') return;
  // A bound secret's domains, which the session reaches for it, were allowed with the secret: its own, not any offered one's.
  const allowed = [...policy.allowedNames, ...(session.spec.boundSecrets ?? []).flatMap((secret) => secret.domains)];
  const beyond = session.spec.networkAllow.filter((name) => !coveredBy(name, allowed));
  if (!beyond.length) return;
  throw new SandboxError(
    'permission-denied',
    `Sandbox "${sandboxIdOf(session)}" can reach ${beyond.join(', ')} on the network, beyond the allowlist here (${allowed.join(', ') || 'empty'}); another client opened it with more.`,
    'Use a sandbox within this allowlist (sandbox_open with another session name), or ask the user to add the names.',
  );
}

/** A session holding a secret this caller does not offer (opened by another client with its own). */
function refuseUnofferedSecrets(session: SessionInfo, offered: NonNullable<AdmitPolicy['offeredSecrets']>): void {
  const secret = unofferedSecret(session.spec, offered);
  if (!secret) return;
  throw new SandboxError(
    'permission-denied',
    `Sandbox "${sandboxIdOf(session)}" holds the secret ${secret}, which is not offered here; another client opened it with its own secrets.`,
    'Use a sandbox of your own (sandbox_open with another session name), or ask the user to offer that secret here the same way (--secret NAME=DOMAIN:HOW, --inside-secret NAME).',
  );
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
