/**
 * Compute-mode sandboxes of the Docker engine: one-shot containers (oneShot.ts), taken from the warm
 * pool when one waits for the same configuration, else made on the spot; removed in the background
 * after their run. Sandboxes that mount the workspace, install packages or have a network allowlist
 * take the ordinary path.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type Docker from 'dockerode';
import type { OpenOptions, ResolvedFile, Sandbox } from '../../core/engine/engine';
import { networkTier } from '../../core/network/allowlist';
import type { SandboxSpec } from '../../core/spec/spec';
import { installsPackages } from './containerConfig';
import type { DockerEngine } from './dockerEngine';
import { CONTAINER_PREFIX, LABEL } from './labels';
import { oneShotCreateOptions, startWaitingContainer, type WaitingContainer } from './oneShot';
import { OneShotSandbox } from './oneShotSandbox';
import { DEFAULT_POOL_IDLE_MS, WarmPool, type PoolOptions } from './pool';
import { DEFAULT_WARM_WAIT_SECONDS, MAX_WAITING, SharedPool, poolKey, type SharedPoolOptions } from './sharedPool';
import { sessionInfo } from './sessionInfo';

export const POOL_SIZE_VARIABLE = 'AGENT_SANDBOX_POOL_SIZE';

/** The pool size from AGENT_SANDBOX_POOL_SIZE; none (0) when unset, since a CLI process makes one run and exits. */
export function poolSizeFromEnv(env: NodeJS.ProcessEnv): number {
  const value = Number(env[POOL_SIZE_VARIABLE]);
  return Number.isInteger(value) && value > 0 ? value : 0;
}

export const WARM_SECONDS_VARIABLE = 'AGENT_SANDBOX_WARM_SECONDS';

/**
 * Shared warm containers kept for later processes (sharedPool.ts): AGENT_SANDBOX_POOL_SIZE of them
 * per configuration (2 when unset; 0 turns them off), each waiting AGENT_SANDBOX_WARM_SECONDS (600).
 */
export function sharedPoolFromEnv(env: NodeJS.ProcessEnv): { size: number; waitSeconds: number } {
  const text = env[POOL_SIZE_VARIABLE];
  const value = Number(text);
  const size =
    text === undefined || text.trim() === ''
      ? 2
      : Number.isInteger(value) && value > 0
        ? Math.min(value, MAX_WAITING)
        : 0;
  const wait = Number(env[WARM_SECONDS_VARIABLE]);
  const waitSeconds = Number.isInteger(wait) && wait > 0 ? wait : DEFAULT_WARM_WAIT_SECONDS;
  return { size, waitSeconds };
}

export interface ComputePlan {
  spec: SandboxSpec;
  image: string;
  notices: string[];
  user: { uid: number; gid: number };
  /** The ordinary create request (containerConfig.ts); its name and creation time are replaced per container. */
  createOptions: Docker.ContainerCreateOptions;
  options: OpenOptions;
  /** Docker, or Podman (which describes containers in its own words). */
  dialect?: 'docker' | 'podman';
}

export class ComputeRuns {
  readonly pool: WarmPool<WaitingContainer>;
  /** Warm containers shared between processes (a CLI's): claimed before the process's own pool is asked. */
  readonly shared: SharedPool | undefined;
  private readonly poolIdleMs: number | undefined;

  constructor(
    private readonly engine: DockerEngine,
    pool: PoolOptions,
    shared?: SharedPoolOptions,
  ) {
    this.poolIdleMs = pool.idleMs;
    this.pool = new WarmPool<WaitingContainer>(pool, {
      alive: (waiting) => waiting.alive,
      discard: (waiting) => this.discard(waiting),
    });
    this.shared = shared && shared.size > 0 ? new SharedPool(shared) : undefined;
  }

  /**
   * Whether a sandbox can run in a one-shot container. An allowlist sandbox cannot: its relay and
   * proxy are its own, so it never comes from (or goes to) the pool.
   */
  static fits(spec: SandboxSpec, options: OpenOptions): boolean {
    return (
      spec.mode === 'compute' &&
      options.ephemeral === true &&
      spec.workspaceAccess === 'none' &&
      !installsPackages(spec) &&
      networkTier(spec) !== 'allowlist'
    );
  }

