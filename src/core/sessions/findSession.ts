/**
 * Finding a session by the id a caller gives (a sandbox_id such as "build" or "agent:foo/default",
 * or a container id): the one place a session's scope is checked, for the CLI, the tools, the
 * commands and the panel alike, so that an agent's session is never another caller's.
 */
import type { SandboxEngine, SessionInfo, SessionScope } from '../engine/engine';
import { parseSandboxId } from './sessions';

/** The session of `workspaceFolder` that `sandboxId` names, asking the engine; undefined when there is none. */
export async function findSession(
  engine: SandboxEngine,
  workspaceFolder: string,
  sandboxId: string,
  signal?: AbortSignal,
): Promise<SessionInfo | undefined> {
  return pickSession(await engine.list({ workspaceFolder }, signal), sandboxId);
}

/** The session among `sessions` that `sandboxId` names: a container id (12 hex digits or more), else scope and name exactly. */
export function pickSession(sessions: readonly SessionInfo[], sandboxId: string): SessionInfo | undefined {
  if (looksLikeContainerId(sandboxId)) {
    const byId = sessions.find((session) => session.id.startsWith(sandboxId));
    if (byId) return byId;
  }
  const { scope, name } = parseSandboxId(sandboxId);
  return sessions.find((session) => session.name === name && sameScope(session.scope, scope));
}

/** The same scope: the same kind and the same key (an agent's name, a workflow run's id). */
export function sameScope(a: SessionScope, b: SessionScope): boolean {
  return a.kind === b.kind && (a.key ?? '') === (b.key ?? '');
}

export function looksLikeContainerId(sandboxId: string): boolean {
  return sandboxId.length >= 12 && /^[0-9a-f]+$/.test(sandboxId);
}
