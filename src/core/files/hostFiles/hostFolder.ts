/**
 * A host folder that the user chose (trusted) but whose contents a sandbox may change between any two
 * system calls. Every name below it is opened on its own, relative to the already-open parent, through
 * /proc/self/fd/<fd>/<name> with O_NOFOLLOW: the guarantee of openat(2), which Node does not offer.
 * Each opened folder is then confirmed with readlink(/proc/self/fd/<fd>) to still be inside.
 * Only Linux has /proc/self/fd; elsewhere every operation is refused rather than done by path.
 */
import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { errnoOf, HostFileError, hostFileError, linkRefused, movedOutside } from './hostFileError';

/** Linux's O_PATH (fs.constants has none): a descriptor for fstat and /proc links that never reads, so it cannot block. */
export const O_PATH = 0o10000000;
/** O_NONBLOCK as well: a FIFO in a folder's place must not hang the call. */
export const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export function hostFilesSupported(): boolean {
  return process.platform === 'linux' && existsSync('/proc/self/fd');
}

/** An open folder below the root; names inside it are reached only through its descriptor. */
export class HostDir {
  constructor(
    readonly handle: FileHandle,
    /** Where Linux says the descriptor is, for messages and return values; never used to open anything. */
    readonly realPath: string,
  ) {}

  /** `name` looked up in this very folder: only `name` itself is resolved, and O_NOFOLLOW applies to it. */
  entry(name: string): string {
    return `/proc/self/fd/${this.handle.fd}/${name}`;
  }

  /** The folder itself, for readdir and the like. */
  get self(): string {
    return `/proc/self/fd/${this.handle.fd}`;
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}

export class HostFolder {
  private constructor(readonly root: string) {}

  static async open(folder: string): Promise<HostFolder> {
    if (!hostFilesSupported()) {
      throw new HostFileError(
        'ENOTSUP',
        'unsupported',
        'Workspace files are read and written on the host only on Linux, where each folder on the way can be opened without following links (/proc/self/fd); this host has no such way.',
        'Move the file inside the sandbox with sandbox_exec instead (the workspace is mounted at /workspace), or publish it to the file store without save_to_workspace.',
      );
    }
    // The folder itself is trusted (the user chose it, and what is above it is out of a sandbox's reach).
    return new HostFolder(await realpath(folder).catch((error: unknown) => Promise.reject(hostFileError(error, '.'))));
  }

  async openRoot(): Promise<HostDir> {
    const handle = await open(this.root, DIRECTORY_FLAGS).catch((error: unknown) =>
      Promise.reject(hostFileError(error, '.')),
    );
    return new HostDir(handle, await this.confirm(handle, '.'));
  }

  /** The folder at `names` below the root, each name opened without following links; missing ones are made with `create`. */
  async openDir(names: readonly string[], path: string, options: { create?: boolean } = {}): Promise<HostDir> {
    let dir = await this.openRoot();
    try {
      for (const name of names) {
        const child = await this.openChild(dir, name, path, options.create ?? false);
        await dir.close();
        dir = child;
      }
      return dir;
    } catch (error) {
      await dir.close();
      throw error;
    }
  }

  /** Linux's own name for what a descriptor opened must be the root or below it; the handle is closed when not. */
  async confirm(handle: FileHandle, path: string): Promise<string> {
    let real: string;
    try {
      real = await readlink(`/proc/self/fd/${handle.fd}`);
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw hostFileError(error, path);
    }
    if (real === this.root || real.startsWith(this.root === '/' ? '/' : `${this.root}/`)) return real;
    await handle.close().catch(() => undefined);
    throw movedOutside(path);
  }

  private async openChild(dir: HostDir, name: string, path: string, create: boolean): Promise<HostDir> {
    try {
      return await this.openDirEntry(dir, name, path);
    } catch (error) {
      if (!create || !(error instanceof HostFileError) || error.code !== 'ENOENT') throw error;
    }
    await mkdir(dir.entry(name), 0o755).catch((error: unknown) => {
      if (errnoOf(error) !== 'EEXIST') throw hostFileError(error, path);
    });
    // Whatever is there now, ours or raced in, is opened the same way: a link or a file is refused.
    return this.openDirEntry(dir, name, path);
  }

  /** The folder `name` inside `dir`, opened without following a link. */
  async openDirEntry(dir: HostDir, name: string, path: string): Promise<HostDir> {
    let handle: FileHandle;
    try {
      handle = await open(dir.entry(name), DIRECTORY_FLAGS);
    } catch (error) {
      // With O_DIRECTORY a link gives ENOTDIR, not ELOOP. lstat only words the refusal: a folder there
      // now means the name was swapped, which only a link could have been at open time.
      if (errnoOf(error) === 'ENOTDIR') {
        const now = await lstat(dir.entry(name)).catch(() => undefined);
        if (!now || now.isSymbolicLink() || now.isDirectory()) throw linkRefused(path);
      }
      throw hostFileError(error, path);
    }
    return new HostDir(handle, await this.confirm(handle, path));
  }
}
