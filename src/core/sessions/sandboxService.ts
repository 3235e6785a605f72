/**
 * The sandboxes of one workspace, as the tools and commands see them: compute-mode runs, and
 * code-mode sessions by scope and name, with a default one opened on first use. Applies the user's
 * policy (an agent may ask for less workspace access or network than the user allowed, never more)
 * and the lifecycle (idle timeout, maximum lifetime, maximum live sessions).
 */
import {
  describeSecret,
  describeSessionSecrets,
  pickSecrets,
  secretNamesOf,
  type ResolvedSecrets,
  type SecretWords,
} from '../secrets/catalog';
import type { ExecResult, Sandbox, SessionInfo, SessionScope } from '../engine/engine';
import { SandboxError } from '../errors';
import { protectedPathsFor } from '../policy/protectedPaths';
import { KnownSessions } from './knownSessions';
import { collectSessions, makeRoom, type Collected, type CollectionDeps } from './sessionCollection';
export type { Collected } from './sessionCollection';
import { findSession, sameScope } from './findSession';
import { DEFAULT_SESSION, checkSessionName, sandboxIdFor, sandboxIdOf } from './sessions';
import { TOOL_WORDS, type SessionWords } from './sessionWords';
import {
  SETTING_KNOBS,
  SETTING_SECRET_WORDS,
  allowedAccess,
  checkNetworkTier,
  sessionSpec,
  type PolicyContext,
  type PolicyKnobs,
} from './sessionPolicy';
import type { WorkspaceAccess } from '../spec/spec';
import type { InterpreterLanguage } from '../interpreters/interpreter';
import type { PersistentInterpreter } from '../interpreters/persistentInterpreter';
import type { ImageOutput } from '../results/images';
import { AfterCallWork } from './afterCallWork';
import { SessionInterpreters } from './sessionInterpreters';
import { CopyHolds, type HeldSession } from './copyHold';
import { NO_FOLDER } from './noFolder';
import { deadPlaceholder } from './deadPlaceholder';
import { oneOffNetwork, resolveServiceSecrets, runOneOff, type OneOffInput } from './oneOffRun';
import type { CallOptions, CloseOptions, OpenOutcome, OpenRequest, SandboxServiceContext } from './serviceTypes';

export class SandboxService {
  private readonly handles = new KnownSessions(() => this.now());
  private readonly opening = new Map<string, Promise<OpenOutcome>>();
  /** Containers this service closed: a call still running in one ends with that reason, not a bare kill. */
  private readonly closedHere = new Set<string>();
  private readonly interpreters = new SessionInterpreters();
  private readonly later = new AfterCallWork();
  /** sandbox_id → why its session died, so that the next call says so instead of opening a fresh one. */
  private readonly dead = new Map<string, SandboxError>();
  /** Copy sessions kept open for their unapplied changes. */
  private readonly holds = new CopyHolds(() => this.context);

  constructor(private readonly context: SandboxServiceContext) {}

  /** The sandbox_id of the default session: "default", or the default scope's ("agent:mcp-…/default"). */
  defaultSandboxId(): string {
    return sandboxIdFor(this.defaultScope(), DEFAULT_SESSION);
  }

  /**
   * The session's persistent interpreter for a language, started on first use; a new one when the
   * last has ended, with a notice that its state was lost.
   */
  interpreter(
    sandbox: Sandbox,
    language: InterpreterLanguage,
    signal?: AbortSignal,
  ): Promise<{ interpreter: PersistentInterpreter; notices: string[] }> {
    return this.interpreters.get(sandbox, language, signal);
  }

  /** Ends this process's connections to the sessions' interpreters (the interpreters, and their state, stay); for a process about to exit. */
  closeInterpreters(): Promise<void> {
    return this.interpreters.closeAll();
  }

  /**
   * Work for a session after a call has returned its result (saving a cut output): the session's next
   * call waits for it first. What it could not do (its notices) is kept for takeLaterNotices.
   */
  afterCall(sandbox: Sandbox, work: () => Promise<string[]>): void {
    this.later.add(sandbox.info.id, work);
  }

