/**
 * The sessions this process holds a handle to, by sandbox_id, with when a call last used each (in
 * this process), and the event that sessions opened or closed. SandboxService keeps one.
 */
import { EventEmitter } from 'node:events';
import type { Sandbox, SessionInfo } from '../engine/engine';
import { looksLikeContainerId } from './findSession';
import { sandboxIdOf } from './sessions';

export class KnownSessions {
  private readonly sandboxes = new Map<string, Sandbox>();
  /** Container id → when a call last used it (in this process). */
  private readonly lastUsed = new Map<string, number>();
  private readonly events = new EventEmitter();

  constructor(private readonly now: () => number) {}

  /** A held sandbox by sandbox_id, or by (a prefix of) its container id. */
  get(sandboxId: string): Sandbox | undefined {
    return (
      this.sandboxes.get(sandboxId) ??
      [...this.sandboxes.values()].find(
        (sandbox) => looksLikeContainerId(sandboxId) && sandbox.info.id.startsWith(sandboxId),
      )
    );
  }

  /** Holds a sandbox (used now) and says that sessions changed. */
  remember(sandbox: Sandbox): void {
    this.sandboxes.set(sandboxIdOf(sandbox.info), sandbox);
    this.touch(sandbox);
    this.changed();
  }

  /** Lets a session go and says that sessions changed. */
  forget(info: SessionInfo): void {
    const id = sandboxIdOf(info);
    if (this.sandboxes.get(id)?.info.id === info.id) this.sandboxes.delete(id);
    this.lastUsed.delete(info.id);
    this.changed();
  }

  /** Notes that a call used the sandbox now. */
  touch(sandbox: Sandbox): Sandbox {
    this.lastUsed.set(sandbox.info.id, this.now());
    return sandbox;
  }

  /** When a call last used the session in this process; one seen for the first time counts as used now. */
  lastUsedOrNow(session: SessionInfo, now: number): number {
    const known = this.lastUsed.get(session.id);
    if (known !== undefined) return known;
    this.lastUsed.set(session.id, now);
    return now;
  }

  lastUsedAt(containerId: string): number | undefined {
    return this.lastUsed.get(containerId);
  }

  /** Drops every handle (the engine settings changed). */
  clear(): void {
    this.sandboxes.clear();
    this.changed();
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.events.on('change', listener);
    return { dispose: () => this.events.off('change', listener) };
  }

  private changed(): void {
    this.events.emit('change');
  }
}
