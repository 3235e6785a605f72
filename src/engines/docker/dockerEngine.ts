/** The Docker Engine implementation of the sandbox engine, through dockerode. */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { SandboxError, abortError } from '../../core/errors';
import type {
  EngineCapabilities,
  EngineInfo,
  OpenOptions,
  RemoveOutcome,
  Sandbox,
  SandboxEngine,
  SessionFilter,
  SessionInfo,
  SessionStats,
} from '../../core/engine/engine';
import { CONTAINER_CAPABILITIES } from '../../core/engine/engineCapabilities';
import { chooseImage } from '../../core/engine/images';
import { describeDeath, type SessionDeath } from '../../core/sessions/sessionDeath';
import { sandboxSpecSchema, type Runtime, type SandboxSpec } from '../../core/spec/spec';
import { networkTier } from '../../core/network/allowlist';
import type { DecisionQuery, NetworkDecisionPage } from '../../core/network/decisionLog';
import { EgressProxies } from '../../core/network/egressProcesses';
import { DockerEgress } from './egress';
import { engineInfo, engineVersion, inspectContainer, listContainers, withSignal } from './engineCalls';
import { readEventLines, type ContainerInspect } from './engineJson';
import { sessionFromInspect, sessionFromSummary, sessionInfo, specFromLabels } from './sessionInfo';
import { connectionError, isConnectionError, resolveEndpoint, type Endpoint } from './connection';
import { ComputeRuns, poolSizeFromEnv } from './computeRuns';
import { fillRequestSchema, SharedPool, type SharedPoolOptions } from './sharedPool';
import { containerCreateOptions, sandboxUser } from './containerConfig';
import { DockerSandbox, deadSessionError } from './dockerSandbox';
import { ContainerDeathWatcher } from './events';
import { FolderWatches, baselineFromLabels, baselineLabel } from './folderWatches';
import { measureFolder, type Usage } from '../../core/limits/folderGrowth';
import { StopRecords } from '../../core/sessions/stopRecords';
import { ImageResolver } from './images';
import { watchContainerStats } from './stats';
import { CONTAINER_PREFIX, LABEL } from './labels';
import { oomKillCount, OomKillCounts } from './oomKills';
import { podmanDifferences } from './writablePlaces';
import { prepareProtection, releasePlaceholders, withProtection } from './protectedMounts';
import {
  checkSeccompSupport,
  engineFlavor,
  flavorOf,
  unenforcedLimitsProblem,
  withSeccompFor,
  type EngineFlavor,
} from './seccompProfile';
import { sweepBeforeRemoval } from './setuidSweep';
import { checkOpenRequest } from './openChecks';
import { setUpSession } from './sessionSetup';
import { copyLayout } from './placeFiles';
import type { TarLayout } from './tar';
import { copyMaxFiles, copyNotices, forgetBaseline, readFolderCopy } from '../../core/files/folderCopy';
import { defaultStateDir } from '../../core/sessions/leases';
import { forgetBaseObjects } from '../../core/files/copyObjects';

export interface DockerEngineOptions {
  /** Engine address; empty uses DOCKER_HOST or the default socket. */
  host?: string;
  env?: NodeJS.ProcessEnv;
  /** Images per runtime from settings or flags. */
  images?: Partial<Record<Runtime, string>>;
  /** Warm containers kept per compute configuration (0: none); AGENT_SANDBOX_POOL_SIZE when not given. */
  poolSize?: number;
  /** How long the pool stays warm without a run (5 minutes when not given). */
  poolIdleMs?: number;
  /**
   * Keeps watching a read-write session's folder after this process is gone (a detached folder keeper,
   * see core/sessions/folderKeeper.ts), so a session left running between CLI commands or after VS Code closes
   * is still stopped at its disk limit. Without it, the folder is watched only while this process lives.
   */
  folderKeeper?: { keep(sessionId: string): void };
  /** Where stops are written down for other processes (the host-wide state folder when not given). */
  stopRecords?: StopRecords;
  /**
   * The host side of the network allowlist (a detached proxy process per sandbox, started from the
   * CLI's script). When not given, the dist/cli.js beside this bundle, run by this Node.js; where there
   * is none (tests run from source), the allowlist tier is refused.
   */
  egressProxies?: EgressProxies;
  /** Warm compute containers shared with later processes of this user (a CLI's; sharedPool.ts). */
  sharedPool?: SharedPoolOptions;
}

