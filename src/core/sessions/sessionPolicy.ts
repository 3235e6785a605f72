/**
 * The user's policy applied to a request for a new session: an agent may ask for less workspace
 * access or network than the user allowed, never more, and each thing it did not get is said.
 */
import { secretsLayer } from '../secrets/knownSecrets';
import {
  NO_SECRETS,
  pickSecrets,
  secretSpecLayers,
  type ResolvedSecrets,
  type SecretEntry,
  type SecretWords,
} from '../secrets/catalog';
import type { EngineCapabilities } from '../engine/engine';
import { SandboxError } from '../errors';
import { networkTier } from '../network/allowlist';
import { resolveSpec } from '../spec/resolveSpec';
import { specFromSettings, type Settings } from '../spec/settings';
import type { Runtime, SandboxSpec, SpecLayer, WorkspaceAccess } from '../spec/spec';

const ACCESS_ORDER: Record<WorkspaceAccess, number> = { none: 0, copy: 1, ro: 2, rw: 3 };

/** What a new session may be, as asked for; see SandboxService.openSession. */
export interface SessionAsk {
  /** The user asked (a command or the panel), not an agent: only trust and a folder limit workspace access. */
  byUser?: boolean;
  /** More configuration for a new session, e.g. an agent's `sandbox:` block (limits, image, packages); the policy still applies. */
  layer?: SpecLayer;
  runtime?: Runtime;
  workspaceAccess?: WorkspaceAccess;
  network?: boolean;
  /** Names the sandbox should reach through the allowlist proxy; within what the user allows. */
  networkAllow?: readonly string[];
  /**
   * Secrets the user offers (settings.secrets) that the sandbox gets, by name: a bound one adds its
   * domains to the allowlist, an inside one its value to the environment.
   */
  secrets?: readonly string[];
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
  /** Where the user offers secrets and sets their values, for the errors. */
  secretWords?: SecretWords;
}

/** VS Code's words for secrets. */
export const SETTING_SECRET_WORDS: SecretWords = {
  add: 'the user runs "Sandbox: Add Secret" (or adds it to the setting agentSandbox.secrets)',
  setValue: (name) => `The user sets it with "Sandbox: Add Secret" and the name ${name}.`,
};

/** Where the user sets the most workspace access and the network: settings, or a command's flags. */
export interface PolicyKnobs {
  readonly workspaceAccess: string;
  readonly network: string;
  /** Where the user adds a name to the allowlist. */
  readonly networkAllow: string;
}

export const SETTING_KNOBS: PolicyKnobs = {
  workspaceAccess: 'setting agentSandbox.workspaceAccess',
  network: 'setting agentSandbox.network.mode',
  networkAllow: 'setting agentSandbox.network.allow, with agentSandbox.network.mode allowlist',
};

/** The most workspace access an agent may get. */
export function allowedAccess(context: PolicyContext): WorkspaceAccess {
  return context.trusted && context.folder ? context.settings.workspaceAccess : 'none';
}

/** The spec of a new session under the policy, and what the policy changed about the request, in words. */
export function sessionSpec(
  request: SessionAsk,
  context: PolicyContext,
  resolved: ResolvedSecrets = NO_SECRETS,
): { spec: SandboxSpec; notices: string[]; secrets: SecretEntry[] } {
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
  const secrets = pickSecrets(request.secrets ?? [], settings.secrets, context.secretWords ?? SETTING_SECRET_WORDS);
  const { network, networkAllow } = withBoundDomains(
    networkFor(
      {
        network: request.network ?? request.layer?.network,
        networkAllow: request.networkAllow ?? request.layer?.networkAllow,
      },
      settings,
      context.raisedBy ?? SETTING_KNOBS,
      notices,
    ),
    secrets,
    notices,
  );
  const spec = resolveSpec(
    specFromSettings(settings),
    request.layer,
    {
      mode: 'code',
      runtime: request.runtime ?? request.layer?.runtime,
      workspaceAccess: access,
      network,
      networkAllow,
      env: request.layer?.env,
    },
    secretsLayer(context.injectedEnv),
    ...secretSpecLayers(resolved),
  );
  return { spec, notices, secrets };
}

/**
 * The network of a sandbox given bound secrets: their domains join its allowlist (the user bound
 * them there), and a sandbox that would have the whole network gets the allowlist instead, since
 * only the allowlist's proxy adds a bound secret's value. Each change is said.
 */
