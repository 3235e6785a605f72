/**
 * The virtual engine: sandboxes without a daemon, on just-bash (bash and its commands, CPython in
 * WebAssembly, QuickJS where Node.js allows). Each sandbox is a worker thread of this process with
 * its own virtual file system; sessions live as long as this process. A lighter isolation model
 * than a container, and every session says so.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type {
  EngineCapabilities,
  EngineInfo,
  OpenOptions,
  Sandbox,
  SandboxEngine,
  SessionFilter,
  SessionInfo,
} from '../../core/engine/engine';
import { missingCapabilities } from '../../core/engine/engineCapabilities';
import { folderLimitReason, placeBytes } from '../../core/limits/diskLimit';
import { SandboxError } from '../../core/errors';
import { FolderGrowthWatch } from '../../core/limits/folderGrowth';
import { networkTier } from '../../core/network/allowlist';
import type { DecisionQuery, NetworkDecisionPage } from '../../core/network/decisionLog';
import { WORKSPACE_DIR } from '../../core/files/paths';
import { PROTECTED_PATHS } from '../../core/policy/protectedPaths';
import { sandboxSpecSchema, type Runtime, type SandboxSpec } from '../../core/spec/spec';
import { MiB } from '../../core/spec/units';
import type { AllowlistNetwork } from './allowlistFetch';
import { DecisionMemory } from './decisionMemory';
import { javascriptSupported, justBashVersion, workerLocation, type WorkerLocation } from './location';
import type { WorkerClient } from './workerClient';
import { WarmWorkers } from './warmWorkers';
import { VirtualSandbox } from './virtualSandbox';

export interface VirtualEngineOptions {
  /** Where the worker is; found beside the bundle or in the source tree by default. */
  location?: WorkerLocation;
  /** The Node.js version that decides whether JavaScript runs (tests pass another). */
  nodeVersion?: string;
}

/** Most bytes of one response that curl or wget takes in (held in the worker's memory, like its output). */
const MAX_RESPONSE_BYTES = 64 * MiB;
/** Closed sandboxes whose network decisions stay readable (the panel and the activity log read them after a run). */
const MOST_CLOSED_DECISIONS = 64;

const DOCKER_HINT =
  'Use the Docker engine for it (setting agentSandbox.engine: "docker", or --engine docker on the command line).';

export class VirtualEngine implements SandboxEngine {
  readonly kind = 'virtual' as const;
  readonly capabilities: EngineCapabilities;
  private readonly location: WorkerLocation;
  private readonly nodeVersion: string;
  private readonly sessions = new Map<string, VirtualSandbox>();
  private readonly ephemeral = new Set<VirtualSandbox>();
  private readonly decisions = new Map<string, DecisionMemory>();
  private readonly closedDecisions: string[] = [];
  /** The next sandbox's worker, started when the last one was taken (warmWorkers.ts). */
  private readonly workers: WarmWorkers;

  constructor(options: VirtualEngineOptions = {}) {
    this.location = options.location ?? workerLocation();
    this.nodeVersion = options.nodeVersion ?? process.versions.node;
    this.workers = new WarmWorkers(this.location);
    const languages: Runtime[] = javascriptSupported(this.nodeVersion)
      ? ['python', 'node', 'bash']
      : ['python', 'bash'];
    this.capabilities = {
      isolation: 'in-process',
      processes: false,
      packages: false,
      network: false,
      // curl and wget through our fetch in the worker (allowlistFetch.ts); Python has no sockets.
      networkAllowlist: true,
      languages,
      memoryLimit: false,
      persistentSessions: false,
    };
  }

  async info(): Promise<EngineInfo> {
    return {
      kind: 'virtual',
      product: 'just-bash (embedded)',
      version: justBashVersion(this.location),
      endpoint: 'in-process (no daemon)',
      os: `Node.js ${this.nodeVersion}`,
    };
  }