export class DockerEngine implements SandboxEngine {
  readonly kind = 'docker' as const;
  readonly capabilities: EngineCapabilities;
  readonly endpoint: Endpoint;
  readonly docker: Docker;
  private readonly images: ImageResolver;
  /** Why sessions died, from the engine's event stream; it starts with the first successful call, not here. */
  readonly deaths: ContainerDeathWatcher;
  /** Compute mode's one-shot containers and their warm pool. */
  readonly computeRuns: ComputeRuns;
  /** Docker or Podman, asked once: they take the seccomp profile differently (seccompProfile.ts). */
  private flavor: Promise<EngineFlavor> | undefined;
  private podmanLimits: Promise<void> | undefined;
  /** The read-write workspace folders of sessions held here, stopped when they grow past the disk limit. */
  readonly folderWatches: FolderWatches;
  private readonly stopRecords: StopRecords;
  /** The allowlist tier: its relay containers and proxy processes (egress.ts). */
  readonly egress: DockerEgress;
  /** What the kernel's OOM counts of containers were when last read, on Podman (oomKills.ts). */
  private readonly oomKills = new OomKillCounts();

  constructor(private readonly options: DockerEngineOptions = {}) {
    this.endpoint = resolveEndpoint(options.host, options.env ?? process.env);
    this.docker = new (loadDockerode())(this.endpoint.options);
    this.images = new ImageResolver(this.docker);
    this.stopRecords = options.stopRecords ?? new StopRecords();
    this.deaths = new ContainerDeathWatcher(this.docker, { stopRecords: this.stopRecords });
    this.folderWatches = new FolderWatches(this.deaths, this.stopRecords);
    this.computeRuns = new ComputeRuns(
      this,
      {
        size: options.poolSize ?? poolSizeFromEnv(options.env ?? process.env),
        idleMs: options.poolIdleMs,
      },
      options.sharedPool,
    );
    this.egress = new DockerEgress({
      docker: this.docker,
      endpoint: this.endpoint,
      proxies: options.egressProxies ?? bundledEgressProxies(options.env),
      nodeImage: async (images, signal, onProgress) => {
        const choice = chooseImage('node', undefined, images ?? this.options.images, this.options.env ?? process.env);
        return (await this.guard(() => this.images.ensure('node', choice, onProgress, signal), signal)).image;
      },
    });
    this.capabilities = { ...CONTAINER_CAPABILITIES, networkAllowlist: this.egress.problem === undefined };
  }

  /**
   * The work of a detached filler (`agent-sandbox warm-fill`): tops up the shared warm containers of
   * one configuration, as the request from the process that claimed one asks, and sees the container
   * that process ran in stop (or removes it). Returns how many it made.
   */
  async fillSharedPool(request: unknown, stateDir: string, signal?: AbortSignal): Promise<number> {
    const parsed = fillRequestSchema.parse(request);
    const pool = new SharedPool({ size: parsed.size, waitSeconds: parsed.waitSeconds, stateDir });
    const finished = parsed.finished
      ? this.guard(() => pool.confirmStopped(this.docker, parsed.finished!), signal).catch(() => undefined)
      : undefined;
    try {
      return await this.guard(() => pool.fill(this.docker, parsed, signal), signal);
    } finally {
      await finished;
    }
  }

  /** Fires when a sandbox container dies or is removed by anything but this process. */
  onSessionDeath(listener: (death: SessionDeath) => void): { dispose(): void } {
    return this.deaths.onDeath(listener);
  }