export function withBoundDomains(
  net: { network: boolean; networkAllow: string[] },
  secrets: readonly SecretEntry[],
  notices: string[],
): { network: boolean; networkAllow: string[] } {
  const bound = secrets.flatMap((entry) => (entry.inside ? [] : [entry]));
  if (!bound.length) return net;
  const names = bound.map((entry) => entry.name).join(', ');
  const added = [...new Set(bound.flatMap((entry) => entry.binding.domains))].filter(
    (domain) => !coveredBy(domain, net.networkAllow),
  );
  const networkAllow = [...net.networkAllow, ...added];
  if (net.network)
    notices.push(
      `The sandbox has the bound secret${bound.length > 1 ? 's' : ''} ${names}, whose values only the allowlist's proxy adds: it reaches ${networkAllow.join(', ')} through the proxy, not the whole network.`,
    );
  else if (added.length)
    notices.push(
      `The sandbox reaches ${added.join(', ')} for the bound secret${bound.length > 1 ? 's' : ''} ${names}.`,
    );
  return { network: false, networkAllow };
}

/**
 * The network a sandbox gets: the whole network only when asked for (or nothing was asked) and the
 * user allows it; else the allowlist, within what the user allows. What it did not get is said.
 */
export function networkFor(
  asked: { network?: boolean; networkAllow?: readonly string[] },
  settings: Settings,
  knobs: PolicyKnobs,
  notices: string[],
): { network: boolean; networkAllow: string[] } {
  const full = settings.network.mode === 'full';
  // Asking for names alone narrows the whole network to them.
  const wantsAll = asked.network ?? (asked.networkAllow === undefined && full);
  if (wantsAll && full) return { network: true, networkAllow: [] };
  if (wantsAll && asked.network)
    notices.push(
      `Network access was asked for, but the user has not allowed the whole network (${knobs.network}); ${
        settings.network.mode === 'allowlist'
          ? `the sandbox reaches only the names on the user's allowlist (${settings.network.allow.join(', ')})`
          : 'the sandbox has no network'
      }.`,
    );
  return { network: false, networkAllow: allowedNames(asked.networkAllow, settings, knobs, notices) };
}

/**
 * The allowlist a sandbox gets: what was asked for, within what the user allows (their whole
 * allowlist when nothing was asked; any names when they allow the whole network); each name left
 * out is said.
 */
export function allowedNames(
  asked: readonly string[] | undefined,
  settings: Settings,
  knobs: PolicyKnobs,
  notices: string[],
): string[] {
  const { mode, allow } = settings.network;
  if (asked === undefined) return mode === 'allowlist' ? [...allow] : [];
  if (mode === 'full') return [...asked];
  const granted = mode === 'allowlist' ? asked.filter((name) => coveredBy(name, allow)) : [];
  const refused = asked.filter((name) => !granted.includes(name));
  if (refused.length)
    notices.push(
      `Network access to ${refused.join(', ')} was asked for, but ${
        mode === 'off' ? 'the user allows no network' : "it is not on the user's allowlist"
      } (${knobs.networkAllow}); the sandbox cannot reach ${refused.length === 1 ? 'it' : 'them'}.`,
    );
  return granted;
}

/** Whether an allowlist entry is within the user's: the same entry, or a name under one of their wildcards. */
export function coveredBy(entry: string, allowed: readonly string[]): boolean {
  if (allowed.includes(entry)) return true;
  const name = entry.startsWith('*.') ? entry.slice(2) : entry;
  return allowed.some((rule) => rule.startsWith('*.') && name.endsWith(`.${rule.slice(2)}`));
}

/**
 * Refuses a spec whose network tier the engine cannot enforce: an allowlist is never silently widened
 * to the whole network, nor silently narrowed to none.
 */
export function checkNetworkTier(spec: SandboxSpec, capabilities: EngineCapabilities, engineKind: string): void {
  if (networkTier(spec) !== 'allowlist' || capabilities.networkAllowlist) return;
  throw new SandboxError(
    'unsupported',
    `The ${engineKind} engine cannot limit a sandbox's network to an allowlist (${spec.networkAllow.join(', ')}).`,
    'Use the Docker engine for the allowlist, or run without it (no network).',
  );
}
