/**
 * Space a sandbox holds in its read-write folder that no walk of the folder sees: files it deleted
 * while they were open (the blocks stay allocated until the last descriptor closes). Read from the
 * host's /proc for the container's processes, while the container is paused, so nothing moves.
 * Only files on the folder's own file system count; the sandbox's other writable places are capped
 * tmpfs mounts with devices of their own.
 */
import type Docker from 'dockerode';
import { readFile, readdir, readlink, stat } from 'node:fs/promises';
import type { Usage } from '../../core/limits/folderGrowth';

/** Most descriptors looked at per look, so that a sandbox that opens thousands costs a bounded walk. */
const MAX_DESCRIPTORS = 65_536;

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
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of descriptors) {
      if (++looked > MAX_DESCRIPTORS) return usage;
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
  const maps = await readFile(`/proc/${pid}/maps`, 'utf8').catch(() => '');
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
