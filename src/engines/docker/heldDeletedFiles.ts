/**
 * Space a sandbox holds in its read-write folder that no walk of the folder sees: files it deleted
 * while they were open (the blocks stay allocated until the last descriptor closes). Read from the
 * host's /proc for the container's processes, while the container is paused, so nothing moves.
 * Only files on the folder's own file system count; the sandbox's other writable places are capped
 * tmpfs mounts with devices of their own.
 */
import type Docker from 'dockerode';
import { readdir, readlink, stat } from 'node:fs/promises';
import type { Usage } from '../../core/folderGrowth';

/** Most descriptors looked at per look, so that a sandbox that opens thousands costs a bounded walk. */
const MAX_DESCRIPTORS = 65_536;

export async function heldDeletedFiles(container: Docker.Container, folderDevice: number): Promise<Usage> {
  const top = (await container.top({ ps_args: '-o pid' } as object)) as { Titles?: string[]; Processes?: string[][] };
  const column = Math.max(0, (top.Titles ?? []).indexOf('PID'));
  const pids = (top.Processes ?? [])
    .map((row) => Number(row[column]))
    .filter((pid) => Number.isInteger(pid) && pid > 0);
  const seen = new Set<string>();
  const usage: Usage = { bytes: 0, inodes: 0 };
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
  }
  return usage;
}