  /** What work after earlier calls of this session could not do, once. */
  takeLaterNotices(sandbox: Sandbox): string[] {
    return this.later.takeNotices(sandbox.info.id);
  }

  /** Resolves when no work after a call is under way (benchmarks wait for it between calls). */
  settled(): Promise<void> {
    return this.later.settled();
  }

  /** Closes the sessions of the default scope when it is not the workspace's (an MCP connection that ended); says which. */
  async closeDefaultScope(signal?: AbortSignal): Promise<SessionInfo[]> {
    const mine = (await this.list(signal)).filter((session) => this.ownsScope(session.scope));
    const closed: SessionInfo[] = [];
    for (const session of mine) {
      if (await this.holds.hold(session, this.cached(sandboxIdOf(session)), signal)) continue;
      this.closedHere.add(session.id);
      closed.push({ ...session, notices: await this.removeContainer(session.id, signal) });
      this.forget(session);
    }
    return closed;
  }

  /** Fires when sessions open or close. */
  onDidChangeSessions(listener: () => void): { dispose(): void } {
    return this.handles.onDidChange(listener);
  }

  /** The most workspace access the user allows right now. */
  allowedAccess(): WorkspaceAccess {
    return allowedAccess(this.policy());
  }

  /** A program in a one-off compute sandbox (sandbox_run), under the user's policy (oneOffRun.ts). */
  run(input: OneOffInput, options: CallOptions = {}): Promise<ExecResult & { images: ImageOutput[] }> {
    return runOneOff(this.context, input, options);
  }

  private secretWords(): SecretWords {
    return this.context.secretWords ?? SETTING_SECRET_WORDS;
  }

  /**
   * Get-or-create a session by scope and name (the default one when no name is given): the one way
   * the CLI, the tools, the commands and the panel open a session.
   */
  async openSession(request: OpenRequest = {}, options: CallOptions = {}): Promise<OpenOutcome> {
    const name = checkSessionName(request.session ?? DEFAULT_SESSION);
    if (request.session === undefined && request.scope === undefined)
      request = { ...request, scope: this.defaultScope() };
    const id = sandboxIdFor(request.scope, name);
    this.dead.delete(id); // opening explicitly is how a dead session is replaced
    const pending = this.opening.get(id);
    const opening = pending ?? this.openNow(id, name, request, options).finally(() => this.opening.delete(id));
    if (!pending) this.opening.set(id, opening);
    const outcome = await opening;
    options.admit?.(outcome.sandbox.info);
    return outcome;
  }

  /** The sandbox a tool call means: by sandbox_id (see sandboxIdFor) or container id, or the default one, opened on first use. */
  async sandbox(sandboxId: string | undefined, options: CallOptions = {}): Promise<Sandbox> {
    if (sandboxId === undefined && !this.dead.has(this.defaultSandboxId()))
      return (await this.openSession({}, options)).sandbox;
    return this.requireSession(sandboxId ?? this.defaultSandboxId(), options);
  }

  /**
   * An open session by sandbox_id (scope and name, see sandboxIdFor) or container id; a clear error
   * when there is none in this workspace's folder, or when it died. Never opens one.
   */
  async requireSession(sandboxId: string, options: CallOptions = {}): Promise<Sandbox> {
    const died = this.dead.get(sandboxId);
    if (died)
      throw new SandboxError(
        died.reason,
        died.message,
        `${died.hint ?? ''} ${this.words().afterDeath(sandboxId)}`.trim(),
      );
    const known = this.cached(sandboxId);
    if (known) {
      options.admit?.(known.info);
      return this.touch(known);
    }
    const engine = this.context.engine();
    const found = await this.find(sandboxId, options.signal);
    if (!found) {
      const { message, hint } = this.words().notOpen(sandboxId, this.folderKey());
      throw new SandboxError('session-not-found', message, hint);
    }
    options.admit?.(found);
    const sandbox = await engine.attach(found.id, options.signal);
    this.remember(sandbox);
    return sandbox;
  }

  /** What is known about a sandbox without asking the engine (for confirmations, which must not have side effects). */
  known(sandboxId: string | undefined): SessionInfo | undefined {
    return this.cached(sandboxId ?? this.defaultSandboxId())?.info;
  }

