/**
 * Code-mode session names and the sandbox_id that carries a session's scope. The engine holds the
 * sessions (by labels), so a session opened by one process is usable from the next; finding one is
 * findSession.ts, opening one SandboxService.openSession.
 */
import { SandboxError } from '../errors';
import type { SessionInfo, SessionScope } from '../engine/engine';

export const DEFAULT_SESSION = 'default';
const SESSION_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

export function checkSessionName(name: string): string {
  if (!SESSION_NAME.test(name)) {
    throw new SandboxError(
      'invalid-input',
      `"${name}" is not a valid session name.`,
      'Use 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit.',
    );
  }
  return name;
}

/**
 * The sandbox_id the tools use: the session name in the workspace scope, "agent:NAME/SESSION" or
 * "workflow:RUN/SESSION" in the others, so that sessions of different scopes never meet.
 */
export function sandboxIdFor(scope: SessionScope | undefined, name: string): string {
  return !scope || scope.kind === 'workspace' ? name : `${scope.kind}:${scope.key ?? ''}/${name}`;
}

export function sandboxIdOf(info: SessionInfo): string {
  return info.name ? sandboxIdFor(info.scope, info.name) : info.id;
}

const SCOPED_ID = /^(agent|workflow):([A-Za-z0-9][A-Za-z0-9_.-]{0,62})\/(.+)$/;

/** Reads a sandbox_id back into scope and session name; throws when it cannot be one. */
export function parseSandboxId(id: string): { scope: SessionScope; name: string } {
  const scoped = SCOPED_ID.exec(id);
  if (scoped)
    return { scope: { kind: scoped[1] as 'agent' | 'workflow', key: scoped[2]! }, name: checkSessionName(scoped[3]!) };
  return { scope: { kind: 'workspace' }, name: checkSessionName(id) };
}