  async open(specInput: SandboxSpec, options: OpenOptions = {}): Promise<Sandbox> {
    const spec = sandboxSpecSchema.parse(specInput);
    this.refuseWhatCannotRun(spec, options);
    const notices = this.notices(spec, options);
    const protectedPaths = [...(options.protectedPaths ?? PROTECTED_PATHS)];
    const network: AllowlistNetwork | undefined =
      networkTier(spec) === 'allowlist'
        ? {
            allow: spec.networkAllow,
            hosts: spec.networkHosts,
            maxResponseBytes: Math.min(MAX_RESPONSE_BYTES, placeBytes(spec.limits)),
          }
        : undefined;
    const client = await this.workers.take(
      {
        access: spec.workspaceAccess,
        folder: spec.workspaceAccess === 'none' ? undefined : options.workspaceFolder,
        python: true,
        javascript: this.capabilities.languages.includes('node'),
        // The disk limit, within the half of the memory that files always had here (core/limits/diskLimit.ts).
        maxMemoryBytes: placeBytes(spec.limits),
        maxFileReadBytes: spec.limits.memoryBytes,
        protectedPaths,
        ...(network ? { network } : {}),
        pythonMemoryBytes: spec.limits.memoryBytes,
      },
      Math.max(64, Math.floor(spec.limits.memoryBytes / MiB)),
    );
    const id = randomBytes(32).toString('hex');
    const decisions = network ? new DecisionMemory() : undefined;
    if (decisions) {
      client.onDecision((decision) => decisions.append(decision));
      this.decisions.set(id, decisions);
    }
    const info: SessionInfo = {
      id,
      name: options.name,
      engine: 'virtual',
      mode: spec.mode,
      runtime: spec.runtime,
      image: `just-bash ${justBashVersion(this.location)}`,
      spec,
      workspaceAccess: spec.workspaceAccess,
      workspaceFolder: options.workspaceFolder,
      scope: options.scope ?? { kind: 'workspace' },
      ...(options.client ? { client: options.client } : {}),
      ...(options.ownedByProcess ? { owner: { pid: process.pid, host: hostname(), pooled: false } } : {}),
      network: false,
      createdAt: new Date().toISOString(),
      state: 'running',
      notices,
      ...(spec.workspaceAccess === 'rw' ? { protectedPaths } : {}),
    };
    const watch = this.watchFolder(spec, options.workspaceFolder, client);
    const sandbox: VirtualSandbox = new VirtualSandbox(
      client,
      info,
      () => {
        watch?.stop();
        this.workers.released();
        this.sessions.delete(id);
        this.ephemeral.delete(sandbox);
        if (decisions) this.keepClosedDecisions(id);
      },
      decisions,
    );
    try {
      if (options.files?.length)
        await client.request({
          type: 'place',
          files: options.files.map((file) => ({ path: file.path, data: file.data, mode: file.mode })),
        });
    } catch (error) {
      await sandbox.close();
      throw error;
    }
    if (spec.mode === 'code' && !options.ephemeral) this.sessions.set(id, sandbox);
    else this.ephemeral.add(sandbox);
    return sandbox;
  }

  async attach(id: string): Promise<Sandbox> {
    const sandbox = this.sessions.get(id);
    if (!sandbox)
      throw new SandboxError(
        'session-not-found',
        `No virtual session with id ${id} exists in this process; it was closed, or it belonged to a process that has ended.`,
        'Open a new session with sandbox_open. Sessions of the virtual engine live only as long as the process that opened them.',
      );
    const why = sandbox.deathReason;
    if (why)
      throw new SandboxError(
        'session-dead',
        `The session ${sandbox.info.name ?? id.slice(0, 12)} is no longer running: ${why}.`,
        'Its files are gone. Close it, then open a new session.',
      );
    return sandbox;
  }

