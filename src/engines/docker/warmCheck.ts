/**
 * Whether a container a ready file names (sharedPool.ts) is what a claimant would have made itself:
 * a shared warm container of this user, for this configuration, with the claimant's own hardening.
 * The ready file is only a name; the engine's inspect answer is what is compared, before anything
 * is renamed or written to the container.
 */
import { isDeepStrictEqual } from 'node:util';
import type Docker from 'dockerode';
import { z } from 'zod';
import { LABEL } from './labels';
import { ONE_SHOT_RUNNER } from './oneShot';

export interface WarmExpectation {
  /** The name the filler gave it (warm-<suffix>). */
  name: string;
  key: string;
  owner: { host: string; uid: string };
  /** The claimant's create request, before oneShotCreateOptions. */
  expected: Docker.ContainerCreateOptions;
  /**
   * Podman describes a container in its own words (tmpfs options rewritten, capabilities and ulimits
   * renamed, NetworkDisabled not kept): there only what widens a sandbox is checked, beside who made it.
   */
  dialect?: 'docker' | 'podman';
}

/** What is compared of the engine's inspect answer; the rest of it may be anything. */
const inspectedSchema = z.looseObject({
  Name: z.string(),
  Config: z.looseObject({
    Image: z.string().optional(),
    User: z.string().nullish(),
    WorkingDir: z.string().nullish(),
    Env: z.array(z.string()).nullish(),
    Labels: z.record(z.string(), z.string()).nullish(),
    Entrypoint: z.union([z.array(z.string()), z.string()]).nullish(),
    NetworkDisabled: z.boolean().nullish(),
    Tty: z.boolean().nullish(),
  }),
  HostConfig: z.record(z.string(), z.unknown()).nullish(),
});

/** What Podman's inspect answer reports as the create request gave it (beside the namespaces, checked apart). */
const PODMAN_COMPARABLE = new Set([
  'Privileged',
  'CapAdd',
  'Binds',
  'Mounts',
  'Devices',
  'VolumesFrom',
  'ReadonlyRootfs',
  'Memory',
  'NanoCpus',
  'PidsLimit',
  'NetworkMode',
]);

/** Settings that widen a sandbox when set: unset unless the claimant sets them (then as it does). */
const WIDENING = [
  'Privileged',
  'CapAdd',
  'Binds',
  'Mounts',
  'Devices',
  'DeviceCgroupRules',
  'DeviceRequests',
  'VolumesFrom',
  'PidMode',
  'UTSMode',
  'UsernsMode',
  'Sysctls',
  'ExtraHosts',
  'Links',
  'OomKillDisable',
];

/** Why the container is not one to claim, or undefined when it is. */
export function warmContainerMismatch(answer: unknown, expectation: WarmExpectation): string | undefined {
  const parsed = inspectedSchema.safeParse(answer);
  if (!parsed.success) return 'the engine did not describe it as a container';
  const inspected = parsed.data;
  const { expected } = expectation;
  const config = inspected.Config;
  const host = inspected.HostConfig ?? {};
  const wanted = (expected.HostConfig ?? {}) as Record<string, unknown>;
  const labels = config.Labels ?? {};
  const podman = expectation.dialect === 'podman';
  if (inspected.Name.replace(/^\//, '') !== expectation.name) return `its name is ${inspected.Name}`;
  if (
    labels[LABEL.warm] !== expectation.key ||
    labels[LABEL.ownerUid] !== expectation.owner.uid ||
    labels[LABEL.ownerHost] !== expectation.owner.host
  )
    return 'it is not a warm container of this user and configuration';
  for (const [name, value] of Object.entries(expected.Labels ?? {}))
    if (labels[name] !== value) return `its label ${name} differs`;
  if (imageName(config.Image, podman) !== imageName(expected.Image, podman)) return `its image is ${config.Image}`;
  if ((config.User ?? '') !== (expected.User ?? '')) return `its user is ${config.User}`;
  if (expected.WorkingDir !== undefined && config.WorkingDir !== expected.WorkingDir) return 'its folder differs';
  if (!podman && Boolean(config.NetworkDisabled) !== Boolean(expected.NetworkDisabled)) return 'its network differs';
  if (config.Tty) return 'it has a terminal';
  const entrypoint = Array.isArray(config.Entrypoint) ? config.Entrypoint : [];
  if (!isDeepStrictEqual(entrypoint.slice(0, 4), ['sh', '-c', ONE_SHOT_RUNNER, 'agent-sandbox-run']))
    return 'its main process is not the runner';
  const env = new Set(config.Env ?? []);
  for (const entry of expected.Env ?? []) if (!env.has(entry)) return 'its environment differs';
  // Every setting the claimant makes, as it makes it (the hardening); the engine fills in the rest.
  // On Podman, only the settings that widen a sandbox, which it reports as given.
  const settings = podman
    ? PODMAN_COMPARABLE
    : new Set([...Object.keys(wanted).filter((name) => name !== 'AutoRemove'), ...WIDENING]);
  for (const setting of settings) {
    if (!isDeepStrictEqual(normalized(host[setting]), normalized(wanted[setting]))) return `its ${setting} differs`;
  }
  if (podman && ['PidMode', 'IpcMode', 'UTSMode'].some((mode) => /^(host|container:)/.test(String(host[mode] ?? ''))))
    return 'it shares a namespace of the host or another container';
  const network = String(host.NetworkMode ?? '');
  if (wanted.NetworkMode !== undefined ? network !== wanted.NetworkMode : /^(host|container:)/.test(network))
    return `its network mode is ${network}`;
  return undefined;
}

/** Podman names a local image localhost/NAME and a Docker Hub one docker.io/[library/]NAME, where the request said NAME. */
function imageName(image: string | undefined, podman: boolean): string | undefined {
  return podman ? image?.replace(/^(localhost|docker\.io)\//, '').replace(/^library\//, '') : image;
}

/** Unset, empty, false and zero are the same setting (the engine fills in its defaults). */
function normalized(value: unknown): unknown {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return undefined;
  if (Array.isArray(value)) {
    const items = value.map(normalized);
    return items.length === 0 ? undefined : items;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .map(([key, item]) => [key, normalized(item)] as const)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return entries.length === 0 ? undefined : Object.fromEntries(entries);
  }
  return value;
}
