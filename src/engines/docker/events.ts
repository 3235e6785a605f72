/**
 * Follows the engine's event stream for our containers, to say precisely why a session died: OOM,
 * a signal, a crash, an exit code, removal from outside, or the engine going away. Started by the
 * first successful engine call (never on construction), reconnects with backoff, stopped by dispose.
 */
import type Docker from 'dockerode';
import { StringDecoder } from 'node:string_decoder';
import { signalName } from '../../core/results/results';
import type { DeathReason, SessionDeath } from '../../core/sessions/sessionDeath';
import type { StopRecords } from '../../core/sessions/stopRecords';
import { withSignal } from './engineCalls';
import { readEventLine, type EngineEvent } from './engineJson';
import { LABEL } from './labels';
import { specFromLabels } from './sessionInfo';

/** Podman's API names two of them its own way (its 'died' and 'remove' are Docker's 'die' and 'destroy'). */
const PODMAN_ACTIONS: Record<string, string> = { died: 'die', remove: 'destroy' };
const FILTERS = {
  type: ['container'],
  label: [`${LABEL.managed}=1`],
  event: ['die', 'oom', 'destroy', 'kill', ...Object.keys(PODMAN_ACTIONS)],
};
/** An 'oom' this close before a 'die' means the main process was the one killed; otherwise it was a command run in it. */
const OOM_BEFORE_DIE_MS = 5_000;
/** A death by signal this close before the stream dropped is taken for the engine's own shutdown. */
const SHUTDOWN_WINDOW_MS = 20_000;
/**
 * A stream that ends after it lived this long, while the engine still answers a ping within PING_MS,
 * is followed again at once, as no outage: Podman (4.3) ends every stream asked `since` a time when it
 * rotates its event log (about each MiB of events), though it keeps running.
 */
const STREAM_LIVED_MS = 1000;
const PING_MS = 2000;
const MARK_TTL_MS = 10 * 60_000;
const MAX_CONTAINERS = 500;
const MAX_LINE = 1024 * 1024;

export interface DeathWatcherOptions {
  /** Reconnect delay: the first, doubled after each failure up to the most. */
  retryMs?: number;
  maxRetryMs?: number;
  /** How long listeners wait after a 'die' for a 'destroy' that would make it a removal (docker rm -f). */
  dieGraceMs?: number;
  /** How long a stream must have lived for its end to be checked with a ping (STREAM_LIVED_MS). */
  streamLivedMs?: number;
  /** Where stops made by any Agent Sandbox process are written down (the folder keeper stops sessions too). */
  stopRecords?: Pick<StopRecords, 'record' | 'read' | 'forget'>;
}

interface ContainerState {
  name?: string;
  oomAt?: number;
  kill?: { signal: number; at: number };
  reason?: DeathReason;
  pending?: NodeJS.Timeout;
}

type Listener = (death: SessionDeath) => void;

export class ContainerDeathWatcher {
  private readonly containers = new Map<string, ContainerState>();
  private readonly removing = new Map<string, number>();
  private readonly stopping = new Map<string, { why: string; at: number }>();
  private readonly listeners = new Set<Listener>();
  private readonly waiters = new Set<() => void>();
  private readonly seen = new Set<string>();
  private readonly outages: { from: number; to?: number }[] = [];
  private running = false;
  private connected = false;
  private connectedAt = 0;
  private controller: AbortController | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs: number;
  /** Where a new subscription resumes, in the engine's clock (seconds), so that nothing is missed across a reconnect. */
  private since: string | undefined;

  constructor(
    private readonly docker: Pick<Docker, 'getEvents' | 'ping'>,
    private readonly options: DeathWatcherOptions = {},
  ) {
    this.retryMs = options.retryMs ?? 500;
  }

  /** Starts following events; calling it again does nothing. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.since ??= (Date.now() / 1000 - 1).toFixed(3);
    this.connect();
  }

  /** Whether the stream is up, so that a recorded reason can be waited for. */
  get isConnected(): boolean {
    return this.connected;
  }

  /** Called before this process removes a container: its kill, die and destroy are not deaths. */
  markRemoving(id: string): void {
    this.prune(this.removing);
    this.removing.set(id, Date.now());
  }

  /** Undoes markRemoving when the removal failed. */
  unmarkRemoving(id: string): void {
    this.removing.delete(id);
  }

  /** Called before this process kills a container itself: its death is reported with `why`. */
  markStopping(id: string, why: string): void {
    this.stopping.set(id, { why, at: Date.now() });
    try {
      this.options.stopRecords?.record(id, why);
    } catch {
      // The state folder is not writable: this process still knows, others say what the engine tells.
    }
  }

  /** Why the container died or disappeared, when the stream told; a short id prefix works too. */
  reasonFor(id: string): DeathReason | undefined {
    return this.stateOf(id)?.reason;
  }

