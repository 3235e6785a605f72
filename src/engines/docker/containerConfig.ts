/**
 * The hardened container a sandbox runs in, as a Docker Engine create request. Pure: unit-tested
 * without an engine.
 */
import type Docker from 'dockerode';
import { WORKSPACE_DIR } from '../../core/files/paths';
import type { SessionClient, SessionScope } from '../../core/engine/engine';
import { networkTier } from '../../core/network/allowlist';
import type { SandboxSpec } from '../../core/spec/spec';
import { proxyEnv } from './egress';
import { LABEL } from './labels';
import { SECCOMP_SECURITY_OPT } from './seccompProfile';
import { writablePlaces, type EngineDialect } from './writablePlaces';

export const SANDBOX_HOME = '/home/sandbox';
/** The unprivileged user code runs as when the workspace is not shared read-write. */
export const SANDBOX_USER = { uid: 1000, gid: 1000 };
/** npm's --global prefix for a spec's npm packages, outside /workspace so that a read-only mount does not matter. */
export const NPM_PREFIX = `${SANDBOX_HOME}/.local`;
/** Where require() finds them, through NODE_PATH. */
export const NPM_MODULES = `${NPM_PREFIX}/lib/node_modules`;

/** Whether the sandbox installs packages when it opens, and so needs a network for that step. */
export function installsPackages(spec: SandboxSpec): boolean {
  return spec.pipPackages.length > 0 || spec.npmPackages.length > 0;
}

export interface ContainerPlan {
  name: string;
  image: string;
  spec: SandboxSpec;
  sessionName?: string;
  workspaceFolder?: string;
  scope?: SessionScope;
  client?: SessionClient;
  /** The process that owns the session (OpenOptions.ownedByProcess). */
  owner?: { pid: number; host: string };
  user: { uid: number; gid: number };
  createdAt: string;
  notices: string[];
  /** Podman's API takes other tmpfs and network options than Docker's (writablePlaces.ts); Docker's when not given. */
  dialect?: EngineDialect;
}

/**
 * Who runs code. With the workspace mounted on Linux, the host user's ids, so that the sandbox reads
 * what the user can read and files written belong to the user; never root.
 */
export function sandboxUser(
  spec: SandboxSpec,
  host: { uid?: number; gid?: number; platform: string },
): { uid: number; gid: number } {
  if (
    spec.workspaceAccess !== 'none' &&
    host.platform === 'linux' &&
    host.uid &&
    host.gid !== undefined &&
    host.gid !== 0
  ) {
    return { uid: host.uid, gid: host.gid };
  }
  return SANDBOX_USER;
}

