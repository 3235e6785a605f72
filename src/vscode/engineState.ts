/**
 * The engine in use and what is known about it. The setting agentSandbox.engine picks Docker, the
 * virtual engine, or `auto`: Docker when it answers, otherwise the virtual engine once the user has
 * agreed (asked once, remembered). Until then every call fails with what to install or change;
 * nothing ever runs on the host. Engines are built without any engine call; the first use decides.
 */
import * as vscode from 'vscode';
import type { DecisionQuery, NetworkDecisionPage } from '../core/network/decisionLog';
import type {
  EngineCapabilities,
  EngineInfo,
  EngineKind,
  OpenOptions,
  Sandbox,
  SandboxEngine,
  RemoveOutcome,
  SessionFilter,
  SessionInfo,
} from '../core/engine/engine';
import { CONTAINER_CAPABILITIES } from '../core/engine/engineCapabilities';
import { probeEngine, selectEngine, type VirtualConsent } from '../core/engine/engineSelection';
import { SandboxError, errorMessage } from '../core/errors';
import type { Settings } from '../core/spec/settings';
import type { SandboxSpec } from '../core/spec/spec';
import { DockerEngine } from '../engines/docker/dockerEngine';
import { VirtualEngine } from '../engines/virtual/virtualEngine';

export type EngineStatus =
  | { state: 'unknown'; kind: EngineKind; endpoint: string }
  | { state: 'connecting'; kind: EngineKind; endpoint: string }
  | { state: 'connected'; kind: EngineKind; endpoint: string; info: EngineInfo }
  | { state: 'unavailable'; kind: EngineKind; endpoint: string; problem: string };

/** The user's remembered answer about the virtual engine, and the way to ask for it. */
export interface VirtualConsentPrompt {
  get(): VirtualConsent;
  /** Asks (without blocking the caller's call) and remembers a definite answer; undefined when dismissed. */
  ask(problem: string): Promise<VirtualConsent>;
}

const VIRTUAL_ENDPOINT = 'in-process (no daemon)';

export class EngineState implements vscode.Disposable {
  private docker: DockerEngine | undefined;
  private dockerKey = '';
  private virtual: VirtualEngine | undefined;
  /** What `auto` decided in this window; undefined until the first use. */
  private decided: EngineKind | undefined;
  private deciding: Promise<SandboxEngine> | undefined;
  private asked = false;
  private choice: Settings['engine'] | undefined;
  private current: EngineStatus = { state: 'unknown', kind: 'docker', endpoint: '' };
  private readonly changed = new vscode.EventEmitter<EngineStatus>();
  readonly onDidChange = this.changed.event;
  private readonly pending = new PendingEngine(() => this.ready());

  constructor(
    private readonly settings: () => Settings,
    private readonly log: vscode.LogOutputChannel,
    private readonly consent: VirtualConsentPrompt,
    /** Starts the folder keeper of a read-write session (the bundled CLI, run by the extension host's Node). */
    private readonly folderKeeper?: { keep(sessionId: string): void },
  ) {}

  get status(): EngineStatus {
    return this.current;
  }

  /**
   * The engine for the current settings, without any engine call. Under `auto` before the first
   * use, a stand-in whose calls first decide (and fail, saying what to do, when no engine may run).
   */
  get(): SandboxEngine {
    const settings = this.settings();
    if (settings.engine !== this.choice) this.switchChoice(settings.engine);
    const kind = settings.engine === 'auto' ? this.decided : settings.engine;
    if (kind === 'virtual') return this.virtualEngine();
    if (kind === 'docker') return this.dockerEngine(settings);
    this.dockerEngine(settings); // keeps the status' endpoint current
    return this.pending;
  }

  /** The engine to use now: decides `auto` (asking the user once when Docker does not answer); throws what to do when none may run. */
  async ready(): Promise<SandboxEngine> {
    const engine = this.get();
    if (engine !== this.pending) return engine;
    this.deciding ??= this.decide().finally(() => (this.deciding = undefined));
    return this.deciding;
  }

  /** Asks the engine who it is, and records the answer. */
  async check(): Promise<EngineStatus> {
    let engine: SandboxEngine;
    try {
      engine = await this.ready();
    } catch {
      return this.current;
    }
    const endpoint = endpointOf(engine);
    this.set({ state: 'connecting', kind: engine.kind, endpoint });
    try {
      const info = await engine.info();
      this.log.info(
        `Engine: ${info.product} ${info.version} at ${info.endpoint}${engine.kind === 'virtual' ? ' (the virtual engine: in-process, lighter isolation than a container)' : ''}.`,
      );
      for (const difference of info.differences ?? []) this.log.warn(`On this engine, ${difference}.`);
      this.set({ state: 'connected', kind: engine.kind, endpoint, info });
    } catch (error) {
      this.reportFailure(error);
    }
    return this.current;
  }

  /** Called after an engine call worked: confirms the connection the first time. */
  reportSuccess(): void {
    if (this.current.state !== 'connected') void this.check();
  }

  /** Called after an engine call failed: engine-level failures change the status. */
  reportFailure(error: unknown): void {
    if (SandboxError.is(error, 'engine-unavailable') || SandboxError.is(error, 'engine-permission')) {
      this.log.error(errorMessage(error));
      this.set({
        state: 'unavailable',
        kind: this.current.kind,
        endpoint: this.current.endpoint,
        problem: errorMessage(error),
      });
    }
  }