  /** The recorded reason, or else, for a container that stopped at `finishedAt` while the engine was away, that. */
  explain(id: string, finishedAt?: string): DeathReason | undefined {
    const recorded = this.reasonFor(id);
    if (recorded && recorded.kind !== 'signal') return recorded;
    const written = this.options.stopRecords?.read(id);
    if (written) return { kind: 'stopped', at: finishedAt ?? written.at, why: written.why };
    if (recorded || !finishedAt) return recorded;
    const at = Date.parse(finishedAt);
    const outage = this.outages.find((span) => at >= span.from - SHUTDOWN_WINDOW_MS && at <= (span.to ?? Date.now()));
    return outage ? { kind: 'engine-stopped', at: finishedAt } : undefined;
  }

  /**
   * The reason for a container that a call just found gone ('removed') or stopped ('stopped'): the
   * event may trail the failed call by a moment, so this waits for it a little while the stream is up.
   */
  async settle(id: string, found: 'removed' | 'stopped', timeoutMs = 1500): Promise<DeathReason | undefined> {
    const ready = () => {
      const reason = this.reasonFor(id);
      return reason && (found === 'stopped' || reason.kind === 'removed' || reason.kind === 'closed')
        ? reason
        : undefined;
    };
    if (ready() || !this.connected) return this.reasonFor(id);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(this.reasonFor(id));
      };
      const check = () => {
        if (ready()) done();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(check);
    });
  }

  /** Fires when a container of ours dies or is removed by anything but this process. */
  onDeath(listener: Listener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  dispose(): void {
    this.running = false;
    this.connected = false;
    this.controller?.abort();
    this.controller = undefined;
    clearTimeout(this.retryTimer);
    for (const state of this.containers.values()) clearTimeout(state.pending);
    for (const waiter of [...this.waiters]) waiter();
    this.listeners.clear();
  }

  private connect(): void {
    const controller = new AbortController();
    this.controller = controller;
    const options = withSignal({ filters: FILTERS, ...(this.since ? { since: this.since } : {}) }, controller.signal);
    this.docker.getEvents(options as Docker.GetEventsOptions).then(
      (stream) => this.follow(stream, controller),
      () => this.dropped(controller),
    );
  }

  private follow(stream: NodeJS.ReadableStream, controller: AbortController): void {
    const destroy = () => (stream as { destroy?: () => void }).destroy?.();
    if (controller !== this.controller) return destroy();
    // The stream must never keep a process (the CLI, a test run) alive.
    (stream as { socket?: { unref?: () => void } }).socket?.unref?.();
    controller.signal.addEventListener('abort', destroy, { once: true });
    this.connected = true;
    this.connectedAt = Date.now();
    const outage = this.outages.at(-1);
    if (outage && outage.to === undefined) outage.to = Date.now();
    const decoder = new StringDecoder('utf8');
    let buffer = '';
    stream.on('data', (chunk: Buffer | string) => {
      buffer += typeof chunk === 'string' ? chunk : decoder.write(chunk);
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
        this.line(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
      }
      if (buffer.length > MAX_LINE) buffer = '';
    });
    const ended = () => this.dropped(controller);
    stream.once('end', ended);
    stream.once('close', ended);
    stream.once('error', ended);
  }

  private dropped(controller: AbortController): void {
    if (controller !== this.controller) return;
    this.controller = undefined;
    if (
      this.connected &&
      this.running &&
      Date.now() - this.connectedAt > (this.options.streamLivedMs ?? STREAM_LIVED_MS)
    ) {
      // Still connected meanwhile: a settle waits on, and what happened in between comes again (since).
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('no answer')), PING_MS);
        timer.unref?.();
      });
      Promise.race([this.docker.ping(), late])
        .finally(() => clearTimeout(timer))
        .then(
          () => {
            if (this.running && !this.controller) this.connect();
          },
          () => this.lost(),
        );
      return;
    }
    this.lost();
  }

  /** The stream is gone and the engine with it (or the stream could not be had): an outage, then retries. */
  private lost(): void {
    if (this.controller) return;
    if (this.connected) {
      this.connected = false;
      this.outages.push({ from: Date.now() });
      if (this.outages.length > 10) this.outages.shift();
      if (Date.now() - this.connectedAt > 30_000) this.retryMs = this.options.retryMs ?? 500;
      this.blameShutdown();
    }
    for (const waiter of [...this.waiters]) waiter();
    if (!this.running) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, this.options.maxRetryMs ?? 30_000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.running) this.connect();
    }, delay);
    this.retryTimer.unref?.();
  }

  private line(text: string): void {
    if (!text.trim()) return;
    const event = readEventLine(text);
    if (event) this.handle(event);
    for (const waiter of [...this.waiters]) waiter();
  }

  private handle(event: EngineEvent): void {
    const named = event.Action ?? event.status;
    const action = named && (PODMAN_ACTIONS[named] ?? named);
    const id = event.Actor?.ID ?? event.id;
    if (!action || !id || (event.Type && event.Type !== 'container')) return;
    const atMs = event.timeNano ? event.timeNano / 1e6 : (event.time ?? Date.now() / 1000) * 1000;
    const key = `${atMs}:${id}:${action}`;
    if (this.seen.has(key)) return; // replayed after a reconnect
    this.seen.add(key);
    if (this.seen.size > 1000) this.seen.delete(this.seen.values().next().value!);
    this.since = (Math.floor(atMs) / 1000).toFixed(3);

    const attributes = event.Actor?.Attributes ?? {};
    const at = new Date(atMs).toISOString();
    const ours = this.isRemoving(id);
    const state = this.stateFor(id);
    state.name ??= attributes[LABEL.session];
    switch (action) {
      case 'oom':
        state.oomAt = atMs;
        return;
      case 'kill':
        state.kill = { signal: Number(attributes.signal), at: atMs };
        return;
      case 'die': {
        const exitCode = Number(attributes.exitCode ?? attributes.containerExitCode);
        const reason = ours ? undefined : this.classify(id, state, exitCode, atMs, at, attributes);
        state.oomAt = undefined;
        state.kill = undefined;
        if (!reason) return;
        state.reason = reason;
        clearTimeout(state.pending);
        state.pending = setTimeout(() => this.emit(id, state), this.options.dieGraceMs ?? 1000);
        state.pending.unref?.();
        return;
      }
      case 'destroy':
        clearTimeout(state.pending);
        state.pending = undefined;
        // A stop written down for other processes has served once the container is gone.
        this.options.stopRecords?.forget(id);
        if (ours) {
          for (const mark of [...this.removing.keys()]) if (id.startsWith(mark)) this.removing.delete(mark);
          state.reason = { kind: 'closed', at };
          return;
        }
        state.reason = { kind: 'removed', at, ...(state.reason ? { before: state.reason } : {}) };
        this.emit(id, state);
        return;
    }
  }

  private classify(
    id: string,
    state: ContainerState,
    exitCode: number,
    atMs: number,
    at: string,
    attributes: Record<string, string>,
  ): DeathReason {
    const stopping = this.stopping.get(id) ?? this.options.stopRecords?.read(id);
    if (stopping) {
      this.stopping.delete(id);
      return { kind: 'stopped', at, why: stopping.why };
    }
    const { oomAt, kill } = state;
    if (oomAt !== undefined && atMs - oomAt <= OOM_BEFORE_DIE_MS && (!kill || kill.at < oomAt)) {
      return { kind: 'oom', at, ...memoryLimit(attributes) };
    }
    // Podman's 'kill' does not name the signal: a death by one after it is taken for it.
    const signalled = Number.isFinite(kill?.signal) ? exitCode === 128 + kill!.signal : exitCode > 128;
    if (kill && signalled) {
      return { kind: 'signal', at, signal: signalName(exitCode) ?? `signal ${exitCode - 128}`, fromOutside: true };
    }
    if (exitCode === 139) return { kind: 'segfault', at };
    const signal = signalName(exitCode);
    if (signal) return { kind: 'signal', at, signal, fromOutside: false };
    return { kind: 'exit', at, exitCode: Number.isFinite(exitCode) ? exitCode : -1 };
  }

  /** Deaths by signal just before the stream dropped were most likely the engine stopping its containers. */
  private blameShutdown(): void {
    const since = Date.now() - SHUTDOWN_WINDOW_MS;
    for (const state of this.containers.values()) {
      const reason = state.reason;
      if (reason?.kind === 'signal' && Date.parse(reason.at) >= since)
        state.reason = { kind: 'engine-stopped', at: reason.at };
    }
  }

  private emit(id: string, state: ContainerState): void {
    state.pending = undefined;
    if (!state.reason) return;
    const death: SessionDeath = { id, ...(state.name ? { name: state.name } : {}), reason: state.reason };
    for (const listener of [...this.listeners]) {
      try {
        listener(death);
      } catch {
        // A listener's failure must not stop the stream or the other listeners.
      }
    }
  }

  private stateFor(id: string): ContainerState {
    let state = this.containers.get(id);
    if (!state) {
      state = {};
      this.containers.set(id, state);
      if (this.containers.size > MAX_CONTAINERS) {
        const [oldest, old] = this.containers.entries().next().value!;
        clearTimeout(old.pending);
        this.containers.delete(oldest);
      }
    }
    return state;
  }

  private stateOf(id: string): ContainerState | undefined {
    const exact = this.containers.get(id);
    if (exact || id.length < 12) return exact;
    for (const [key, state] of this.containers) if (key.startsWith(id)) return state;
    return undefined;
  }

  private isRemoving(id: string): boolean {
    for (const mark of this.removing.keys()) if (id.startsWith(mark)) return true;
    return false;
  }

  private prune(marks: Map<string, number>): void {
    const old = Date.now() - MARK_TTL_MS;
    for (const [id, at] of marks) if (at < old) marks.delete(id);
  }
}

function memoryLimit(attributes: Record<string, string>): { memoryBytes?: number } {
  const memoryBytes = specFromLabels(attributes)?.limits.memoryBytes;
  return memoryBytes === undefined ? {} : { memoryBytes };
}
