/**
 * The read-write workspace folders of the sessions this process holds, each watched for growth past
 * the disk and inode limits (core/folderGrowth.ts): the folder is the user's own disk, which no
 * container option caps. Past a limit the container is killed, with "disk limit reached" recorded as
 * the reason through the death watcher, so every later call on the session says so.
 */
import type Docker from 'dockerode';
import { folderLimitReason } from '../../core/diskLimit';
import type { SessionInfo } from '../../core/engine';
import { FolderGrowthWatch } from '../../core/folderGrowth';
import type { ContainerDeathWatcher } from './events';

export class FolderWatches {
  private readonly watches = new Map<string, FolderGrowthWatch>();
  /** Container id → why its session was stopped. */
  private readonly stopped = new Map<string, string>();

  constructor(private readonly deaths: ContainerDeathWatcher) {}

  /** Starts watching a session's folder when it mounts one read-write; once per container. */
  watch(info: SessionInfo, container: Docker.Container): void {
    const folder = info.workspaceFolder;
    if (info.workspaceAccess !== 'rw' || !folder || this.watches.has(info.id)) return;
    const { diskBytes, inodes } = info.spec.limits;
    const watch = new FolderGrowthWatch({
      folder,
      limits: { bytes: diskBytes, inodes },
      // Frozen while the folder is measured, so that it cannot write on meanwhile (a pause costs about 16 ms).
      hold: async () => {
        await container.pause();
        return async () => void (await container.unpause());
      },
      onExceeded: async (growth) => {
        const why = folderLimitReason(folder, growth, { bytes: diskBytes, inodes });
        this.stopped.set(info.id, why);
        this.deaths.markStopping(info.id, why);
        await container.kill({ signal: 'SIGKILL' }).catch(() => undefined);
        this.stop(info.id);
      },
    });
    this.watches.set(info.id, watch);
    // A folder this machine cannot see (an engine elsewhere) is not watched; nothing else changes.
    void watch.started.then((started) => {
      if (!started) this.stop(info.id);
    });
  }

  /** Why the watch stopped this session, when it did. */
  stoppedWhy(id: string): string | undefined {
    return this.stopped.get(id);
  }

  stop(id: string): void {
    this.watches.get(id)?.stop();
    this.watches.delete(id);
  }

  dispose(): void {
    for (const id of [...this.watches.keys()]) this.stop(id);
  }
}
