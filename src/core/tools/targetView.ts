/**
 * The sandbox a tool call targets, as approvals see it: the open session when there is one,
 * otherwise what opening it would give under the user's policy. `viewTarget` asks nothing of the
 * engine (for confirmations, which must have no side effects); `resolveTarget` looks the session up
 * in the engine too (before a call runs, where the answer must be exact).
 */
import type { EngineKind, SessionInfo } from '../engine/engine';
import type { SandboxService } from '../sessions/sandboxService';
import { parseSandboxId, sandboxIdOf } from '../sessions/sessions';
import { RUN_TARGET, type TargetView } from './reach';
import type { TargetRequest } from './toolSpec';

export function viewTarget(request: TargetRequest, service: SandboxService, engine?: EngineKind): TargetView {
  return build(request, service, request.kind === 'run' ? undefined : service.known(idOf(request, service)), engine);
}

export async function resolveTarget(
  request: TargetRequest,
  service: SandboxService,
  engine?: EngineKind,
  signal?: AbortSignal,
): Promise<TargetView> {
  const session = request.kind === 'run' ? undefined : await service.lookup(idOf(request, service), signal);
  return build(request, service, session, engine);
}

/** An open session as approvals see it: what a call that uses it can reach. */
export function sessionView(session: SessionInfo, service: SandboxService, engine?: EngineKind): TargetView {
  return build({ kind: 'session' }, service, session, engine);
}

function idOf(request: Exclude<TargetRequest, { kind: 'run' }>, service: SandboxService): string {
  return request.sandboxId ?? service.defaultSandboxId();
}

function build(
  request: TargetRequest,
  service: SandboxService,
  session: SessionInfo | undefined,
  engine: EngineKind | undefined,
): TargetView {
  if (request.kind === 'run')
    return {
      sandboxId: RUN_TARGET,
      open: false,
      workspaceAccess: 'none',
      ...service.computeNetwork(request.networkAllow, request.secrets),
      packages: false,
      folderAllowed: service.allowedAccess(),
      engine,
    };
  if (session)
    return {
      sandboxId: sandboxIdOf(session),
      open: true,
      containerId: session.id,
      workspaceAccess: session.workspaceAccess,
      network: session.network,
      networkAllow: session.spec.networkAllow,
      packages: false,
      secrets: service.secretsOf(session),
      folderAllowed: service.allowedAccess(),
      engine: session.engine ?? engine,
    };
  // Not open: a call without an open request opens the default session of its scope; one that names
  // a sandbox that is not open fails and opens nothing, so it reaches nothing (asking the user about
  // a sandbox that will not open would gather a grant for whatever opens later under that name); an
  // open request asks for what it names, within the policy.
  const id = idOf(request, service);
  if (request.kind === 'session' && request.sandboxId !== undefined)
    return {
      sandboxId: id,
      open: false,
      unseen: true,
      workspaceAccess: 'none',
      network: false,
      networkAllow: [],
      packages: false,
      folderAllowed: service.allowedAccess(),
      engine,
    };
  const plan =
    request.kind === 'open'
      ? service.plan({
          ...named(id),
          workspaceAccess: request.workspaceAccess,
          network: request.network,
          networkAllow: request.networkAllow,
          secrets: request.secrets,
        })
      : service.plan({});
  return { sandboxId: id, open: false, ...plan, folderAllowed: service.allowedAccess(), engine };
}

/** The session name and scope of a sandbox_id; a malformed one is the call's own error, reported when it runs. */
function named(id: string): { session?: string; scope?: ReturnType<typeof parseSandboxId>['scope'] } {
  try {
    const { scope, name } = parseSandboxId(id);
    return { session: name, scope };
  } catch {
    return {};
  }
}
