/**
 * What each engine can do, and how results say it: the first line of every run result names the
 * engine and what it lacks, and sandbox_open's answer spells the capabilities out.
 */
import type { EngineCapabilities, EngineKind } from './engine';

/** A hardened container (Docker Engine API): real processes, packages, network when allowed, an enforced memory limit. */
export const CONTAINER_CAPABILITIES: EngineCapabilities = {
  isolation: 'container',
  processes: true,
  packages: true,
  network: true,
  networkAllowlist: true,
  languages: ['python', 'node', 'bash', 'linux'],
  memoryLimit: true,
  persistentSessions: true,
};

/** What the engine lacks, in a few words; empty for a container engine that has everything. */
export function missingCapabilities(capabilities: EngineCapabilities): string[] {
  const missing: string[] = [];
  if (!capabilities.processes) missing.push('no real processes');
  if (!capabilities.packages) missing.push('no package installs');
  if (!capabilities.network) missing.push('no network');
  if (!capabilities.memoryLimit) missing.push('no memory kill');
  return missing;
}

/** The engine as a run result's first line names it: "docker", or "virtual (in-process isolation; no real processes, …)". */
export function engineLabel(kind: EngineKind, capabilities: EngineCapabilities): string {
  const notes = [
    ...(capabilities.isolation === 'container' ? [] : [`${capabilities.isolation} isolation`]),
    ...missingCapabilities(capabilities),
  ];
  return notes.length ? `${kind} (${notes.join(', ')})` : kind;
}

/** One line for sandbox_open's answer: the isolation model and what works in it. */
export function capabilitiesLine(kind: EngineKind, capabilities: EngineCapabilities): string {
  const isolation =
    capabilities.isolation === 'container'
      ? 'a hardened container'
      : "an interpreter inside the editor's process (lighter than a container)";
  const has = (flag: boolean, yes: string, no: string) => (flag ? yes : no);
  return [
    `engine ${kind}: isolation by ${isolation}`,
    `languages ${capabilities.languages.join(', ')}`,
    has(
      capabilities.processes,
      'real processes',
      'no real processes (builtin commands only; background jobs run in the foreground)',
    ),
    has(
      capabilities.packages,
      'package installs',
      'no package installs (pip, npm, apt-get are unavailable; the standard library is)',
    ),
    has(capabilities.network, 'network when allowed', 'no network'),
    has(capabilities.memoryLimit, 'memory limit enforced', 'no memory kill'),
    has(capabilities.persistentSessions, 'sessions survive a restart', 'sessions end with this process'),
  ].join(' · ');
}
