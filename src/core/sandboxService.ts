/**
 * The sandboxes of one workspace, as the tools and commands see them: compute-mode runs, and named
 * code-mode sessions with a default one opened on first use. Applies the user's policy: an agent may
 * ask for less workspace access or network than the user allowed, never more.
 */
import { EventEmitter } from 'node:events';
import { runCompute, type RunInput } from './compute';
import type { ExecResult, ProgressCallback, Sandbox, SandboxEngine, SessionInfo } from './engine';
import { SandboxError } from './errors';
import { resolveSpec } from './resolveSpec';
import { DEFAULT_SESSION, checkSessionName, findSession } from './sessions';
import { specFromSettings, type Settings } from './settings';
import type { Runtime, SandboxSpec, WorkspaceAccess } from './spec';

const ACCESS_ORDER: Record<WorkspaceAccess, number> = { none: 0, ro: 1, rw: 2 };

export interface SandboxServiceContext {
  /** The engine to use; called on each use so that a settings change takes effect. */
  engine(): SandboxEngine;
  settings(): Settings;
  /** The host folder that owns the sessions and is mounted for ro/rw; undefined without a folder. */
  workspaceFolder(): string | undefined;
  /** False in an untrusted workspace: sandboxes never see the workspace then. */
  trusted(): boolean;
}

export interface OpenRequest {
  session?: string;
  runtime?: Runtime;
  workspaceAccess?: WorkspaceAccess;
  network?: boolean;
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
}

/** Sessions without a folder are keyed under this value so that they can still be found again. */
export const NO_FOLDER = '(no folder)';

export class SandboxService {
  private readonly sandboxes = new Map<string, Sandbox>();
  private readonly opening = new Map<string, Promise<OpenOutcome>>();
  private readonly events = new EventEmitter();

  constructor(private readonly context: SandboxServiceContext) {}

  /** Fires when sessions open or close. */
  onDidChangeSessions(listener: () => void): { dispose(): void } {
    this.events.on('change', listener);
    return { dispose: () => this.events.off('change', listener) };
  }

  /** The most workspace access the user allows right now. */
  allowedAccess(): WorkspaceAccess {
    if (!this.context.trusted() || !this.context.workspaceFolder()) return 'none';
    return this.context.settings().workspaceAccess;
  }

  async run(input: RunInput & { runtime?: Runtime; timeoutSeconds?: number }, options: CallOptions = {}): Promise<ExecResult> {
    const settings = this.context.settings();
    const spec = resolveSpec(specFromSettings(settings), { mode: 'compute', workspaceAccess: 'none', runtime: input.runtime ?? computeRuntime(settings.defaultRuntime), timeoutSeconds: input.timeoutSeconds });
    return runCompute(this.context.engine(), spec, input, { images: settings.images, ...options });
  }

  /** Get-or-create a session by name (the default one when none is given). */
  async open(request: OpenRequest = {}, options: CallOptions = {}): Promise<OpenOutcome> {
    const name = checkSessionName(request.session ?? DEFAULT_SESSION);
    const pending = this.opening.get(name);
    if (pending) return pending;
    const opening = this.openNow(name, request, options).finally(() => this.opening.delete(name));
    this.opening.set(name, opening);
    return opening;
  }

  /** The sandbox a tool call means: by sandbox_id (session name or container id), or the default one. */
  async sandbox(sandboxId: string | undefined, options: CallOptions = {}): Promise<Sandbox> {
    if (sandboxId === undefined) return (await this.open({}, options)).sandbox;
    const known = this.sandboxes.get(sandboxId) ?? [...this.sandboxes.values()].find((sandbox) => sandboxId.length >= 12 && sandbox.info.id.startsWith(sandboxId));
    if (known) return known;
    const engine = this.context.engine();
    const found = (await engine.list({ workspaceFolder: this.folderKey() }, options.signal)).find((session) => session.name === sandboxId || (sandboxId.length >= 12 && session.id.startsWith(sandboxId)));
    if (!found) {
      throw new SandboxError('session-not-found', `No sandbox "${sandboxId}" is open in this workspace.`, 'Call sandbox_open to open one (it returns the sandbox_id to use), or omit sandbox_id to use the default sandbox.');
    }
    const sandbox = await engine.attach(found.id, options.signal);
    this.remember(sandbox);
    return sandbox;
  }

  /** What is known about a sandbox without asking the engine (for confirmations, which must not have side effects). */
  known(sandboxId: string | undefined): SessionInfo | undefined {
    const name = sandboxId ?? DEFAULT_SESSION;
    return (this.sandboxes.get(name) ?? [...this.sandboxes.values()].find((sandbox) => name.length >= 12 && sandbox.info.id.startsWith(name)))?.info;
  }

