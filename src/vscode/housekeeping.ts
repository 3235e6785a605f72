/**
 * Keeps this window's sessions tidy: a sign of life for the workspace (so a reload finds its sessions
 * again), idle and lifetime collection on an interval, orphan removal, and on exit either keeping
 * the sessions or handing them to a detached `agent-sandbox gc` that removes them unless a window
 * takes them over within the grace period (a reload does).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { errorMessage } from '../core/errors';
import { WorkspaceLeases } from '../core/sessions/leases';
import { removeOrphans, type RemovedOrphan } from '../core/sessions/orphans';
import type { SandboxService } from '../core/sessions/sandboxService';
import type { Settings } from '../core/spec/settings';
import type { EngineState } from './engineState';

export class Housekeeping implements vscode.Disposable {
  private timer: NodeJS.Timeout | undefined;
  private interval = 0;

  constructor(
    private readonly service: SandboxService,
    private readonly engine: EngineState,
    private readonly leases: WorkspaceLeases,
    private readonly settings: () => Settings,
    private readonly workspaceFolder: () => string | undefined,
    private readonly extensionPath: string,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.renewLease();
    this.schedule();
  }

  /** Re-reads the interval after a settings change. */
  schedule(): void {
    let seconds: number;
    try {
      seconds = this.settings().sessions.collectIntervalSeconds;
    } catch {
      return;
    }
    if (this.timer && seconds === this.interval) return;
    clearInterval(this.timer);
    this.interval = seconds;
    this.timer = setInterval(() => void this.tick(), seconds * 1000);
    this.timer.unref();
  }

  /** One round: sign of life, then (only once the engine has been used) collection. */
  async tick(): Promise<void> {
    this.renewLease();
    if (this.engine.status.state !== 'connected') return;
    try {
      await this.service.collect();
      await this.cleanUpOrphans();
    } catch (error) {
      this.log.debug(`Housekeeping: ${errorMessage(error)}`);
    }
  }

  async cleanUpOrphans(): Promise<RemovedOrphan[]> {
    const removed = await removeOrphans(this.engine.get(), {
      now: Date.now(),
      graceMs: this.settings().sessions.orphanGraceSeconds * 1000,
      lease: (folder) => this.leases.read(folder),
    });
    for (const { session, reason } of removed)
      this.log.info(
        `Removed orphaned sandbox ${session.name ?? session.id.slice(0, 12)} of ${session.workspaceFolder ?? 'no folder'}: ${reason}.`,
      );
    return removed;
  }

  dispose(): void {
    clearInterval(this.timer);
    const folder = this.workspaceFolder();
    if (!folder) return;
    let settings: Settings;
    try {
      settings = this.settings();
    } catch {
      return;
    }
    const keep = settings.sessions.keepOnExit;
    this.leases.release(folder, keep);
    if (keep) return;
    // A detached CLI removes this window's sessions after the grace period, unless a window (this
    // one, reloaded) has renewed the lease by then.
    try {
      const child = spawn(
        process.execPath,
        [
          join(this.extensionPath, 'dist', 'cli.js'),
          'gc',
          '--folder',
          folder,
          '--after',
          String(settings.sessions.orphanGraceSeconds + 5),
          '--grace',
          String(settings.sessions.orphanGraceSeconds),
          ...(settings.engineHost ? ['--engine-host', settings.engineHost] : []),
        ],
        {
          detached: true,
          stdio: 'ignore',
          env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', AGENT_SANDBOX_STATE_DIR: join(this.leases.dir, '..') },
        },
      );
      child.unref();
    } catch (error) {
      this.log.warn(`Could not start the cleanup of this window's sessions: ${errorMessage(error)}`);
    }
  }

  private renewLease(): void {
    const folder = this.workspaceFolder();
    if (!folder) return;
    try {
      this.leases.renew(folder, this.settings().sessions.keepOnExit);
    } catch (error) {
      this.log.debug(`Could not record this window's sign of life: ${errorMessage(error)}`);
    }
  }
}