  async list(filter: SessionFilter = {}): Promise<SessionInfo[]> {
    return [...this.sessions.values()]
      .map((sandbox) => ({ ...sandbox.info, state: sandbox.deathReason ? ('stopped' as const) : ('running' as const) }))
      .filter(
        (info) =>
          (!filter.name || info.name === filter.name) &&
          (!filter.workspaceFolder || info.workspaceFolder === filter.workspaceFolder),
      )
      .filter(
        (info) =>
          !filter.scope ||
          (info.scope.kind === filter.scope.kind && (!filter.scope.key || info.scope.key === filter.scope.key)),
      )
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async remove(id: string): Promise<void> {
    await this.sessions.get(id)?.close();
  }

  /** The network decisions of an allowlist sandbox of this process, open or closed a while ago (empty for others). */
  async networkDecisions(id: string, query?: DecisionQuery): Promise<NetworkDecisionPage> {
    return (this.decisions.get(id) ?? new DecisionMemory()).read(query);
  }

  deathReason(id: string): string | undefined {
    return this.sessions.get(id)?.deathReason;
  }

  /** Resolves once the worker kept for the next sandbox has loaded just-bash (a benchmark waits for it between calls). */
  async warmedUp(): Promise<void> {
    await this.workers.settled();
  }

  async dispose(): Promise<void> {
    this.workers.dispose();
    await Promise.all([...this.sessions.values(), ...this.ephemeral].map((sandbox) => sandbox.close()));
  }

  /** A closed sandbox's decisions stay readable until MOST_CLOSED_DECISIONS later ones closed. */
  private keepClosedDecisions(id: string): void {
    this.closedDecisions.push(id);
    while (this.closedDecisions.length > MOST_CLOSED_DECISIONS) this.decisions.delete(this.closedDecisions.shift()!);
  }

  /** A folder mounted read-write cannot be capped: its worker is ended once it grew past the disk or inode limit (core/limits/folderGrowth.ts). */
  private watchFolder(
    spec: SandboxSpec,
    folder: string | undefined,
    client: WorkerClient,
  ): FolderGrowthWatch | undefined {
    if (spec.workspaceAccess !== 'rw' || !folder) return undefined;
    const limits = { bytes: spec.limits.diskBytes, inodes: spec.limits.inodes };
    const watch = new FolderGrowthWatch({
      folder,
      limits,
      onExceeded: (growth) => client.kill(folderLimitReason(folder, growth, limits)),
    });
    client.onExit(() => watch.stop());
    return watch;
  }

  /** What this engine cannot do fails up front, with the Docker engine named as the way to get it. */
  private refuseWhatCannotRun(spec: SandboxSpec, options: OpenOptions): void {
    if (spec.boundSecrets?.length)
      throw new SandboxError(
        'unsupported',
        `The virtual engine cannot keep bound secrets (${spec.boundSecrets.map((secret) => secret.name).join(', ')}) outside the sandbox: its network has no proxy that adds them.`,
        `Open the sandbox without --secret, or use a container. ${DOCKER_HINT}`,
      );
    if (!this.capabilities.languages.includes(spec.runtime)) {
      if (spec.runtime === 'node') {
        throw new SandboxError(
          'unsupported',
          `The virtual engine runs JavaScript only on Node.js 22.6 or newer; this process runs Node.js ${this.nodeVersion}.`,
          `Run Python or bash instead, or run JavaScript in a container. ${DOCKER_HINT}`,
        );
      }
      throw new SandboxError(
        'unsupported',
        `The virtual engine has no runtime "${spec.runtime}": it runs ${this.capabilities.languages.join(', ')}, not a full Linux system.`,
        `Use runtime bash for shell commands. For a Linux userland (apt-get, native programs): ${DOCKER_HINT}`,
      );
    }
    const packages = [...spec.pipPackages, ...spec.npmPackages];
    if (packages.length) {
      throw new SandboxError(
        'unsupported',
        `The virtual engine cannot install packages (${packages.join(', ')}): it has no pip or npm and no network.`,
        `Use the Python standard library, or install packages in a container. ${DOCKER_HINT}`,
      );
    }
    if (spec.workspaceAccess === 'copy') {
      throw new SandboxError(
        'unsupported',
        'The virtual engine cannot copy the workspace folder yet (workspace access "copy" needs a container).',
        `Use workspace access ro here (writes under /workspace stay in the session's memory), or a container. ${DOCKER_HINT}`,
      );
    }
    if (spec.workspaceAccess !== 'none' && !options.workspaceFolder) {
      throw new SandboxError(
        'invalid-input',
        `Workspace access "${spec.workspaceAccess}" needs a workspace folder to mount.`,
        'Open a folder, or set workspace access to none.',
      );
    }
    if (spec.workspaceAccess === 'ro' && options.files?.some((file) => file.path.startsWith(`${WORKSPACE_DIR}/`))) {
      throw new SandboxError(
        'read-only',
        'Files cannot be staged into a read-only workspace.',
        'Read them from the workspace instead, or ask for read-write access.',
      );
    }
  }

  private notices(spec: SandboxSpec, options: OpenOptions): string[] {
    const notices = [
      `Virtual engine: in-process isolation, lighter than a container (${missingCapabilities(this.capabilities).join(', ')}).`,
    ];
    if (spec.mode === 'code' && !options.ephemeral)
      notices.push('This session lives in this process only: it does not survive a restart of VS Code or the CLI.');
    if (spec.network)
      notices.push('Network access was asked for, but the virtual engine has no network; the sandbox runs offline.');
    else if (networkTier(spec) === 'allowlist') notices.push(allowlistNotice(spec));
    if (spec.image) notices.push(`The virtual engine runs no images; "${spec.image}" was not used.`);
    if (spec.workspaceAccess === 'ro')
      notices.push(
        "The workspace folder is read-only: writes under /workspace stay in this session's memory and never reach the folder.",
      );
    return notices;
  }
}

/** What the allowlist tier is here: curl and wget reach the names (the engine makes their requests), nothing else does. */
function allowlistNotice(spec: SandboxSpec): string {
  const names = spec.networkAllow.map((entry) => {
    const local = /^localhost:(\d+)$/.exec(entry);
    const mapped = Object.hasOwn(spec.networkHosts, entry) ? spec.networkHosts[entry] : undefined;
    return local ? `${entry} (port ${local[1]} of this machine)` : mapped ? `${entry} (mapped to ${mapped})` : entry;
  });
  return (
    `Network by allowlist: curl and wget reach ${names.join(', ')} and nothing else; another name or an IP address gets HTTP 403 naming the reason. ` +
    'Python has no sockets here (urllib, requests and pip cannot connect), and no proxy is set: run curl or wget for what the task needs from the network.'
  );
}
