/**
 * The engine calls whose answers the Docker engine code reads, each taking the caller's AbortSignal
 * and reading the JSON with engineJson.ts; and withSignal, the one way an AbortSignal reaches
 * dockerode (which takes it as the `abortSignal` option of every call).
 */
import type Docker from 'dockerode';
import {
  containerInspectSchema,
  containerListSchema,
  engineVersionSchema,
  execInspectSchema,
  readEngineJson,
  type ContainerInspect,
  type ContainerSummary,
  type EngineVersion,
  type ExecInspect,
} from './engineJson';

/**
 * A call's options with the signal that cancels it. Always a new object: dockerode deletes the
 * option from the object it is given, so a shared one would lose it after the first call.
 */
export function withSignal<T extends object>(options: T, signal: AbortSignal | undefined): T {
  return signal ? { ...options, abortSignal: signal } : { ...options };
}

export async function inspectContainer(container: Docker.Container, signal?: AbortSignal): Promise<ContainerInspect> {
  const answer: unknown = await container.inspect(withSignal({}, signal));
  return readEngineJson(containerInspectSchema, answer, `inspecting container ${container.id.slice(0, 12)}`);
}

/** Containers in any state whose labels match every `label` filter ("key=value" or "key"). */
export async function listContainers(
  docker: Docker,
  label: readonly string[],
  signal?: AbortSignal,
): Promise<ContainerSummary[]> {
  const answer: unknown = await docker.listContainers(
    withSignal({ all: true, filters: { label: [...label] } }, signal),
  );
  return readEngineJson(containerListSchema, answer, 'listing containers');
}

export async function inspectExec(exec: Docker.Exec, signal?: AbortSignal): Promise<ExecInspect> {
  const answer: unknown = await exec.inspect(withSignal({}, signal));
  return readEngineJson(execInspectSchema, answer, 'inspecting a command run in a container');
}

export async function engineVersion(docker: Docker, signal?: AbortSignal): Promise<EngineVersion> {
  const answer: unknown = await (
    docker.version as (this: Docker, options: object) => Promise<Docker.DockerVersion>
  ).call(docker, withSignal({}, signal));
  return readEngineJson(engineVersionSchema, answer, 'asking its version');
}

/**
 * The HTTP status of a failed call on a container, with Podman's "not running" read as Docker's:
 * Docker answers 409 to an exec in a stopped container, Podman 500 "container state improper".
 */
export function containerCallStatus(error: unknown): number | undefined {
  const { statusCode, json, message } = (error ?? {}) as {
    statusCode?: number;
    json?: { message?: string };
    message?: string;
  };
  if (statusCode === 500 && /container state improper/.test(json?.message ?? message ?? '')) return 409;
  return statusCode;
}

/** The engine's /info answer, unread (its callers take what they need with their own schema). */
export async function engineInfo(docker: Docker, signal?: AbortSignal): Promise<unknown> {
  return (docker.info as (this: Docker, options: object) => Promise<unknown>).call(docker, withSignal({}, signal));
}