  async open(plan: ComputePlan): Promise<Sandbox> {
    const { signal } = plan.options;
    const owner = { [LABEL.ownerPid]: String(process.pid), [LABEL.ownerHost]: hostname() };
    const { [LABEL.created]: _created, ...labels } = plan.createOptions.Labels ?? {};
    // A backstop for an engine that keeps stdin open after its attach ends (Podman): a waiting
    // container of a process that died ends after the pool's idle time and five minutes more.
    const waitSeconds = Math.ceil((this.poolIdleMs ?? DEFAULT_POOL_IDLE_MS) / 1000) + 300;
    const base = oneShotCreateOptions({ ...plan.createOptions, Labels: labels }, owner, { waitSeconds });
    const start = (pooled: boolean, abort?: AbortSignal) => {
      const createdAt = new Date().toISOString();
      const name = `${CONTAINER_PREFIX}run-${randomBytes(4).toString('hex')}`;
      const createOptions = {
        ...base,
        name,
        Labels: { ...base.Labels, [LABEL.created]: createdAt, ...(pooled ? { [LABEL.pool]: '1' } : {}) },
      };
      return this.engine.guard(
        () =>
          startWaitingContainer(
            this.engine.docker,
            createOptions,
            createdAt,
            (id) => this.engine.remove(id).then(() => undefined),
            abort,
          ),
        abort,
      );
    };
    // A shared container has no owner labels (any process of the user may claim it) and no
    // environment of the host's (it waits in the engine after this process is gone).
    const sharedBase =
      this.shared && Object.keys(plan.spec.env).length === 0 ? { ...plan.createOptions, Labels: labels } : undefined;
    const sharedKey = sharedBase && poolKey(sharedBase);
    let waiting = this.pool.take(poolKey(base), () => start(true));
    try {
      if (!waiting && this.shared && sharedBase && sharedKey)
        waiting = await this.engine.guard(
          () => this.shared!.claim(this.engine.docker, sharedKey, sharedBase, signal, plan.dialect),
          signal,
        );
      waiting ??= await start(false, signal);
    } catch (error) {
      this.pool.release();
      throw error;
    }
    this.engine.deaths.markRemoving(waiting.id); // the runner exits after its run: no death to report
    this.engine.deaths.start();
    const info = sessionInfo({
      id: waiting.id,
      image: plan.image,
      state: 'running',
      spec: plan.spec,
      workspaceFolder: plan.options.workspaceFolder,
      scope: plan.options.scope,
      client: plan.options.client,
      createdAt: waiting.createdAt,
      notices: plan.notices,
    });
    const files: readonly ResolvedFile[] = plan.options.files ?? [];
    return new OneShotSandbox(this.engine, waiting, info, plan.user, files, (used) => {
      if (this.shared && sharedBase && sharedKey) this.track(this.handOver(used, sharedBase, sharedKey));
      else this.pool.retire(used);
    });
  }

  /**
   * After a run in a process with shared warm containers: a detached filler tops them up (after the
   * run, not before it: its start would compete with the program) and, when the runner finished,
   * sees the used container stop, so that this process can end with the program's output instead of
   * waiting for the engine (~50 ms). Without a filler the container is seen to as usual (discard).
   */
  private async handOver(used: WaitingContainer, createOptions: Docker.ContainerCreateOptions, key: string) {
    // A turn later: the caller writes the result before the filler's start (a fork) takes its time.
    await new Promise((resolve) => setImmediate(resolve));
    const finished = used.ranItsRequest ? used.id : undefined;
    const handedOver = await this.shared!.refill(createOptions, key, finished);
    if (handedOver && finished) {
      used.handOver();
      this.pool.release();
    } else this.pool.retire(used);
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch(() => undefined).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  /**
   * Drains the pool and waits until every container it made or retired is gone or, having run to its
   * end, stopped (the engine then removes it), and every filler started.
   */
  async dispose(): Promise<void> {
    await this.pool.dispose();
    await Promise.all(this.pending);
  }

  private readonly pending = new Set<Promise<unknown>>();

  private async discard(waiting: WaitingContainer): Promise<void> {
    // A runner that ran to its end stops its container, and the engine removes it: waiting for its
    // stream to end (a few ms) spares a removal (about 100 ms before a CLI process may end).
    const gone = await waiting.stoppedByItself();
    waiting.release();
    if (!gone) await this.engine.remove(waiting.id).catch(() => undefined);
  }
}
