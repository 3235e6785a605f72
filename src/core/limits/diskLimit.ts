/**
 * "disk limit reached": how a full writable place shows (a write fails with ENOSPC, whatever the
 * engine), and what the model and the user are told to do about it. Shared by every engine.
 */
import { SandboxError } from '../errors';
import type { Limits } from '../spec/spec';
import { formatSize } from '../spec/units';

/** What a program, tar, or the virtual engine's file system prints when a write finds no room (bytes or inodes). */
const DISK_FULL = /No space left on device|Disk quota exceeded|\bENOSPC\b/;

export const DISK_LIMIT_REACHED = 'disk limit reached';

export function isDiskFull(text: string): boolean {
  return DISK_FULL.test(text);
}

/**
 * The bytes each writable place holds: the disk limit, but at most half the memory limit. Both
 * engines keep files in memory (a container's places are tmpfs, whose pages are charged to its memory
 * cgroup; the virtual engine's file system is in its worker), and files that filled all of it would
 * leave no memory to run even `rm` (measured in a container: every later exec was OOM-killed). Half
 * keeps a session with one full place usable, and is what the virtual engine always allowed.
 */
export function placeBytes(limits: Pick<Limits, 'diskBytes' | 'memoryBytes'>): number {
  return Math.min(limits.diskBytes, Math.floor(limits.memoryBytes / 2));
}

/** What the limits are, in words: "64 MiB and 5,000 files per writable place". */
export function describeDiskLimit(limits: Pick<Limits, 'diskBytes' | 'memoryBytes' | 'inodes'>): string {
  const bytes = placeBytes(limits);
  const clamped =
    bytes < limits.diskBytes
      ? ` (limits.disk is ${formatSize(limits.diskBytes)}, but files are kept in memory, so a place holds at most half the ${formatSize(limits.memoryBytes)} memory limit)`
      : '';
  return `${formatSize(bytes)} and ${limits.inodes.toLocaleString('en-US')} files per writable place${clamped}`;
}

/** What to do about a full place. */
export const DISK_LIMIT_NEXT =
  'Delete files you no longer need (the space is free at once and the session stays usable), write less, or ask the user to raise limits.disk and limits.inodes ' +
  '(settings agentSandbox.limits.disk and agentSandbox.limits.inodes, --disk and --inodes on the command line, limits.disk and limits.inodes in a .prompt sandbox block), and limits.memory with them, since files are kept in memory.';

/** The "Next:" text after a write found no room. */
export function diskLimitHint(limits: Pick<Limits, 'diskBytes' | 'memoryBytes' | 'inodes'>): string {
  return `${DISK_LIMIT_REACHED}: a write failed with "No space left on device"; /tmp, $HOME and a private /workspace each hold ${describeDiskLimit(limits)}. ${DISK_LIMIT_NEXT}`;
}

/** A file operation that found no room. */
export function diskLimitError(
  path: string,
  action: string,
  limits: Pick<Limits, 'diskBytes' | 'memoryBytes' | 'inodes'>,
): SandboxError {
  return new SandboxError(
    'disk-limit',
    `Cannot ${action} ${path}: ${DISK_LIMIT_REACHED} (${describeDiskLimit(limits)}).`,
    DISK_LIMIT_NEXT,
  );
}

/** Why a session whose read-write workspace folder grew past a limit was stopped; completes "... stopped it at T because ...". */
export function folderLimitReason(
  folder: string,
  growth: { bytes: number; inodes: number },
  limits: { bytes: number; inodes: number },
): string {
  const what =
    growth.bytes > limits.bytes
      ? `${formatSize(Math.max(0, growth.bytes))} (limit ${formatSize(limits.bytes)})`
      : `${growth.inodes.toLocaleString('en-US')} files and folders (limit ${limits.inodes.toLocaleString('en-US')})`;
  return `${DISK_LIMIT_REACHED}: it wrote ${what} into the workspace folder ${folder}, which is mounted read-write and cannot be capped, so the session was stopped (raise limits.disk or limits.inodes to allow more)`;
}
