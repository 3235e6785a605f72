/**
 * The user's policy applied to a request for a new session: an agent may ask for less workspace
 * access or network than the user allowed, never more, and each thing it did not get is said.
 */
import { resolveSpec } from '../spec/resolveSpec';
import { specFromSettings, type Settings } from '../spec/settings';
import type { Runtime, SandboxSpec, SpecLayer, WorkspaceAccess } from '../spec/spec';

const ACCESS_ORDER: Record<WorkspaceAccess, number> = { none: 0, ro: 1, rw: 2 };

/** What a new session may be, as asked for; see SandboxService.openSession. */
export interface SessionAsk {
  /** The user asked (a command or the panel), not an agent: only trust and a folder limit workspace access. */
  byUser?: boolean;
  /** More configuration for a new session, e.g. an agent's `sandbox:` block (limits, image, packages); the policy still applies. */
  layer?: SpecLayer;
  runtime?: Runtime;
  workspaceAccess?: WorkspaceAccess;
  network?: boolean;
}

export interface PolicyContext {
  settings: Settings;
  /** False in an untrusted workspace: sandboxes never see the workspace then. */
  trusted: boolean;
  /** The host folder a session would mount; undefined without one. */
  folder: string | undefined;
  /** Environment variables injected into every sandbox. */
  injectedEnv?: Record<string, string>;
  /** Where the user raises each limit, for the notices; VS Code's settings when absent. */
  raisedBy?: PolicyKnobs;
}

/** Where the user sets the most workspace access and the network: settings, or a command's flags. */
export interface PolicyKnobs {
  readonly workspaceAccess: string;
  readonly network: string;
}

export const SETTING_KNOBS: PolicyKnobs = {
  workspaceAccess: 'setting agentSandbox.workspaceAccess',
  network: 'setting agentSandbox.network',
};

/** The most workspace access an agent may get. */
export function allowedAccess(context: PolicyContext): WorkspaceAccess {
  return context.trusted && context.folder ? context.settings.workspaceAccess : 'none';
}

/** The spec of a new session under the policy, and what the policy changed about the request, in words. */
export function sessionSpec(request: SessionAsk, context: PolicyContext): { spec: SandboxSpec; notices: string[] } {
  const { settings } = context;
  const notices: string[] = [];
  const allowed = request.byUser ? (context.trusted && context.folder ? 'rw' : 'none') : allowedAccess(context);
  let access = request.workspaceAccess ?? request.layer?.workspaceAccess ?? allowedAccess(context);
  if (ACCESS_ORDER[access] > ACCESS_ORDER[allowed]) {
    notices.push(
      `Workspace access "${access}" was asked for, but the user allows at most "${allowed}" (${context.trusted ? (context.raisedBy ?? SETTING_KNOBS).workspaceAccess : 'the workspace is not trusted'}); the sandbox got "${allowed}".`,
    );
    access = allowed;
  }
  let network = request.network ?? request.layer?.network ?? settings.network;
  if (network && !settings.network) {
    notices.push(
      `Network access was asked for, but the user has not allowed network (${(context.raisedBy ?? SETTING_KNOBS).network}); the sandbox has no network.`,
    );
    network = false;
  }
  const spec = resolveSpec(specFromSettings(settings), request.layer, {
    mode: 'code',
    runtime: request.runtime ?? request.layer?.runtime,
    workspaceAccess: access,
    network,
    env: { ...request.layer?.env, ...context.injectedEnv },
  });
  return { spec, notices };
}