  /** The sandbox a sandbox_id means, when one is open (known here, or found in the engine); opens nothing. */
  async lookup(sandboxId: string | undefined, signal?: AbortSignal): Promise<SessionInfo | undefined> {
    const id = sandboxId ?? this.defaultSandboxId();
    return this.cached(id)?.info ?? (await this.find(id, signal));
  }

  /** What opening a session with this request would give under the user's policy; opens nothing. */
  plan(request: OpenRequest = {}): {
    workspaceAccess: WorkspaceAccess;
    network: boolean;
    networkAllow: string[];
    packages: boolean;
    secrets: string[];
  } {
    const { spec, secrets } = this.sessionSpec(request);
    return {
      workspaceAccess: spec.workspaceAccess,
      network: spec.network,
      networkAllow: spec.networkAllow,
      packages: spec.pipPackages.length + spec.npmPackages.length > 0,
      secrets: secrets.map(describeSecret),
    };
  }

  /** The secrets the user offers that an open session has, in words (for confirmations and the panel). */
  secretsOf(session: SessionInfo): string[] {
    return describeSessionSecrets(session.spec);
  }

  /** The network sandbox_run's one-off sandbox gets, asking for these names (or none in particular) and these secrets. */
  computeNetwork(
    networkAllow?: readonly string[],
    secretNames: readonly string[] = [],
  ): { network: boolean; networkAllow: string[]; secrets: string[] } {
    return oneOffNetwork(this.context, networkAllow, secretNames);
  }

  private knobs(): PolicyKnobs {
    return this.context.raisedBy ?? SETTING_KNOBS;
  }

  /** Runs an operation on a sandbox, forgetting it when the engine says it is gone or dead. */
  async use<T>(
    sandboxId: string | undefined,
    operation: (sandbox: Sandbox) => Promise<T>,
    options: CallOptions = {},
  ): Promise<T> {
    const sandbox = await this.sandbox(sandboxId, options);
    await this.later.waitFor(sandbox.info.id, options.signal);
    try {
      const result = await operation(sandbox);
      if (this.closedHere.has(sandbox.info.id)) throw this.closedDuringCall(sandbox.info);
      return result;
    } catch (error) {
      if (this.closedHere.has(sandbox.info.id) && !SandboxError.is(error, 'session-closed'))
        throw this.closedDuringCall(sandbox.info);
      if (SandboxError.is(error, 'session-dead') || SandboxError.is(error, 'session-not-found')) {
        this.dead.set(sandboxIdOf(sandbox.info), error);
        this.forget(sandbox.info);
      }
      throw error;
    } finally {
      this.touch(sandbox);
    }
  }

  /**
   * Closes a session. A copy session with changes not applied to the folder stays open unless
   * options.discardChanges: this throws ChangesAwaitReview, with the changes.
   */
  async close(sandboxId: string | undefined, options: CloseOptions = {}): Promise<SessionInfo> {
    const { signal } = options;
    const id = sandboxId ?? this.defaultSandboxId();
    const cached = this.cached(id);
    const info = cached?.info ?? (await this.find(id, signal));
    if (info) options.admit?.(info);
    const discarded =
      info && !this.dead.has(id)
        ? await this.holds.beforeClose(info, { sandbox: cached, signal, discard: options.discardChanges })
        : [];
    const wasDead = this.dead.delete(id);
    if (!info && wasDead) return { ...deadPlaceholder(id) };
    if (!info) {
      const { message, hint } = this.words().nothingToClose(id, this.folderKey());
      throw new SandboxError('session-not-found', message, hint);
    }
    this.closedHere.add(info.id);
    const notices = await this.removeContainer(info.id, signal);
    this.forget(info);
    // The notices of a closed session are what its removal found (a setuid bit it stripped, say) and what it discarded.
    return { ...info, notices: [...discarded, ...notices] };
  }