  watchStats(id: string, listener: (stats: SessionStats) => void): { dispose(): void } {
    return watchContainerStats(this.docker.getContainer(id), listener, () => undefined);
  }

  deathReason(id: string): string | undefined {
    const reason = this.deaths.reasonFor(id);
    return reason ? describeDeath(reason) : undefined;
  }

  /** Runs an engine call, turning transport failures into errors that say how to fix them. */
  async guard<T>(call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (SandboxError.is(error)) throw error;
      if (signal?.aborted) throw abortError(signal);
      if (isConnectionError(error)) throw connectionError(error, this.endpoint);
      const message =
        (error as { json?: { message?: string } }).json?.message ?? (error as Error).message ?? String(error);
      throw new SandboxError(
        'engine-error',
        `The Docker Engine reported an error: ${message.trim()}`,
        'Try again; if it persists, check the engine (docker info) and its log.',
        { cause: error },
      );
    }
  }

  /** Whether the engine answers (GET /_ping): a command's probe before its one run, about 1 ms where info() takes 10. */
  async ping(signal?: AbortSignal): Promise<void> {
    await this.guard(
      () =>
        (this.docker.ping as (this: Docker, options: object) => Promise<unknown>).call(
          this.docker,
          withSignal({}, signal),
        ),
      signal,
    );
  }

  async info(signal?: AbortSignal): Promise<EngineInfo> {
    const version = await this.guard(() => engineVersion(this.docker, signal), signal);
    // The same answer tells Docker from Podman: the first sandbox need not ask again.
    this.flavor ??= Promise.resolve(flavorOf(version, this.endpoint.description.startsWith('unix://')));
    const product = version.Components?.find((component) => component.Name === 'Engine')?.Name ?? 'Engine';
    // Podman names its platform "linux/amd64/debian-12": the product is its component's name.
    const podman = version.Components?.find((component) => /podman/i.test(component.Name))?.Name;
    const platform = version.Platform?.Name;
    return {
      kind: 'docker',
      product: podman ?? (platform || `Docker ${product}`),
      ...(podman ? { differences: podmanDifferences(this.endpoint.local) } : {}),
      version: version.Version,
      apiVersion: version.ApiVersion,
      endpoint: this.endpoint.description,
      endpointSource: this.endpoint.source,
      os: `${version.Os}/${version.Arch}`,
    };
  }

  async open(specInput: SandboxSpec, options: OpenOptions = {}): Promise<Sandbox> {
    const spec = sandboxSpecSchema.parse(specInput);
    const signal = options.signal;
    this.egress.check(spec);
    const allowlisted = networkTier(spec) === 'allowlist';
    checkOpenRequest(spec, options, this.endpoint);
    const choice = chooseImage(
      spec.runtime,
      spec.image,
      options.images ?? this.options.images,
      this.options.env ?? process.env,
    );
    // Which engine this is (Docker or Podman) is asked beside the image, not after it.
    const flavorAnswer = this.engineFlavor();
    flavorAnswer.catch(() => undefined);
    const image = await this.guard(() => this.images.ensure(spec.runtime, choice, options.onProgress, signal), signal);
    const user = sandboxUser(spec, { uid: process.getuid?.(), gid: process.getgid?.(), platform: process.platform });
    const name = `${CONTAINER_PREFIX}${options.name ?? (options.ephemeral ? 'run' : 'session')}-${randomBytes(4).toString('hex')}`;
    const createdAt = new Date().toISOString();
    const flavor = await flavorAnswer;
    checkSeccompSupport(flavor, spec.workspaceAccess);
    if (flavor !== 'docker') await this.checkPodmanLimits(signal);
    // Read-write: the protected paths get read-only mounts, on placeholders made now where they do not exist (protectedMounts.ts).
    const protection =
      spec.workspaceAccess === 'rw'
        ? await this.guard(
            () => prepareProtection(this.docker, options.workspaceFolder!, options.protectedPaths, signal),
            signal,
          )
        : undefined;
    // Copy: the folder is read now, before any container exists, and never again (folderCopy.ts).
    let layout: TarLayout | undefined;
    const copy =
      spec.workspaceAccess === 'copy'
        ? await readFolderCopy(
            options.workspaceFolder!,
            { maxBytes: spec.limits.diskBytes, maxFiles: copyMaxFiles(this.options.env ?? process.env) },
            (entries) => (layout = copyLayout(entries)),
          )
        : undefined;
    const notices = [...image.notices, ...(protection?.notices ?? []), ...(copy ? copyNotices(copy) : [])];
    // Before the container exists, so nothing the sandbox writes can count as the folder's own.
    const baseline =
      spec.workspaceAccess === 'rw' && options.workspaceFolder
        ? await measureFolder(options.workspaceFolder).catch(() => undefined)
        : undefined;
    const plain = containerCreateOptions({
      name,
      image: image.image,
      spec,
      sessionName: options.name,
      workspaceFolder: options.workspaceFolder,
      scope: options.scope,
      client: options.client,
      ...(options.ownedByProcess ? { owner: { pid: process.pid, host: hostname() } } : {}),
      user,
      createdAt,
      notices,
      dialect: flavor === 'docker' ? 'docker' : 'podman',
    });
    if (baseline) plain.Labels = { ...plain.Labels, ...baselineLabel(baseline) };
    const protectedOptions = protection ? withProtection(plain, options.workspaceFolder!, protection) : plain;
    let createOptions: Docker.ContainerCreateOptions;
    let container: Docker.Container | undefined;
    try {
      createOptions = await withSeccompFor(protectedOptions, flavor);
      if (!ComputeRuns.fits(spec, options))
        container = await this.guard(() => this.docker.createContainer(withSignal(createOptions, signal)), signal);
    } catch (error) {
      // Placeholders made for a container that never came to be go again at once.
      await releasePlaceholders(this.docker, protectedOptions.Labels).catch(() => undefined);
      throw error;
    }
    if (!container)
      return this.computeRuns.open({
        spec,
        image: image.image,
        notices,
        user,
        createOptions,
        options,
        dialect: flavor === 'docker' ? 'docker' : 'podman',
      });
    try {
      await this.guard(() => container.start(withSignal({}, signal)), signal);
      await setUpSession(this, container, spec, `${user.uid}:${user.gid}`, options, copy && { copy, layout });
    } catch (error) {
      this.deaths.markRemoving(container.id);
      if (allowlisted) await this.egress.remove(container.id).catch(() => undefined);
      await container.remove({ force: true, v: true }).catch(() => undefined);
      await releasePlaceholders(this.docker, createOptions.Labels).catch(() => undefined);
      if (copy) {
        await forgetBaseline(defaultStateDir(), container.id).catch(() => undefined);
        await forgetBaseObjects(defaultStateDir(), container.id).catch(() => undefined);
      }
      throw error;
    }
    this.deaths.start();
    const info = sessionInfo({
      id: container.id,
      image: image.image,
      state: 'running',
      spec,
      name: options.name,
      workspaceFolder: options.workspaceFolder,
      scope: options.scope,
      client: options.client,
      createdAt,
      notices,
      ...(protection ? { protectedPaths: protection.entries.map((entry) => entry.name) } : {}),
    });
    this.watchFolder(info, container, baseline);
    return new DockerSandbox(this, container, info, `${user.uid}:${user.gid}`);
  }

  async attach(id: string, signal?: AbortSignal): Promise<Sandbox> {
    const container = this.docker.getContainer(id);
    let inspected: ContainerInspect;
    try {
      inspected = await this.guard(() => inspectContainer(container, signal), signal);
    } catch (error) {
      if ((error as { cause?: { statusCode?: number } }).cause?.statusCode === 404) {
        throw new SandboxError(
          'session-not-found',
          `No sandbox with id ${id} exists; it was closed or removed.`,
          'Open a new session with sandbox_open.',
        );
      }
      throw error;
    }
    const labels = inspected.Config.Labels;
    if (labels[LABEL.managed] !== '1') {
      throw new SandboxError(
        'session-not-found',
        `Container ${id} is not an Agent Sandbox session.`,
        'Use an id from sandbox_open or agent-sandbox ls.',
      );
    }
    this.deaths.start();
    if (!inspected.State.Running)
      throw deadSessionError(inspected, this.deaths.explain(inspected.Id, inspected.State.FinishedAt));
    let info = sessionFromInspect(inspected);
    const user = labels[LABEL.user] ?? '1000:1000';
    // A proxy process that was killed is started again (without it the sandbox reaches nothing).
    const broken =
      networkTier(info.spec) === 'allowlist' ? await this.egress.ensure(id, info.spec, user, signal) : undefined;
    if (broken) info = { ...info, notices: [...info.notices, broken] };
    this.watchFolder(info, container, baselineFromLabels(labels));
    return new DockerSandbox(this, container, info, user);
  }

  /** A read-write folder is watched here while this process lives, and by the folder keeper beyond. */
  private watchFolder(info: SessionInfo, container: Docker.Container, baseline: Usage | undefined): void {
    if (info.workspaceAccess !== 'rw' || !info.workspaceFolder) return;
    this.folderWatches.watch(info, container, baseline);
    try {
      this.options.folderKeeper?.keep(info.id);
    } catch {
      // No keeper could start: this process still watches while it lives (README, limits).
    }
  }

  async list(filter: SessionFilter = {}, signal?: AbortSignal): Promise<SessionInfo[]> {
    const label = [`${LABEL.managed}=1`, ...(filter.includeCompute ? [] : [`${LABEL.mode}=code`])];
    if (filter.name) label.push(`${LABEL.session}=${filter.name}`);
    if (filter.workspaceFolder) label.push(`${LABEL.workspace}=${filter.workspaceFolder}`);
    if (filter.scope && filter.scope.kind !== 'workspace') label.push(`${LABEL.scope}=${filter.scope.kind}`);
    if (filter.scope?.key) label.push(`${LABEL.scopeKey}=${filter.scope.key}`);
    const containers = await this.guard(() => listContainers(this.docker, label, signal), signal);
    this.deaths.start();
    return (
      containers
        .map(sessionFromSummary)
        // The workspace scope also matches sessions made before scopes had a label.
        .filter((session) => !filter.scope || filter.scope.kind !== 'workspace' || session.scope.kind === 'workspace')
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    );
  }

  async remove(id: string, signal?: AbortSignal): Promise<RemoveOutcome> {
    this.deaths.markRemoving(id); // our own removal is no death to report
    const container = this.docker.getContainer(id);
    // Before it goes: a read-write session's workspace is swept for setuid bits; afterwards its placeholders go.
    const inspected = await inspectContainer(container, signal).catch(() => undefined);
    const notices = inspected ? await sweepBeforeRemoval(this.docker, container, inspected).catch(() => []) : [];
    await this.folderWatches.stop(id);
    this.stopRecords.forget(id);
    // The way out goes first: the proxy refuses from now on, and the relay goes with it. A sandbox
    // already gone took its relay along (their shared process namespace); a proxy may still be stopping.
    const spec = inspected ? specFromLabels(inspected.Config.Labels) : undefined;
    if (!inspected || (spec && networkTier(spec) === 'allowlist'))
      await this.egress.remove(id, { relays: Boolean(inspected), signal });
    await this.guard(async () => {
      try {
        await container.remove(withSignal({ force: true, v: true }, signal));
      } catch (error) {
        const status = (error as { statusCode?: number }).statusCode;
        if (status === 404) return; // already gone
        // Its removal is under way (AutoRemove after its run, or another client): done when it is gone.
        if (status === 409) return void (await waitRemoved(container, signal));
        this.deaths.unmarkRemoving(id);
        throw error;
      }
    }, signal);
    if (inspected) await releasePlaceholders(this.docker, inspected.Config.Labels).catch(() => undefined);
    // A copy session's baseline goes with it.
    await forgetBaseline(defaultStateDir(), inspected?.Id ?? id).catch(() => undefined);
    await forgetBaseObjects(defaultStateDir(), inspected?.Id ?? id).catch(() => undefined);
    return { notices };
  }

  async networkDecisions(id: string, query?: DecisionQuery): Promise<NetworkDecisionPage> {
    return this.egress.decisions(id, query);
  }

  /**
   * Whether the kernel's OOM killer struck this container since `sinceMs`: from the engine's event log,
   * or on Podman, which logs no such event for a command run in it, from the kernel's count (as `user`).
   */
  async oomSince(containerId: string, sinceMs: number, user?: string): Promise<boolean> {
    if ((await this.engineFlavor()) !== 'docker') {
      if (!user) return false;
      const count = await oomKillCount(this.docker, this.docker.getContainer(containerId), user);
      return this.oomKills.grew(containerId, count);
    }
    const events = await this.guard(() =>
      this.docker.getEvents({
        since: ((sinceMs - 1000) / 1000).toFixed(3),
        until: (Date.now() / 1000).toFixed(3),
        filters: { container: [containerId], event: ['oom'] },
      } as object),
    );
    const text = await new Promise<string>((resolve, reject) => {
      let body = '';
      events.on('data', (chunk: Buffer) => (body += chunk.toString()));
      events.on('end', () => resolve(body));
      events.on('error', reject);
    });
    return readEventLines(text).some((event) => (event.Action ?? event.status) === 'oom');
  }

  /** Docker or Podman (here or remote), asked once per engine and again after a failure. */
  /** Podman, asked once: a rootless one on cgroup v1 enforces no limit, and gets no sandbox. */
  private checkPodmanLimits(signal?: AbortSignal): Promise<void> {
    this.podmanLimits ??= this.guard(() => engineInfo(this.docker, signal)).then(
      (info) => {
        const problem = unenforcedLimitsProblem(info);
        if (problem)
          throw new SandboxError(
            'unsupported',
            problem,
            'Use rootful Podman (sudo systemctl start podman.socket, then DOCKER_HOST=unix:///run/podman/podman.sock), Docker, or rootless Podman on a host with cgroup v2.',
          );
      },
      (error: unknown) => {
        this.podmanLimits = undefined;
        throw error;
      },
    );
    return this.podmanLimits;
  }

  private engineFlavor(): Promise<EngineFlavor> {
    this.flavor ??= this.guard(() => engineFlavor(this.docker, this.endpoint.description.startsWith('unix://'))).catch(
      (error: unknown) => {
        this.flavor = undefined;
        throw error;
      },
    );
    return this.flavor;
  }

  async dispose(): Promise<void> {
    await this.computeRuns.dispose();
    await this.folderWatches.dispose();
    this.deaths.dispose();
    this.images.reset();
  }
}

/** The proxy processes run from the CLI script beside this bundle (dist/cli.js), when there is one. */
function bundledEgressProxies(env: NodeJS.ProcessEnv | undefined): EgressProxies | undefined {
  const cliPath = join(__dirname, 'cli.js');
  return existsSync(cliPath) ? new EgressProxies({ nodePath: process.execPath, cliPath, env }) : undefined;
}

/** dockerode loads with the first engine, not with the extension, so that activation stays light (README, Performance). */
function loadDockerode(): typeof Docker {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('dockerode') as typeof Docker;
}

/** Resolves once the engine has removed the container (at once when it is gone already). */
async function waitRemoved(container: Docker.Container, signal?: AbortSignal): Promise<void> {
  try {
    await container.wait(withSignal({ condition: 'removed' as const }, signal));
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404) throw error;
  }
}
