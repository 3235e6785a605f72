/** What the panel shows, built from the services' state: engine, sessions, defaults, activity. */
import * as vscode from 'vscode';
import type { ActivityEntry, ActivityLog } from '../../core/sessions/activityLog';
import type { SandboxEngine, SessionInfo } from '../../core/engine/engine';
import type { SandboxService } from '../../core/sessions/sandboxService';
import { sandboxIdOf } from '../../core/sessions/sessions';
import type { Settings } from '../../core/spec/settings';
import { numberBounds } from '../../core/spec/settingsJsonSchema';
import { SIZE_PATTERN, formatSizeSetting } from '../../core/spec/units';
import type { ActivityView, DefaultsView, EngineView, SessionView } from '../../shared/protocol';
import type { EngineStatus } from '../engineState';
import type { SessionChanges } from '../copyReview/copyReviewModel';
import { SECTION } from '../settings';

/** A session unused for this long shows as idle. */
const IDLE_AFTER_MS = 60_000;

export function engineView(status: EngineStatus, kind: string): EngineView {
  const view: EngineView = { kind, state: status.state, endpoint: status.endpoint };
  if (status.state === 'connected') return { ...view, product: status.info.product, version: status.info.version };
  if (status.state === 'unavailable')
    return {
      ...view,
      problem: status.problem.split('\n')[0],
      fix: status.problem.split('\n').slice(1).join(' ') || undefined,
    };
  return view;
}

export function sessionView(
  info: SessionInfo,
  service: SandboxService,
  activity: ActivityLog,
  engine: SandboxEngine,
  now = Date.now(),
): SessionView {
  const sandboxId = sandboxIdOf(info);
  const lastUsed = service.lastUsedAt(info.id);
  const last = activity.lastCommand(sandboxId);
  // A container between create and start is starting, not dead (the panel may look during an open or a restart).
  const dead = info.state === 'stopped' || info.state === 'unknown';
  return {
    id: info.id,
    sandboxId,
    name: info.name ?? info.id.slice(0, 12),
    scope: info.scope.kind,
    ...(info.client ? { openedBy: info.client } : {}),
    runtime: info.runtime,
    image: info.image,
    state: dead
      ? 'dead'
      : info.state === 'starting'
        ? 'starting'
        : lastUsed !== undefined && now - lastUsed > IDLE_AFTER_MS
          ? 'idle'
          : 'running',
    ...(dead ? { deathReason: capitalize(engine.deathReason?.(info.id) ?? 'it is no longer running') } : {}),
    createdAt: info.createdAt,
    ...(lastUsed !== undefined ? { lastUsedAt: new Date(lastUsed).toISOString() } : {}),
    workspaceAccess: info.workspaceAccess,
    network: info.network,
    ...(info.spec.networkAllow.length && !info.network ? { networkAllow: info.spec.networkAllow } : {}),
    memoryLimitBytes: info.spec.limits.memoryBytes,
    cpus: info.spec.limits.cpus,
    ...(last ? { lastCommand: { summary: last.summary, exitCode: last.exitCode, at: last.at } } : {}),
  };
}

/** A copy session's changes as the panel shows them: counts only (Source Control lists the files). */
export function copyChangesView(changes: SessionChanges | undefined): Pick<SessionView, 'copyChanges'> {
  if (!changes) return {};
  return {
    copyChanges: {
      files: changes.changes.length,
      conflicts: changes.changes.filter((change) => change.conflict).length,
      held: changes.changes.filter((change) => change.held).length,
      ...(changes.problem ? { problem: changes.problem } : {}),
    },
  };
}

export function defaultsView(settings: Settings): DefaultsView {
  const inspected = vscode.workspace.getConfiguration(SECTION).inspect('limits.memory');
  const canUseWorkspace = Boolean(vscode.workspace.workspaceFolders?.length);
  return {
    memory: formatSizeSetting(settings.limits.memory),
    cpus: settings.limits.cpus,
    pids: settings.limits.pids,
    timeoutSeconds: settings.timeoutSeconds,
    maxStdoutBytes: settings.limits.maxStdoutBytes,
    maxStderrBytes: settings.limits.maxStderrBytes,
    workspaceAccess: settings.workspaceAccess,
    network: settings.network.mode,
    networkAllow: settings.network.allow,
    target: canUseWorkspace && inspected?.workspaceValue !== undefined ? 'workspace' : 'user',
    canUseWorkspace,
    bounds: {
      cpus: numberBounds('limits.cpus'),
      pids: numberBounds('limits.pids'),
      timeoutSeconds: numberBounds('timeoutSeconds'),
      maxStdoutBytes: numberBounds('limits.maxStdoutBytes'),
      maxStderrBytes: numberBounds('limits.maxStderrBytes'),
    },
    sizePattern: SIZE_PATTERN.source,
  };
}

export function activityView(entry: ActivityEntry): ActivityView {
  return { ...entry };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
