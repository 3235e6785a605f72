/**
 * Code-mode sessions by name: get-or-create, find, close. The engine holds the sessions (by labels),
 * so a session opened by one process is usable from the next.
 */
import { SandboxError } from '../errors';
import type { OpenOptions, Sandbox, SandboxEngine, SessionInfo, SessionScope } from '../engine/engine';
import type { SandboxSpec } from '../spec/spec';

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

export interface OpenedSession {
  sandbox: Sandbox;
  /** False when an existing session was reused. */
  created: boolean;
}

export async function openSession(
  engine: SandboxEngine,
  spec: SandboxSpec,
  options: OpenOptions & { name: string; workspaceFolder: string },
): Promise<OpenedSession> {
  checkSessionName(options.name);
  const existing = await findSession(engine, options.name, options.workspaceFolder, options.signal);
  if (existing) return { sandbox: await engine.attach(existing.id, options.signal), created: false };
  return { sandbox: await engine.open({ ...spec, mode: 'code' }, options), created: true };
}

export async function findSession(
  engine: SandboxEngine,
  name: string,
  workspaceFolder: string,
  signal?: AbortSignal,
): Promise<SessionInfo | undefined> {
  const [found] = await engine.list({ name, workspaceFolder }, signal);
  return found;
}

/** The named session of this workspace; a clear error when there is none. */
export async function requireSession(
  engine: SandboxEngine,
  name: string,
  workspaceFolder: string,
  signal?: AbortSignal,
): Promise<Sandbox> {
  const found = await findSession(engine, checkSessionName(name), workspaceFolder, signal);
  if (!found) {
    throw new SandboxError(
      'session-not-found',
      `No session named "${name}" is open for ${workspaceFolder}.`,
      `Open it first (agent-sandbox open --session ${name}), or list sessions with agent-sandbox ls.`,
    );
  }
  return engine.attach(found.id, signal);
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