  dispose(): void {
    void this.docker?.dispose();
    void this.virtual?.dispose();
    this.changed.dispose();
  }

  /** For deactivate(): waits until the engines let go of what they hold (the warm pool's containers). */
  async shutdown(): Promise<void> {
    await Promise.all([this.docker?.dispose(), this.virtual?.dispose()]);
  }

  private async decide(): Promise<SandboxEngine> {
    const docker = this.dockerEngine(this.settings());
    this.set({ state: 'connecting', kind: 'docker', endpoint: docker.endpoint.description });
    const selection = await selectEngine({
      choice: 'auto',
      consent: this.consent.get(),
      probeDocker: () => probeEngine(docker),
    });
    if (selection.kind === 'docker') {
      const engine = this.decideFor('docker');
      // The probe answered: ask who it is, so the status says connected (and to what), whoever decided.
      void this.check();
      return engine;
    }
    if (selection.kind === 'virtual') {
      this.log.warn(
        `${selection.dockerProblem} Using the virtual engine, as the user chose: bash and Python run inside the extension host, a lighter isolation than a container.`,
      );
      return this.decideFor('virtual');
    }
    this.log.error(selection.error.fullMessage);
    this.set({
      state: 'unavailable',
      kind: 'docker',
      endpoint: docker.endpoint.description,
      problem: selection.error.fullMessage,
    });
    if (selection.ask && !this.asked) {
      this.asked = true;
      void this.consent.ask(selection.dockerProblem).then((answer) => {
        if (answer !== 'granted' || this.settings().engine !== 'auto' || this.decided) return;
        this.log.info('The user chose the virtual engine for when no container engine answers.');
        this.decideFor('virtual');
        void this.check();
      });
    }
    throw selection.error;
  }

  private decideFor(kind: EngineKind): SandboxEngine {
    this.decided = kind;
    return this.get();
  }

  /** A new engine setting starts over: a new decision, and the virtual engine's sessions end when it is left. */
  private switchChoice(choice: Settings['engine']): void {
    const previous = this.choice;
    this.choice = choice;
    this.decided = undefined;
    this.asked = false;
    if (previous !== undefined && choice === 'docker' && this.virtual) {
      void this.virtual.dispose();
      this.virtual = undefined;
      this.log.info('The engine setting changed to docker; sessions of the virtual engine were closed.');
    }
    this.set({
      state: 'unknown',
      kind: choice === 'virtual' ? 'virtual' : 'docker',
      endpoint: choice === 'virtual' ? VIRTUAL_ENDPOINT : (this.docker?.endpoint.description ?? ''),
    });
  }

  private dockerEngine(settings: Settings): DockerEngine {
    const key = JSON.stringify([settings.engineHost, settings.images, settings.pool.size]);
    if (!this.docker || key !== this.dockerKey) {
      void this.docker?.dispose();
      this.docker = new DockerEngine({
        host: settings.engineHost,
        images: settings.images,
        poolSize: settings.pool.size,
        ...(this.folderKeeper ? { folderKeeper: this.folderKeeper } : {}),
      });
      this.dockerKey = key;
      if (settings.engine !== 'virtual')
        this.set({ state: 'unknown', kind: 'docker', endpoint: this.docker.endpoint.description });
    }
    return this.docker;
  }

  private virtualEngine(): VirtualEngine {
    this.virtual ??= new VirtualEngine();
    return this.virtual;
  }

  private set(status: EngineStatus): void {
    this.current = status;
    this.changed.fire(status);
  }
}

function endpointOf(engine: SandboxEngine): string {
  return engine instanceof DockerEngine ? engine.endpoint.description : VIRTUAL_ENDPOINT;
}

/** Stands for the engine `auto` has not chosen yet: every call decides first. */
class PendingEngine implements SandboxEngine {
  readonly kind = 'docker' as const;
  readonly capabilities: EngineCapabilities = CONTAINER_CAPABILITIES;

  constructor(private readonly ready: () => Promise<SandboxEngine>) {}

  async info(signal?: AbortSignal): Promise<EngineInfo> {
    return (await this.ready()).info(signal);
  }

  async open(spec: SandboxSpec, options?: OpenOptions): Promise<Sandbox> {
    return (await this.ready()).open(spec, options);
  }

  async attach(id: string, signal?: AbortSignal): Promise<Sandbox> {
    return (await this.ready()).attach(id, signal);
  }

  async list(filter?: SessionFilter, signal?: AbortSignal): Promise<SessionInfo[]> {
    return (await this.ready()).list(filter, signal);
  }

  async remove(id: string, signal?: AbortSignal): Promise<RemoveOutcome | void> {
    return (await this.ready()).remove(id, signal);
  }

  async networkDecisions(id: string, query?: DecisionQuery): Promise<NetworkDecisionPage> {
    const engine = await this.ready();
    return engine.networkDecisions
      ? engine.networkDecisions(id, query)
      : { decisions: [], cursor: 0, truncated: false };
  }

  async dispose(): Promise<void> {
    // The real engines belong to EngineState.
  }
}
