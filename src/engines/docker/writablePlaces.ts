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
  return Object.fromEntries(Object.entries(places).map(([target, place]) => [target, tmpfsOptions(place)]));
}

function tmpfsOptions(place: Place): string {
  const options = [
    'rw',
    place.exec ? 'exec' : 'noexec',
    'nosuid',
    'nodev',
    `size=${place.bytes}`,
    `nr_inodes=${place.inodes}`,
  ];
  // The sandbox user's own places belong to it from the start: no root step before start is needed to hand them over.
  options.push(place.owner ? `mode=755,uid=${place.owner.uid},gid=${place.owner.gid}` : 'mode=1777');
  return options.join(',');
}
