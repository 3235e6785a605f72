/**
 * The seccomp profile of every sandbox container: the Docker Engine's default profile with the
 * setuid/setgid rules of scripts/generateSeccompProfile.ts, which writes seccompProfile.json (never
 * edit that by hand). The sandbox user owns what it writes in a read-write workspace, so a mode bit
 * that stuck there would be a setuid program of the host user; the filter refuses such modes in
 * every call that sets or creates with one (EPERM), and openat2 and io_uring (ENOSYS).
 */
import type Docker from 'dockerode';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { SandboxError } from '../../core/errors';
import type { WorkspaceAccess } from '../../core/spec/spec';
import { engineVersion } from './engineCalls';
import type { EngineVersion } from './engineJson';
import profile from './seccompProfile.json';

const PROFILE_TEXT = JSON.stringify(profile);
/** The HostConfig.SecurityOpt entry for Docker: its API takes the profile's JSON text after "seccomp=" (the CLI reads a file into that form). */
export const SECCOMP_SECURITY_OPT = `seccomp=${PROFILE_TEXT}`;

/** Which API dialect answers: Podman's Docker-compatible API reads "seccomp=" as a file path on the engine's machine. */
export type EngineFlavor = 'docker' | 'podman-local' | 'podman-remote';

export async function engineFlavor(docker: Docker, local: boolean): Promise<EngineFlavor> {
  return flavorOf(await engineVersion(docker), local);
}

/** Docker or Podman, from the engine's version answer. */
export function flavorOf(version: EngineVersion, local: boolean): EngineFlavor {
  const podman = (version.Components ?? []).some((component) => /podman/i.test(component.Name));
  return podman ? (local ? 'podman-local' : 'podman-remote') : 'docker';
}

/**
 * A remote Podman cannot take the profile (see withSeccompFor), and a read-write workspace is what it
 * protects: such a sandbox is refused there, before anything is made.
 */
export function checkSeccompSupport(flavor: EngineFlavor, access: WorkspaceAccess): void {
  if (flavor !== 'podman-remote' || access !== 'rw') return;
  throw new SandboxError(
    'unsupported',
    'A read-write workspace needs the sandbox seccomp profile, and a Podman engine on another machine cannot take it (its API reads the profile from a file on that machine).',
    'Use read-only workspace access with this engine, or a Docker Engine, or Podman on this machine.',
  );
}

/**
 * The create request in the engine's dialect. Podman on this machine gets the same profile as a file
 * (profileFile). A remote Podman cannot: its sandboxes keep the engine's own default profile.
 */
export async function withSeccompFor(
  options: Docker.ContainerCreateOptions,
  flavor: EngineFlavor,
  profileFile: () => Promise<string> = writeProfileFile,
): Promise<Docker.ContainerCreateOptions> {
  if (flavor === 'docker') return options;
  const replacement = flavor === 'podman-local' ? [`seccomp=${await profileFile()}`] : [];
  const host = options.HostConfig ?? {};
  const securityOpt = (host.SecurityOpt ?? []).flatMap((opt: string) =>
    opt === SECCOMP_SECURITY_OPT ? replacement : [opt],
  );
  return { ...options, HostConfig: { ...host, SecurityOpt: securityOpt } };
}

/** Writes the profile once under the user's cache folder, named by its digest, and returns the path. */
export async function writeProfileFile(
  folder = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'agent-sandbox'),
): Promise<string> {
  const digest = createHash('sha256').update(PROFILE_TEXT).digest('hex').slice(0, 16);
  const path = join(folder, `seccomp-${digest}.json`);
  if ((await readFile(path, 'utf8').catch(() => undefined)) === PROFILE_TEXT) return path;
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const partial = `${path}.${process.pid}.partial`;
  await writeFile(partial, PROFILE_TEXT, { mode: 0o644 });
  await rename(partial, path);
  return path;
}

/**
 * Rootless on cgroup v1 cannot enforce memory, pids or CPU limits (Podman ignores them there and
 * starts the container anyway): a sandbox on it would have no limit at all, so none is opened. Read
 * from the engine's /info answer (its SecurityOptions say "name=rootless").
 */
export function unenforcedLimitsProblem(info: unknown): string | undefined {
  const parsed = engineInfoSchema.safeParse(info);
  if (!parsed.success) return undefined;
  const rootless = (parsed.data.SecurityOptions ?? []).some((option) => /(^|,)name=rootless(,|$)/.test(option));
  return rootless && String(parsed.data.CgroupVersion ?? '') === '1'
    ? 'This engine runs rootless on cgroup v1, where it cannot enforce a sandbox’s memory, process and CPU limits (it ignores them there), so no sandbox is opened on it.'
    : undefined;
}

const engineInfoSchema = z.looseObject({
  SecurityOptions: z.array(z.string()).nullish(),
  CgroupVersion: z.union([z.string(), z.number()]).nullish(),
});