  /**
   * Closes every session of this workspace in every scope; each comes back with what its removal
   * found. Copy sessions with unapplied changes stay open (held) unless options.discardChanges.
   */
  async closeAll(
    options: { signal?: AbortSignal; discardChanges?: boolean } = {},
  ): Promise<{ closed: SessionInfo[]; held: HeldSession[] }> {
    const { signal, discardChanges: discard } = options;
    const outcomes = await Promise.all(
      (await this.list(signal)).map(async (session) => {
        const sandbox = this.cached(sandboxIdOf(session));
        const hold = discard ? undefined : await this.holds.hold(session, sandbox, signal);
        if (hold) return { hold };
        const discarded = discard ? await this.holds.beforeClose(session, { sandbox, signal, discard }) : [];
        const notices = await this.removeContainer(session.id, signal);
        this.forget(session);
        return { closed: { ...session, notices: [...discarded, ...notices] } };
      }),
    );
    this.dead.clear();
    return {
      closed: outcomes.flatMap((outcome) => (outcome.closed ? [outcome.closed] : [])),
      held: outcomes.flatMap((outcome) => (outcome.hold ? [outcome.hold] : [])),
    };
  }

  /** Closes a session and opens a fresh one with the same name and configuration; its files are lost. */
  async restart(
    sandboxId: string,
    options: CallOptions & { workspaceAccess?: WorkspaceAccess; byUser?: boolean; discardChanges?: boolean } = {},
  ): Promise<OpenOutcome> {
    const closed = await this.close(sandboxId, { signal: options.signal, discardChanges: options.discardChanges });
    return this.openSession(
      {
        session: closed.name,
        scope: closed.scope,
        runtime: closed.runtime,
        workspaceAccess: options.workspaceAccess ?? closed.workspaceAccess,
        network: closed.network,
        // The same offered secrets, with values read again (they were never kept).
        secrets: secretNamesOf(closed.spec, this.context.settings().secrets).filter((name) =>
          this.context.settings().secrets.some((entry) => entry.name === name),
        ),
        byUser: options.byUser,
      },
      options,
    );
  }

  /** Sessions of this workspace in every scope, from the engine (those opened elsewhere, e.g. by the CLI, show too). */
  async list(signal?: AbortSignal): Promise<SessionInfo[]> {
    return this.context.engine().list({ workspaceFolder: this.folderKey() }, signal);
  }

  /** Sessions of every folder the engine holds (agent-sandbox ls --all-folders). */
  async listAllFolders(signal?: AbortSignal): Promise<SessionInfo[]> {
    return this.context.engine().list({}, signal);
  }

  /**
   * Closes this client's sessions that were idle or lived too long, with a logged notice each.
   * Sessions seen for the first time (after a reload, say) count as used now.
   */
  collect(signal?: AbortSignal): Promise<Collected[]> {
    return collectSessions(this.collection(), signal);
  }

  /** When a call last used this container in this process, if one did. */
  lastUsedAt(containerId: string): number | undefined {
    return this.handles.lastUsedAt(containerId);
  }

  /** Forget cached handles, e.g. after the engine settings changed. */
  reset(): void {
    this.handles.clear();
  }

  private async openNow(id: string, name: string, request: OpenRequest, options: CallOptions): Promise<OpenOutcome> {
    const cached = this.handles.get(id);
    if (cached) return { sandbox: this.touch(cached), created: false, notices: [] };
    const engine = this.context.engine();
    const existing = await this.find(id, options.signal);
    if (existing) {
      // A dead session makes attach throw: it is reported, never silently replaced by a fresh one that lost its files.
      const sandbox = await engine.attach(existing.id, options.signal);
      this.remember(sandbox);
      return { sandbox, created: false, notices: [] };
    }
    // An unknown secret fails here, before any value is read.
    const picked = pickSecrets(request.secrets ?? [], this.context.settings().secrets, this.secretWords());
    const resolved = await resolveServiceSecrets(this.context, picked);
    const { spec, notices } = this.sessionSpec(request, resolved);
    checkNetworkTier(spec, engine.capabilities, engine.kind);
    if (this.context.makesRoom !== false) await this.makeRoom(options.signal);
    const folder = this.context.workspaceFolder();
    const settings = this.context.settings();
    const protectedPaths = protectedPathsFor(folder, settings.configWritesAllowedIn);
    const sandbox = await engine.open(spec, {
      name,
      scope: request.scope,
      client: this.context.client,
      ownedByProcess: this.ownsScope(request.scope) || undefined,
      workspaceFolder: folder ?? NO_FOLDER,
      images: settings.images,
      protectedPaths,
      ...options,
      boundSecretValues: { ...options.boundSecretValues, ...resolved.boundValues },
    });
    this.remember(sandbox);
    return { sandbox, created: true, notices };
  }

