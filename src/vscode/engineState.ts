/**
 * The engine in use and what is known about it. The engine object is rebuilt when its settings
 * change; nothing here talks to the engine until someone needs it.
 */
import * as vscode from 'vscode';
import type { EngineInfo, SandboxEngine } from '../core/engine';
import { SandboxError, errorMessage } from '../core/errors';
import type { Settings } from '../core/settings';
import { DockerEngine } from '../engines/docker/dockerEngine';

export type EngineStatus =
  | { state: 'unknown'; endpoint: string }
  | { state: 'connecting'; endpoint: string }
  | { state: 'connected'; endpoint: string; info: EngineInfo }
  | { state: 'unavailable'; endpoint: string; problem: string };

export class EngineState implements vscode.Disposable {
  private engine: SandboxEngine | undefined;
  private engineKey = '';
  private current: EngineStatus = { state: 'unknown', endpoint: '' };
  private readonly changed = new vscode.EventEmitter<EngineStatus>();
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly settings: () => Settings,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  get status(): EngineStatus {
    return this.current;
  }

  /** The engine for the current settings (created without any engine call). */
  get(): SandboxEngine {
    const settings = this.settings();
    const key = JSON.stringify([settings.engineHost, settings.images]);
    if (!this.engine || key !== this.engineKey) {
      void this.engine?.dispose();
      const engine = new DockerEngine({ host: settings.engineHost, images: settings.images });
      this.engine = engine;
      this.engineKey = key;
      this.set({ state: 'unknown', endpoint: engine.endpoint.description });
    }
    return this.engine;
  }

  /** Asks the engine who it is, and records the answer. */
  async check(): Promise<EngineStatus> {
    const engine = this.get();
    const endpoint = (engine as DockerEngine).endpoint?.description ?? engine.kind;
    this.set({ state: 'connecting', endpoint });
    try {
      const info = await engine.info();
      this.log.info(`Engine: ${info.product} ${info.version} at ${info.endpoint}.`);
      this.set({ state: 'connected', endpoint, info });
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
      this.set({ state: 'unavailable', endpoint: this.current.endpoint, problem: errorMessage(error) });
    }
  }

  dispose(): void {
    void this.engine?.dispose();
    this.changed.dispose();
  }

  private set(status: EngineStatus): void {
    this.current = status;
    this.changed.fire(status);
  }
}
