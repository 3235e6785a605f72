/**
 * What a tool call can touch beyond its own sandbox, classified from its input and the session it
 * targets. Approvals are given by reach, not by tool name: a client's "allow this tool" must never
 * approve a call that reaches further than what the user granted for that sandbox (issue 15).
 */
import type { EngineKind } from '../engine/engine';
import type { NetworkTier } from '../network/allowlist';
import type { WorkspaceAccess } from '../spec/spec';

/** Each thing a call can touch outside the sandbox. A call with none stays inside a private sandbox. */
export type ReachKind =
  'folder-read' | 'folder-write' | 'network' | 'allowlist' | 'packages' | 'folder-publish' | 'secrets';

export const REACH_KINDS: readonly ReachKind[] = [
  'folder-read',
  'folder-write',
  'network',
  'allowlist',
  'packages',
  'folder-publish',
  'secrets',
];

export type Reach = ReadonlySet<ReachKind>;

export const NO_REACH: Reach = new Set();

/**
 * The sandbox_id under which sandbox_run's one-off sandboxes are approved. No session can be named
 * so (session names are letters, digits, ".", "_" and "-"), so a grant for one-off runs never covers
 * a persistent sandbox an agent names "run", nor the other way round.
 */
export const RUN_TARGET = '(one-off sandbox)';

/**
 * What a call knows about the sandbox it targets, without starting anything: the session when it
 * is open, otherwise what opening it would give under the user's policy.
 */
export interface TargetView {
  /** The sandbox_id the call targets, or RUN_TARGET for sandbox_run's one-off sandbox. */
  readonly sandboxId: string;
  /** True when the session is open (known), false when the call would open it. */
  readonly open: boolean;
  /** The container of the open session: a grant is tied to it. */
  readonly containerId?: string;
  /** The call names a sandbox that is not known to be open: it finds it when it runs, or fails; it opens nothing. */
  readonly unseen?: boolean;
  readonly workspaceAccess: WorkspaceAccess;
  readonly network: boolean;
  /** The names it reaches through the allowlist proxy (network off): empty without the allowlist tier. */
  readonly networkAllow: readonly string[];
  /** Packages installed when the session is created (with the network on for that step). */
  readonly packages: boolean;
  /** The secrets the user offers that the sandbox has, in words (core/secrets/catalog.ts describeSecret). */
  readonly secrets?: readonly string[];
  /** The most workspace access the user allows: calls that need more are refused, not asked about. */
  readonly folderAllowed: WorkspaceAccess;
  /** The engine when known: confirmations name it correctly (no "container" for the virtual engine). */
  readonly engine?: EngineKind;
}

/** What a session's own configuration lets any code in it touch. */
export function sessionReach(target: TargetView): Set<ReachKind> {
  const reach = new Set<ReachKind>();
  if (target.workspaceAccess !== 'none') reach.add('folder-read');
  if (target.workspaceAccess === 'rw') reach.add('folder-write');
  if (target.network) reach.add('network');
  else if (target.networkAllow.length) reach.add('allowlist');
  if (!target.open && target.packages) reach.add('packages');
  if (target.secrets?.length) reach.add('secrets');
  return reach;
}

/**
 * Everything a policy lets calls reach without asking anyone, as the CLI's flags give it: the folder
 * as mounted (and, read-write, saving into it), and the network (all of it, or its allowlist) with
 * what needs it.
 */
export function policyReach(access: WorkspaceAccess, network: NetworkTier, secrets = false): Set<ReachKind> {
  const reach = new Set<ReachKind>();
  if (access !== 'none') reach.add('folder-read');
  if (access === 'rw') reach.add('folder-write').add('folder-publish');
  if (network === 'full') reach.add('network').add('allowlist').add('packages');
  if (network === 'allowlist') reach.add('allowlist');
  if (secrets) reach.add('secrets');
  return reach;
}

/** The kinds in `reach` that `granted` does not cover (the whole network covers its allowlist). */
export function widening(reach: Reach, granted: Reach): ReachKind[] {
  return REACH_KINDS.filter(
    (kind) => reach.has(kind) && !granted.has(kind) && !(kind === 'allowlist' && granted.has('network')),
  );
}

export function union(...reaches: Reach[]): Set<ReachKind> {
  const all = new Set<ReachKind>();
  for (const reach of reaches) for (const kind of reach) all.add(kind);
  return all;
}

/** The reach in words for people, in the order of REACH_KINDS, as templates ({0} is the folder). */
export const REACH_WORDS: Record<ReachKind, string> = {
  'folder-read': 'read your workspace folder',
  'folder-write': 'change files in your workspace folder',
  network: 'use the network',
  allowlist: 'reach the names on its network allowlist',
  packages: 'install packages from the internet (the network is on for that step)',
  'folder-publish': 'save a file into your workspace folder',
  secrets: 'use secrets you offer to sandboxes',
};

/** "read your workspace folder, change files in it and use the network". */
export function reachSentence(kinds: readonly ReachKind[]): string {
  const words = kinds.map((kind) => REACH_WORDS[kind]);
  if (words.length <= 1) return words[0] ?? 'stay inside its own sandbox';
  return `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}