  /** Closes the least recently used sessions of this client until a new one fits under the maximum. */
  private makeRoom(signal?: AbortSignal): Promise<void> {
    return makeRoom(this.collection(), signal);
  }

  /** What collection and making room use of this service. */
  private collection(): CollectionDeps {
    return {
      settings: () => this.context.settings(),
      now: () => this.now(),
      managed: (signal) => this.managed(signal),
      lastUsedOrNow: (session, now) => this.handles.lastUsedOrNow(session, now),
      held: async (session, signal) =>
        Boolean(await this.holds.hold(session, this.cached(sandboxIdOf(session)), signal)),
      close: async (session, signal) => {
        await this.removeContainer(session.id, signal);
        this.forget(session);
      },
      log: (level, message) => this.context.log?.(level, message),
    };
  }

  /** Removes a container; what the removal found on the host (a stripped setuid bit, say) goes to the log and back to the caller. */
  private async removeContainer(id: string, signal?: AbortSignal): Promise<string[]> {
    const notices = (await this.context.engine().remove(id, signal))?.notices ?? [];
    for (const notice of notices) this.context.log?.('warn', notice);
    return notices;
  }

  /** The sessions this client manages in this workspace. */
  private async managed(signal?: AbortSignal): Promise<SessionInfo[]> {
    const client = this.context.client;
    return (await this.list(signal)).filter((session) => !client || session.client === client);
  }

  private find(sandboxId: string, signal?: AbortSignal): Promise<SessionInfo | undefined> {
    return findSession(this.context.engine(), this.folderKey(), sandboxId, signal);
  }

  private cached(sandboxId: string): Sandbox | undefined {
    return this.handles.get(sandboxId);
  }

  private words(): SessionWords {
    return this.context.words ?? TOOL_WORDS;
  }

  private closedDuringCall(info: SessionInfo): SandboxError {
    const sandboxId = sandboxIdOf(info);
    return new SandboxError(
      'session-closed',
      `The sandbox ${sandboxId} was closed while this call ran, so the call was stopped.`,
      this.words().afterClosedDuringCall(sandboxId),
    );
  }

  private sessionSpec(request: OpenRequest, resolved?: ResolvedSecrets): ReturnType<typeof sessionSpec> {
    return sessionSpec(request, this.policy(), resolved);
  }

  private policy(): PolicyContext {
    return {
      settings: this.context.settings(),
      trusted: this.context.trusted(),
      folder: this.context.workspaceFolder(),
      injectedEnv: this.injectedEnv(),
      raisedBy: this.context.raisedBy,
      secretWords: this.context.secretWords,
    };
  }

  private defaultScope(): SessionScope | undefined {
    return this.context.defaultScope;
  }

  /** Whether sessions of this scope belong to this process (its own default scope, not the workspace's). */
  private ownsScope(scope: SessionScope | undefined): boolean {
    const own = this.context.defaultScope;
    return Boolean(scope && own && own.kind !== 'workspace' && sameScope(scope, own));
  }

  private folderKey(): string {
    return this.context.workspaceFolder() ?? NO_FOLDER;
  }

  private now(): number {
    return this.context.now?.() ?? Date.now();
  }

  private touch(sandbox: Sandbox): Sandbox {
    return this.handles.touch(sandbox);
  }

  /** The host's secrets for a new sandbox. */
  private injectedEnv(): Record<string, string> | undefined {
    return this.context.injectedEnv?.() ?? this.context.secrets?.env();
  }

  private remember(sandbox: Sandbox): void {
    // Its output is redacted from now on, also when another program opened it with other secrets.
    this.context.secrets?.learn(sandbox.info);
    this.handles.remember(sandbox);
  }

  private forget(info: SessionInfo): void {
    this.holds.forget(info.id);
    this.later.forget(info.id);
    this.interpreters.forget(info.id);
    this.handles.forget(info);
  }
}
