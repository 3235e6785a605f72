/**
 * Space a sandbox holds in its read-write folder that no walk of the folder sees: files it deleted
 * while they were open (the blocks stay allocated until the last descriptor closes). Read from the
 * host's /proc for the container's processes, while the container is paused, so nothing moves.
 * Only files on the folder's own file system count; the sandbox's other writable places are capped
 * tmpfs mounts with devices of their own.
 */
import type Docker from 'dockerode';
import { open, readdir, readlink, stat } from 'node:fs/promises';
import type { Usage } from '../../core/limits/folderGrowth';

/** Most descriptors looked at per look, so that a sandbox that opens thousands costs a bounded walk. */
const MAX_DESCRIPTORS = 65_536;
/** Most of a process's memory map read per look. */
const MAX_MAPS_BYTES = 1024 * 1024;

export interface HeldSpace extends Usage {
  /**
   * The sandbox maps a deleted file of the folder's file system that it no longer holds open: its size
   * cannot be read without privileges, so the file system's own growth is taken instead.
   */
  opaque: boolean;
}

export async function heldDeletedFiles(container: Docker.Container, folderDevice: number): Promise<HeldSpace> {
  const top = (await container.top({ ps_args: '-o pid' } as object)) as { Titles?: string[]; Processes?: string[][] };
  const column = Math.max(0, (top.Titles ?? []).indexOf('PID'));
  const pids = (top.Processes ?? [])
    .map((row) => Number(row[column]))
    .filter((pid) => Number.isInteger(pid) && pid > 0);
  const seen = new Set<string>();
  const usage: HeldSpace = { bytes: 0, inodes: 0, opaque: false };
  let looked = 0;
  for (const pid of pids) {
    let descriptors: string[];
    try {
      descriptors = await readdir(`/proc/${pid}/fd`);
    } catch (error) {
      // Gone meanwhile: nothing held. Not ours to read: what it holds is unknown, so it counts as opaque.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') usage.opaque = true;
      continue;
    }
    for (const fd of descriptors) {
      // Past the cap (a sandbox that opens junk to hide what comes after): the file system's growth counts.
      if (++looked > MAX_DESCRIPTORS) return { ...usage, opaque: true };
      const link = `/proc/${pid}/fd/${fd}`;
      const target = await readlink(link).catch(() => '');
      if (!target.endsWith(' (deleted)')) continue;
      const file = await stat(link).catch(() => undefined);
      if (!file || file.dev !== folderDevice || file.nlink > 0) continue;
      const key = `${file.dev}:${file.ino}`;
      if (seen.has(key)) continue;
      seen.add(key);
      usage.bytes += file.blocks * 512;
      usage.inodes += 1;
    }
    if (!usage.opaque) usage.opaque = await mapsDeletedFile(pid, folderDevice, seen);
  }
  return usage;
}

/** Whether a process maps a deleted file on the device (major:minor in /proc/PID/maps) that no descriptor showed. */
async function mapsDeletedFile(pid: number, device: number, seen: ReadonlySet<string>): Promise<boolean> {
  const maps = await readCapped(`/proc/${pid}/maps`, MAX_MAPS_BYTES).catch(() => '');
  // Too many mappings to read cheaply: taken as hiding one.
  if (maps === undefined) return true;
  const wanted = `${major(device).toString(16).padStart(2, '0')}:${minor(device).toString(16).padStart(2, '0')}`;
  for (const line of maps.split('\n')) {
    if (!line.endsWith(' (deleted)')) continue;
    const [, , , dev, inode] = line.split(/\s+/);
    if (dev === wanted && !seen.has(`${device}:${inode}`)) return true;
  }
  return false;
}

/** The major and minor numbers of a Linux device number (glibc's encoding). */
function major(dev: number): number {
  return ((dev >>> 8) & 0xfff) | (Math.floor(dev / 2 ** 32) & ~0xfff);
}

function minor(dev: number): number {
  return (dev & 0xff) | ((dev >>> 12) & ~0xff);
}

/** A file's text up to `most` bytes; undefined when it is longer. */
async function readCapped(path: string, most: number): Promise<string | undefined> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(most + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await file.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > most) return undefined;
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    await file.close();
  }
}
