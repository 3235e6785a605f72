/**
 * Code-mode sessions by name: get-or-create, find, close. The engine holds the sessions (by labels),
 * so a session opened by one process is usable from the next.
 */
import { SandboxError } from './errors';
import type { OpenOptions, Sandbox, SandboxEngine, SessionInfo } from './engine';
import type { SandboxSpec } from './spec';

export const DEFAULT_SESSION = 'default';
const SESSION_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

export function checkSessionName(name: string): string {
  if (!SESSION_NAME.test(name)) {
    throw new SandboxError('invalid-input', `"${name}" is not a valid session name.`, 'Use 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit.');
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

export async function findSession(engine: SandboxEngine, name: string, workspaceFolder: string, signal?: AbortSignal): Promise<SessionInfo | undefined> {
  const [found] = await engine.list({ name, workspaceFolder }, signal);
  return found;
}

/** The named session of this workspace; a clear error when there is none. */
export async function requireSession(engine: SandboxEngine, name: string, workspaceFolder: string, signal?: AbortSignal): Promise<Sandbox> {
  const found = await findSession(engine, checkSessionName(name), workspaceFolder, signal);
  if (!found) {
    throw new SandboxError('session-not-found', `No session named "${name}" is open for ${workspaceFolder}.`, `Open it first (agent-sandbox open --session ${name}), or list sessions with agent-sandbox ls.`);
  }
  return engine.attach(found.id, signal);
}
