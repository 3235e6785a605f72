/**
 * Where a sandbox can write, and how each place is capped. Pure: unit-tested without an engine.
 *
 * The root file system is read-only and every place the sandbox user could write in it is a tmpfs
 * of its own with `size=` and `nr_inodes=`: the only per-container cap on bytes and inodes that the
 * engine offers everywhere. `--storage-opt size=` caps the writable layer only with overlay2 on xfs
 * with project quotas (or btrfs, zfs): not on ext4 (this project's machines) nor in Docker Desktop's
 * VM; it caps bytes but never inodes; and with the root file system read-only there is nothing left
 * for it to cap. So it is not used (see README, Security). The cost of tmpfs: its pages are charged
 * to the container's memory limit, so each place is also held under half of it (core/limits/diskLimit.ts).
 *
 * Which places: `find / -xdev -writable` as the sandbox user in the runtime images finds /tmp,
 * /var/tmp and /run/lock (and /var/lock, a link to it); $HOME and a private /workspace are the
 * sandbox user's own; /dev/shm is Docker's own tmpfs, replaced here to cap its inodes too.
 *
 * Podman's API takes fewer tmpfs options (its mount option check, up to 5.x: size, mode, U, tmpcopyup,
 * exec, suid, dev, rw): no `nr_inodes`, no `uid`/`gid`. There the sandbox user's places are handed over
 * with `U` (the container user's ids), and the count of files is not capped per place: each file's inode
 * is kernel memory charged to the container, so the memory limit bounds it (podmanDifferences).
 */
import { WORKSPACE_DIR } from '../../core/files/paths';
import { placeBytes } from '../../core/limits/diskLimit';
import type { SandboxSpec } from '../../core/spec/spec';
import { MiB } from '../../core/spec/units';

/** Docker's default size of /dev/shm, kept as its most (it held no more before there was a disk limit). */
const SHM_BYTES = 64 * MiB;
/** /run/lock holds lock files of a few bytes each. */
const LOCK_BYTES = 1 * MiB;
const LOCK_INODES = 1000;

/** Which engine's API reads the options (seccompProfile.ts tells them apart). */
export type EngineDialect = 'docker' | 'podman';

/** What a sandbox on Podman does not get, in the user's words: engine info (agent-sandbox engine --json, the log), README. */
export function podmanDifferences(local: boolean): string[] {
  return [
    'the number of files in a writable place (limits.inodes) is not capped: Podman refuses the tmpfs option nr_inodes, so only the memory limit bounds it (each file takes about 1 KiB of it)',
    ...(local ? [] : ['read-write sessions are refused: a Podman on another machine cannot take the seccomp profile']),
  ];
}

interface Place {
  bytes: number;
  inodes: number;
  /** Programs run from here: scripts in /workspace and /tmp, console scripts pip and npm install under $HOME. */
  exec: boolean;
  owner?: { uid: number; gid: number };
}

/** The tmpfs mounts of a sandbox, as HostConfig.Tmpfs (mount point → options). */
export function writablePlaces(
  spec: SandboxSpec,
  user: { uid: number; gid: number },
  home: string,
  dialect: EngineDialect = 'docker',
): Record<string, string> {
  const bytes = placeBytes(spec.limits);
  const inodes = spec.limits.inodes;
  const places: Record<string, Place> = {
    '/tmp': { bytes, inodes, exec: true },
    '/var/tmp': { bytes, inodes, exec: true },
    '/run/lock': { bytes: Math.min(bytes, LOCK_BYTES), inodes: Math.min(inodes, LOCK_INODES), exec: false },
    '/dev/shm': { bytes: Math.min(bytes, SHM_BYTES), inodes, exec: false },
    [home]: { bytes, inodes, exec: true, owner: user },
  };
  // A mounted workspace folder is the user's own disk: it is watched instead (see folderWatches.ts). A copy is private.
  if (spec.workspaceAccess === 'none' || spec.workspaceAccess === 'copy')
    places[WORKSPACE_DIR] = { bytes, inodes, exec: true, owner: user };
  return Object.fromEntries(Object.entries(places).map(([target, place]) => [target, tmpfsOptions(place, dialect)]));
}

function tmpfsOptions(place: Place, dialect: EngineDialect): string {
  const options = ['rw', place.exec ? 'exec' : 'noexec', 'nosuid', 'nodev', `size=${place.bytes}`];
  if (dialect === 'docker') options.push(`nr_inodes=${place.inodes}`);
  // The sandbox user's own places belong to it from the start: no root step before start is needed to hand them over.
  // Podman's U means the ids of the container's user, which is the owner here (containerConfig.ts).
  if (!place.owner) options.push('mode=1777');
  else if (dialect === 'docker') options.push(`mode=755,uid=${place.owner.uid},gid=${place.owner.gid}`);
  else options.push('mode=755', 'U');
  // Podman would copy the image's files at that path into the place first; Docker never does.
  if (dialect === 'podman') options.push('notmpcopyup');
  return options.join(',');
}
