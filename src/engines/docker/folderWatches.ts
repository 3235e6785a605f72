/**
 * The read-write workspace folders of the sessions this process holds, each watched for growth past
 * the disk and inode limits (core/limits/folderGrowth.ts): the folder is the user's own disk, which no
 * container option caps. Past a limit the container is killed, with "disk limit reached" recorded as
 * the reason through the death watcher, so every later call on the session says so.
 */
import type Docker from 'dockerode';
import { lstat } from 'node:fs/promises';
import { DISK_LIMIT_REACHED, folderLimitReason } from '../../core/limits/diskLimit';
import type { SessionInfo } from '../../core/engine/engine';
import { FolderGrowthWatch, type Usage } from '../../core/limits/folderGrowth';
import type { StopRecords } from '../../core/sessions/stopRecords';
import type { ContainerDeathWatcher } from './events';
import { heldDeletedFiles } from './heldDeletedFiles';
import { LABEL } from './labels';

/** The folder's use measured at open, as kept in the container's labels. */
export function baselineLabel(usage: Usage): Record<string, string> {
  return { [LABEL.folderBaseline]: `${usage.bytes}:${usage.inodes}` };
}

export function baselineFromLabels(labels: Record<string, string> | undefined): Usage | undefined {
  const match = /^(\d+):(\d+)$/.exec(labels?.[LABEL.folderBaseline] ?? '');
  return match ? { bytes: Number(match[1]), inodes: Number(match[2]) } : undefined;
}

export class FolderWatches {
  private readonly watches = new Map<string, FolderGrowthWatch>();
  /** Container id → why its session was stopped. */
  private readonly stopped = new Map<string, string>();

  constructor(
    private readonly deaths: ContainerDeathWatcher,
    private readonly records?: Pick<StopRecords, 'read'>,
  ) {}

  /**
   * Starts watching a session's folder when it mounts one read-write; once per container. Growth counts
   * from `baseline`, the folder's use before the session existed, when the labels carry it.
   */
  watch(info: SessionInfo, container: Docker.Container, baseline?: Usage): void {
    const folder = info.workspaceFolder;
    if (info.workspaceAccess !== 'rw' || !folder || this.watches.has(info.id)) return;
    const { diskBytes, inodes } = info.spec.limits;
    const device = lstat(folder).then(
      (stats) => stats.dev,
      () => undefined,
    );
    const watch = new FolderGrowthWatch({
      folder,
      limits: { bytes: diskBytes, inodes },
      ...(baseline ? { baseline } : {}),
      unseen: async () => {
        const dev = await device;
        return dev === undefined ? { bytes: 0, inodes: 0 } : heldDeletedFiles(container, dev);
      },
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
        void this.stop(info.id);
      },
    });
    this.watches.set(info.id, watch);
    // A folder this machine cannot see (an engine elsewhere) is not watched; nothing else changes.
    void watch.started.then((started) => {
      if (!started) void this.stop(info.id);
    });
  }

  /** Why a folder watch (this process's, or the folder keeper's) stopped this session, when one did. */
  stoppedWhy(id: string): string | undefined {
    const written = this.records?.read(id)?.why;
    return this.stopped.get(id) ?? (written?.startsWith(DISK_LIMIT_REACHED) ? written : undefined);
  }

  /** Stops watching; resolves once a look under way has unpaused the container. */
  stop(id: string): Promise<void> {
    const done = this.watches.get(id)?.stop() ?? Promise.resolve();
    this.watches.delete(id);
    return done;
  }

  /** Stops every watch; a process must await this before it exits, or a container may stay paused. */
  async dispose(): Promise<void> {
    await Promise.all([...this.watches.keys()].map((id) => this.stop(id)));
  }
}
