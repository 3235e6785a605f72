/**
 * The file system a virtual sandbox sees: just-bash's memory file system for everything, and at
 * /workspace either memory (access none), just-bash's overlay on the workspace folder whose writes
 * stay in memory (ro), or the folder itself through HostFolderFs (rw), which walks every path on
 * descriptors, follows no link and refuses protected paths. The ro overlay still reads the folder by
 * path (with just-bash's own link checks), so a rw session of the same folder racing it is not yet
 * held off the way HostFolderFs holds it off.
 */
import type { IFileSystem } from 'just-bash';
import { WORKSPACE_DIR } from '../../core/files/paths';
import { HostFolderFs } from './hostFolderFs';
import type { WorkerSetup } from './protocol';

export const SANDBOX_HOME = '/home/user';

type JustBash = typeof import('just-bash');

export async function buildFileSystem(jb: JustBash, setup: WorkerSetup): Promise<IFileSystem> {
  const base = new jb.InMemoryFs(undefined, { maxTotalBytes: setup.maxMemoryBytes });
  for (const dir of ['/tmp', SANDBOX_HOME, '/etc']) await base.mkdir(dir, { recursive: true });
  await base.writeFile('/etc/hostname', 'sandbox\n');
  await base.writeFile('/etc/passwd', `root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::${SANDBOX_HOME}:/bin/bash\n`);
  if (setup.access === 'none' || !setup.folder) {
    await base.mkdir(WORKSPACE_DIR, { recursive: true });
    return base;
  }
  // Only rw writes the folder itself; anything else that got here (copy is refused before) never does.
  if (setup.access !== 'ro' && setup.access !== 'rw')
    throw new Error(`no folder view for workspace access ${setup.access}`);
  const workspace =
    setup.access === 'ro'
      ? new jb.OverlayFs({
          root: setup.folder,
          mountPoint: '/',
          maxFileReadSize: setup.maxFileReadBytes,
          maxMemoryBytes: setup.maxMemoryBytes,
        })
      : await HostFolderFs.open(setup.folder, {
          maxFileReadBytes: setup.maxFileReadBytes,
          protectedPaths: setup.protectedPaths,
        });
  return new jb.MountableFs({ base, mounts: [{ mountPoint: WORKSPACE_DIR, filesystem: workspace }] });
}