export function containerCreateOptions(plan: ContainerPlan): Docker.ContainerCreateOptions {
  const { spec } = plan;
  const labels: Record<string, string> = {
    [LABEL.managed]: '1',
    [LABEL.mode]: spec.mode,
    [LABEL.created]: plan.createdAt,
    // Without the environment's values: they may be secrets, and labels are shown by every docker ps.
    [LABEL.spec]: JSON.stringify({ ...spec, env: Object.fromEntries(Object.keys(spec.env).map((name) => [name, ''])) }),
    [LABEL.user]: `${plan.user.uid}:${plan.user.gid}`,
  };
  if (plan.sessionName) labels[LABEL.session] = plan.sessionName;
  if (plan.sessionName || plan.scope) {
    labels[LABEL.scope] = plan.scope?.kind ?? 'workspace';
    if (plan.scope?.key) labels[LABEL.scopeKey] = plan.scope.key;
  }
  if (plan.client) labels[LABEL.client] = plan.client;
  if (plan.owner) {
    labels[LABEL.ownerPid] = String(plan.owner.pid);
    labels[LABEL.ownerHost] = plan.owner.host;
  }
  if (plan.workspaceFolder) labels[LABEL.workspace] = plan.workspaceFolder;
  if (plan.notices.length) labels[LABEL.notices] = JSON.stringify(plan.notices);

  const mounts: Docker.MountSettings[] = [];
  if (spec.workspaceAccess === 'ro' || spec.workspaceAccess === 'rw') {
    if (!plan.workspaceFolder) throw new Error('workspace access needs a workspace folder');
    mounts.push({
      Type: 'bind',
      Source: plan.workspaceFolder,
      Target: WORKSPACE_DIR,
      ReadOnly: spec.workspaceAccess === 'ro',
    });
  }

  const env = {
    HOME: SANDBOX_HOME,
    LANG: 'C.UTF-8',
    PYTHONUNBUFFERED: '1',
    PYTHONDONTWRITEBYTECODE: '1',
    PIP_DISABLE_PIP_VERSION_CHECK: '1',
    // pip install --user works for agent code on Debian-based images too; it only touches $HOME.
    PIP_BREAK_SYSTEM_PACKAGES: '1',
    NPM_CONFIG_UPDATE_NOTIFIER: 'false',
    ...spec.env,
    ...(spec.npmPackages.length ? { NODE_PATH: [NPM_MODULES, spec.env.NODE_PATH].filter(Boolean).join(':') } : {}),
    // The allowlist's only way out: the relay on loopback (egress.ts).
    ...(networkTier(spec) === 'allowlist' ? proxyEnv() : {}),
  };

  // Cheaper than NetworkMode "none" (no network namespace setup) and leaves only loopback.
  // With packages the default network is on for the install step; packages.ts disconnects it before anything runs.
  // An allowlist sandbox never has a network: its packages come through the proxy too.
  const networkDisabled = !spec.network && (networkTier(spec) === 'allowlist' || !installsPackages(spec));
  return {
    name: plan.name,
    Image: plan.image,
    // An idle process keeps the container alive; every call is an exec, so compute and code mode share one path.
    Entrypoint: ['sleep'],
    Cmd: ['infinity'],
    User: `${plan.user.uid}:${plan.user.gid}`,
    WorkingDir: WORKSPACE_DIR,
    Env: Object.entries(env).map(([key, value]) => `${key}=${value}`),
    Labels: labels,
    NetworkDisabled: networkDisabled,
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    Tty: false,
    HostConfig: {
      // Podman's API ignores NetworkDisabled (the container got its default network): it needs the mode.
      ...(networkDisabled && plan.dialect === 'podman' ? { NetworkMode: 'none' } : {}),
      Init: true,
      CapDrop: ['ALL'],
      // The engine's default seccomp profile, minus setuid/setgid modes (seccompProfile.ts).
      SecurityOpt: ['no-new-privileges', SECCOMP_SECURITY_OPT],
      Privileged: false,
      Memory: spec.limits.memoryBytes,
      MemorySwap: spec.limits.memoryBytes,
      NanoCpus: Math.round(spec.limits.cpus * 1e9),
      PidsLimit: spec.limits.pids,
      // Explicit limits within any host's hard limits; Podman needs them to start at all.
      Ulimits: [
        { Name: 'nofile', Soft: 4096, Hard: 4096 },
        { Name: 'nproc', Soft: 4096, Hard: 4096 },
        { Name: 'core', Soft: 0, Hard: 0 },
        // No single file past the cap: a runaway write fails with EFBIG instead of filling the engine's disk.
        { Name: 'fsize', Soft: spec.limits.maxProcessFileBytes, Hard: spec.limits.maxProcessFileBytes },
      ],
      IpcMode: 'private',
      // Nothing on the root file system is writable; every writable place is a capped tmpfs (writablePlaces.ts).
      ReadonlyRootfs: true,
      Tmpfs: writablePlaces(spec, plan.user, SANDBOX_HOME, plan.dialect),
      Mounts: mounts,
      LogConfig: { Type: 'none', Config: {} },
      RestartPolicy: { Name: 'no' },
      AutoRemove: false,
    },
  };
}
