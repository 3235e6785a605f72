/** Reading one regular file of a host folder that a sandbox may be changing, within a size limit. */
import { HostFolder } from './hostFolder';
import { pathNames } from './hostPath';
import { openRegularFile, readWithin } from './regularFile';

/**
 * The bytes of the regular file at `path` (relative to `folder`), at most `maxBytes` of them. No link
 * is followed, a FIFO or device is refused without being read, and the size is the opened file's.
 */
export async function readHostFile(folder: string, path: string, maxBytes: number): Promise<Uint8Array> {
  const names = pathNames(path);
  const host = await HostFolder.open(folder);
  const dir = await host.openDir(names.slice(0, -1), path);
  try {
    const file = await openRegularFile(host, dir, names[names.length - 1]!, path);
    try {
      return await readWithin(file, maxBytes, path);
    } finally {
      await file.handle.close().catch(() => undefined);
    }
  } finally {
    await dir.close();
  }
}
