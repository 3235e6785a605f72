/**
 * The one place a SessionInfo is made for a Docker container: from what made it (open, a compute
 * run) or from its labels (list, attach), which carry what another process needs to use it again.
 */
import type { SessionClient, SessionInfo, SessionScope } from '../../core/engine/engine';
import { sandboxSpecSchema, type SandboxSpec } from '../../core/spec/spec';
import type { ContainerInspect, ContainerSummary } from './engineJson';
import { claimantOf } from './sharedPool';
import { LABEL } from './labels';

export interface SessionFacts {
  id: string;
  image: string;
  state: SessionInfo['state'];
  spec: SandboxSpec;
  name?: string;
  workspaceFolder?: string;
  scope?: SessionScope;
  client?: SessionClient;
  createdAt: string;
  notices: string[];
  owner?: SessionInfo['owner'];
  protectedPaths?: readonly string[];
}

export function sessionInfo(facts: SessionFacts): SessionInfo {
  const { spec } = facts;
  return {
    id: facts.id,
    name: facts.name,
    engine: 'docker',
    mode: spec.mode,
    runtime: spec.runtime,
    image: facts.image,
    spec,
    workspaceAccess: spec.workspaceAccess,
    workspaceFolder: facts.workspaceFolder,
    scope: facts.scope ?? { kind: 'workspace' },
    ...(facts.client ? { client: facts.client } : {}),
    network: spec.network,
    createdAt: facts.createdAt,
    state: facts.state,
    notices: facts.notices,
    ...(facts.owner ? { owner: facts.owner } : {}),
    ...(facts.protectedPaths ? { protectedPaths: facts.protectedPaths } : {}),
  };
}

/** A listed container of ours, as a session. */
export function sessionFromSummary(container: ContainerSummary): SessionInfo {
  const info = sessionFromLabels(container.Id, container.Labels, listedState(container.State), container.Image);
  return container.Labels[LABEL.warm] ? { ...info, owner: sharedOwnerOf(container) } : info;
}

/** A shared warm container (sharedPool.ts) belongs to its claimant, whose pid its name carries; before that, to no one until its wait ends. */
function sharedOwnerOf(container: ContainerSummary): NonNullable<SessionInfo['owner']> {
  const host = container.Labels[LABEL.ownerHost] ?? '';
  const claimant = claimantOf(container.Names ?? undefined);
  return claimant === undefined
    ? { pid: 0, host, pooled: true, waitsUntil: container.Labels[LABEL.warmUntil] ?? '' }
    : { pid: claimant, host, pooled: true };
}

/**
 * An inspected container of ours, as a session (attach takes only running ones). Its spec gets the
 * environment's values back, as the process that opened it has them: the secrets among them are
 * what this process must redact from the session's output (knownSecrets.ts).
 */
export function sessionFromInspect(container: ContainerInspect): SessionInfo {
  const info = sessionFromLabels(
    container.Id,
    container.Config.Labels,
    container.State.Running ? 'running' : 'stopped',
    container.Config.Image ?? '',
  );
  const values = new Map(
    (container.Config.Env ?? []).map((entry) => [
      entry.slice(0, entry.indexOf('=')),
      entry.slice(entry.indexOf('=') + 1),
    ]),
  );
  const env = Object.fromEntries(Object.keys(info.spec.env).map((name) => [name, values.get(name) ?? '']));
  return { ...info, spec: { ...info.spec, env } };
}

/** The spec a container was made with, from its label (secret values left out); undefined when unreadable. */
export function specFromLabels(labels: Readonly<Record<string, string>>): SandboxSpec | undefined {
  const parsed = sandboxSpecSchema.safeParse(jsonOrUndefined(labels[LABEL.spec]));
  return parsed.success ? parsed.data : undefined;
}

function sessionFromLabels(
  id: string,
  labels: Readonly<Record<string, string>>,
  state: SessionInfo['state'],
  image: string,
): SessionInfo {
  const notices = jsonOrUndefined(labels[LABEL.notices]);
  const client = labels[LABEL.client];
  const protectedPaths = jsonOrUndefined(labels[LABEL.protected]);
  return sessionInfo({
    id,
    image,
    state,
    spec: specFromLabels(labels) ?? sandboxSpecSchema.parse({ mode: 'code' }),
    name: labels[LABEL.session],
    workspaceFolder: labels[LABEL.workspace],
    scope: {
      kind: (['agent', 'workflow'] as const).find((kind) => kind === labels[LABEL.scope]) ?? 'workspace',
      ...(labels[LABEL.scopeKey] ? { key: labels[LABEL.scopeKey] } : {}),
    },
    ...(client === 'vscode' || client === 'cli' || client === 'mcp' ? { client } : {}),
    createdAt: labels[LABEL.created] ?? '',
    notices: Array.isArray(notices) ? notices.map(String) : [],
    ...(Array.isArray(protectedPaths) ? { protectedPaths: protectedPaths.map(String) } : {}),
    ...(labels[LABEL.ownerPid]
      ? {
          owner: {
            pid: Number(labels[LABEL.ownerPid]),
            host: labels[LABEL.ownerHost] ?? '',
            pooled: labels[LABEL.pool] === '1',
          },
        }
      : {}),
  });
}

function jsonOrUndefined(text: string | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A listed container's state as a session's: paused (a folder watch measuring, for a moment) is
 * still running, and created (between create and start) is starting; anything else has stopped.
 */
function listedState(state: string | undefined): SessionInfo['state'] {
  if (state === 'running' || state === 'paused') return 'running';
  if (state === 'created') return 'starting';
  return 'stopped';
}
