/**
 * A warm pool for compute mode: containers created and started ahead of time, per container
 * configuration (image, limits, network, user, environment), each handed out once and never taken
 * back, so every run still gets a fresh container. Refilled in the background after each take (during
 * a burst of more runs than its size, once the burst is over: the burst's own containers come first),
 * bounded (a few configurations, `size` containers each), drained after a quiet spell and on dispose.
 * It also removes used containers in the background, so that a run returns before its container is gone.
 */

export interface PoolOptions {
  /** Ready containers kept per configuration; 0 keeps none. */
  size: number;
  /** Drain everything after this long without a take. */
  idleMs?: number;
  /** Most configurations kept warm at once; the least recently used one is drained beyond this. */
  maxKeys?: number;
}

export interface PoolHooks<T> {
  /** Whether a ready item is still usable (its container still waits). */
  alive(item: T): boolean;
  /** Removes an item that will not be used; must not throw. */
  discard(item: T): Promise<void>;
  /** Told when filling fails, e.g. for the log; filling resumes with the next take. */
  onFillError?(error: unknown): void;
}

export const DEFAULT_POOL_IDLE_MS = 5 * 60_000;
export const DEFAULT_POOL_MAX_KEYS = 4;
/** A setting above this is taken as this: each warm container holds a little memory and a socket. */
export const MAX_POOL_SIZE = 8;

interface Entry<T> {
  ready: T[];
  filling: number;
  make: () => Promise<T>;
}

export class WarmPool<T> {
  readonly size: number;
  private readonly idleMs: number;
  private readonly maxKeys: number;
  private readonly entries = new Map<string, Entry<T>>();
  private readonly pending = new Set<Promise<unknown>>();
  /** Runs that took (or made) a container and have not retired it yet. */
  private inUse = 0;
  /** Configurations to refill once no burst is under way. */
  private readonly wanted = new Set<string>();
  private idleTimer: NodeJS.Timeout | undefined;
  private disposed = false;
  private stats = { hits: 0, misses: 0 };

  constructor(
    options: PoolOptions,
    private readonly hooks: PoolHooks<T>,
  ) {
    this.size = Math.max(0, Math.min(MAX_POOL_SIZE, Math.floor(options.size)));
    this.idleMs = options.idleMs ?? DEFAULT_POOL_IDLE_MS;
    this.maxKeys = options.maxKeys ?? DEFAULT_POOL_MAX_KEYS;
  }

  /**
   * A ready item for this configuration, or undefined (the caller makes one itself); either way the
   * pool refills this configuration with `make`. Every take is answered by retire(item), or by
   * release() when the caller's own item could not be made.
   */
  take(key: string, make: () => Promise<T>): T | undefined {
    this.inUse++;
    if (this.size === 0 || this.disposed) return undefined;
    this.armIdleTimer();
    let entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key); // re-inserted below: the map's order is least recently used first
      entry.make = make;
    } else {
      entry = { ready: [], filling: 0, make };
    }
    this.entries.set(key, entry);
    for (const [oldKey] of this.entries) {
      if (this.entries.size <= this.maxKeys) break;
      this.drainKey(oldKey);
    }
    let item: T | undefined;
    while ((item = entry.ready.shift()) !== undefined && !this.hooks.alive(item)) this.track(this.hooks.discard(item));
    if (item === undefined) this.stats.misses++;
    else this.stats.hits++;
    this.wanted.add(key);
    // After the other calls of this moment took theirs: a burst shows only then.
    this.track(new Promise<void>((resolve) => setImmediate(() => resolve(this.refillWanted()))));
    return item;
  }

  /** Removes a used item in the background; dispose() waits for it. */
  retire(item: T): void {
    this.track(this.hooks.discard(item));
    this.release();
  }

  /** A take whose caller ends without an item to retire (making its own failed). */
  release(): void {
    this.inUse = Math.max(0, this.inUse - 1);
    this.refillWanted();
  }

  /** Ready items per configuration and hits/misses since the start, for tests and the benchmark. */
  snapshot(): { ready: number; filling: number; keys: number; hits: number; misses: number } {
    let ready = 0;
    let filling = 0;
    for (const entry of this.entries.values()) {
      ready += entry.ready.length;
      filling += entry.filling;
    }
    return { ready, filling, keys: this.entries.size, ...this.stats };
  }

  /** Resolves when no fill or removal is under way. */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  /** Removes every ready item; fills under way are removed when they finish. */
  drain(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.wanted.clear();
    for (const key of [...this.entries.keys()]) this.drainKey(key);
  }

  /** Drains, stops filling, and waits until every container it made or retired is gone. */
  async dispose(): Promise<void> {
    this.disposed = true;
    this.drain();
    await this.settled();
  }

  private drainKey(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    for (const item of entry.ready.splice(0)) this.track(this.hooks.discard(item));
  }

  private refillWanted(): void {
    if (this.inUse > 1) return;
    for (const key of [...this.wanted]) {
      this.wanted.delete(key);
      const entry = this.entries.get(key);
      if (entry) this.refill(key, entry);
    }
  }

  private refill(key: string, entry: Entry<T>): void {
    while (!this.disposed && entry.ready.length + entry.filling < this.size) {
      entry.filling++;
      const filled = entry.make().then(
        (item) => {
          entry.filling--;
          // Drained or replaced meanwhile: nobody will take it.
          if (this.disposed || this.entries.get(key) !== entry || !this.hooks.alive(item))
            this.track(this.hooks.discard(item));
          else entry.ready.push(item);
        },
        (error: unknown) => {
          entry.filling--;
          this.hooks.onFillError?.(error);
        },
      );
      this.track(filled);
    }
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.drain(), this.idleMs);
    this.idleTimer.unref?.();
  }

  private track(work: Promise<unknown>): void {
    const tracked = work.catch(() => undefined).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }
}
