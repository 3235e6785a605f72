/** What the sandbox service is given (its context) and what its calls take and give. */
import type { KnownSecrets } from '../secrets/knownSecrets';
import type { SecretWords } from '../secrets/catalog';
import type {
  ProgressCallback,
  Sandbox,
  SandboxEngine,
  SessionClient,
  SessionInfo,
  SessionScope,
} from '../engine/engine';
import type { Settings } from '../spec/settings';
import type { PolicyKnobs, SessionAsk } from './sessionPolicy';
import type { SessionWords } from './sessionWords';
import type { UnappliedChanges } from './copyHold';

export interface SandboxServiceContext {
  /** The engine to use; called on each use so that a settings change takes effect. */
  engine(): SandboxEngine;
  settings(): Settings;
  /** The host folder that owns the sessions and is mounted for ro/rw; undefined without a folder. */
  workspaceFolder(): string | undefined;
  /** False in an untrusted workspace: sandboxes never see the workspace then. */
  trusted(): boolean;
  /** Environment variables injected into every sandbox (secrets from the host, prefix stripped); the secrets' env() when absent. */
  injectedEnv?(): Record<string, string>;
  /** The secrets this process injects and redacts: it learns those of every session the service uses. */
  secrets?: KnownSecrets;
  /**
   * The value of a secret the user offers (settings.secrets), read when a sandbox that asked for it
   * opens: VS Code's SecretStorage, the CLI's host variables or secrets file. None without it.
   */
  secretValue?(name: string): Promise<string | undefined>;
  /** Where the user offers secrets and sets their values, for the errors; VS Code's words when absent. */
  secretWords?: SecretWords;
  /** Which program this is; its sessions are the ones the lifecycle manages. */
  client?: SessionClient;
  /**
   * The scope of the default session (a call that names no sandbox, sandbox_open without a name):
   * an MCP connection's own agent scope, so that two clients never share it. The workspace scope
   * when absent; named sessions stay in the scope they name. Sessions of a default scope other than
   * the workspace's belong to this process: they carry its id, so that gc removes them once it is gone.
   */
  defaultScope?: SessionScope;
  /**
   * False: never close a session to make room for a new one (the CLI's own commands, whose user
   * closes their sessions). True when absent: at most agentSandbox.sessions.maxSessions stay open.
   */
  makesRoom?: boolean;
  /** Where the user raises the most workspace access and the network, for the notices; VS Code's settings when absent. */
  raisedBy?: PolicyKnobs;
  /** How errors say what to do next; the tools' words when absent. */
  words?: SessionWords;
  log?(level: 'info' | 'warn', message: string): void;
  now?(): number;
  /** A copy session's changes not applied to the folder yet; its baseline under the state folder when absent. */
  unappliedChanges?: UnappliedChanges;
}

export interface OpenRequest extends SessionAsk {
  session?: string;
  scope?: SessionScope;
}

export interface OpenOutcome {
  sandbox: Sandbox;
  created: boolean;
  /** What the policy changed about the request, in words for the model and the user. */
  notices: string[];
}

export interface CallOptions {
  signal?: AbortSignal;
  onProgress?: ProgressCallback;
  /**
   * Checks the session a call is about to use, as it is at that moment; throws to refuse it. What a
   * call was approved for was decided on the session as it looked before (or before it existed):
   * this keeps a session replaced meanwhile, or one another client opened with more access, from
   * being used under that approval.
   */
  admit?: (session: SessionInfo) => void;
  /** The values of bound secrets of a session this call opens (see OpenOptions). */
  boundSecretValues?: Readonly<Record<string, string>>;
}

export interface CloseOptions {
  signal?: AbortSignal;
  admit?: (session: SessionInfo) => void;
  /**
   * Close a copy session even when its changes were not applied to the folder: they are lost. Without
   * it such a session stays open (close throws ChangesAwaitReview; closeAll lists it as held).
   */
  discardChanges?: boolean;
}