  /** Runs an operation on a sandbox, forgetting it when the engine says it is gone or dead. */
  async use<T>(sandboxId: string | undefined, operation: (sandbox: Sandbox) => Promise<T>, options: CallOptions = {}): Promise<T> {
    const sandbox = await this.sandbox(sandboxId, options);
    try {
      return await operation(sandbox);
    } catch (error) {
      if (SandboxError.is(error, 'session-dead') || SandboxError.is(error, 'session-not-found')) this.forget(sandbox);
      throw error;
    }
  }

  async close(sandboxId: string | undefined, signal?: AbortSignal): Promise<SessionInfo> {
    const name = sandboxId ?? DEFAULT_SESSION;
    const engine = this.context.engine();
    const cached = this.sandboxes.get(name);
    const info = cached?.info ?? (await engine.list({ workspaceFolder: this.folderKey() }, signal)).find((session) => session.name === name || (name.length >= 12 && session.id.startsWith(name)));
    if (!info) throw new SandboxError('session-not-found', `No sandbox "${name}" is open in this workspace.`, 'Nothing to close.');
    await engine.remove(info.id, signal);
    if (cached) this.forget(cached);
    else this.events.emit('change');
    return info;
  }

  async closeAll(signal?: AbortSignal): Promise<SessionInfo[]> {
    const sessions = await this.list(signal);
    await Promise.all(sessions.map((session) => this.context.engine().remove(session.id, signal)));
    this.sandboxes.clear();
    this.events.emit('change');
    return sessions;
  }

  /** Closes a session and opens a fresh one with the same name and configuration; its files are lost. */
  async restart(sandboxId: string, options: CallOptions = {}): Promise<OpenOutcome> {
    const closed = await this.close(sandboxId, options.signal);
    return this.open({ session: closed.name, runtime: closed.runtime, workspaceAccess: closed.workspaceAccess, network: closed.network }, options);
  }

  /** Sessions of this workspace, from the engine (so those opened elsewhere, e.g. by the CLI, show too). */
  async list(signal?: AbortSignal): Promise<SessionInfo[]> {
    return this.context.engine().list({ workspaceFolder: this.folderKey() }, signal);
  }

  /** Forget cached handles, e.g. after the engine settings changed. */
  reset(): void {
    this.sandboxes.clear();
    this.events.emit('change');
  }

  private async openNow(name: string, request: OpenRequest, options: CallOptions): Promise<OpenOutcome> {
    const cached = this.sandboxes.get(name);
    if (cached) return { sandbox: cached, created: false, notices: [] };
    const engine = this.context.engine();
    const existing = await findSession(engine, name, this.folderKey(), options.signal);
    if (existing) {
      // A dead session makes attach throw: it is reported, never silently replaced by a fresh one that lost its files.
      const sandbox = await engine.attach(existing.id, options.signal);
      this.remember(sandbox);
      return { sandbox, created: false, notices: [] };
    }
    const { spec, notices } = this.sessionSpec(request);
    const folder = this.context.workspaceFolder();
    const sandbox = await engine.open(spec, { name, workspaceFolder: folder ?? NO_FOLDER, images: this.context.settings().images, ...options });
    this.remember(sandbox);
    return { sandbox, created: true, notices };
  }

  private sessionSpec(request: OpenRequest): { spec: SandboxSpec; notices: string[] } {
    const settings = this.context.settings();
    const notices: string[] = [];
    const allowed = this.allowedAccess();
    let access = request.workspaceAccess ?? allowed;
    if (ACCESS_ORDER[access] > ACCESS_ORDER[allowed]) {
      notices.push(`Workspace access "${access}" was asked for, but the user allows at most "${allowed}"${this.context.trusted() ? '' : ' (the workspace is not trusted)'}; the sandbox got "${allowed}".`);
      access = allowed;
    }
    let network = request.network ?? settings.network;
    if (network && !settings.network) {
      notices.push('Network access was asked for, but the user has not allowed network (setting agentSandbox.network); the sandbox has no network.');
      network = false;
    }
    const spec = resolveSpec(specFromSettings(settings), { mode: 'code', runtime: request.runtime, workspaceAccess: access, network });
    return { spec, notices };
  }

  private folderKey(): string {
    return this.context.workspaceFolder() ?? NO_FOLDER;
  }

  private remember(sandbox: Sandbox): void {
    if (sandbox.info.name) this.sandboxes.set(sandbox.info.name, sandbox);
    this.events.emit('change');
  }

  private forget(sandbox: Sandbox): void {
    if (sandbox.info.name && this.sandboxes.get(sandbox.info.name) === sandbox) this.sandboxes.delete(sandbox.info.name);
    this.events.emit('change');
  }
}

function computeRuntime(runtime: Runtime): Exclude<Runtime, 'linux'> {
  return runtime === 'linux' ? 'bash' : runtime;
}
