/**
 * The workspace folder as a read-write virtual sandbox sees it at /workspace. Replaces just-bash's
 * ReadWriteFs, which works by path (a folder swapped for a link between its check and its use leads
 * out of the folder) and lets chmod set setuid bits: here every operation walks the path one name at
 * a time on descriptors (core/files/hostFiles), follows no link, refuses protected editor and VCS paths,
 * and never sets a setuid or setgid bit. Linux only, like core/files/hostFiles.
 */
import { link, mkdir, readdir, readlink, rename } from 'node:fs/promises';
import { posix } from 'node:path';
import type { BufferEncoding, CpOptions, FileContent, FsStat, IFileSystem, MkdirOptions, RmOptions } from 'just-bash';
import { errnoOf, linkRefused } from '../../core/files/hostFiles/hostFileError';
import { HostFolder, type HostDir } from '../../core/files/hostFiles/hostFolder';
import { refuseProtected } from '../../core/files/hostFiles/hostPath';
import { quotedName as quoteName } from '../../core/results/displayName';
import {
  appendEntry,
  changeEntry,
  entryStats,
  readEntry,
  removeEntry,
  SAFE_MODE_BITS,
  writeEntry,
} from './hostFolderEntries';
import { scanHostFolder } from './hostFolderScan';
import { fsError, fsRefusal } from './fsErrors';

export interface HostFolderFsOptions {
  /** Largest file a program may read, or copy, through the folder. */
  maxFileReadBytes: number;
  /** Names at the top of the folder that may not be created, changed, renamed or removed. */
  protectedPaths: readonly string[];
}

// Not exported by just-bash's index, so taken from the interface.
type ReadFileOptions = Exclude<Parameters<IFileSystem['readFile']>[1], BufferEncoding | undefined>;
type WriteFileOptions = Exclude<Parameters<IFileSystem['writeFile']>[2], BufferEncoding | undefined>;
type DirentEntry = Awaited<ReturnType<NonNullable<IFileSystem['readdirWithFileTypes']>>>[number];
type Encoding = BufferEncoding | ReadFileOptions | WriteFileOptions | null | undefined;

function encodingOf(options: Encoding): globalThis.BufferEncoding {
  const name = (typeof options === 'string' ? options : options?.encoding) ?? 'utf8';
  return name === 'binary' ? 'latin1' : name;
}

function bytesOf(content: FileContent, options: Encoding): Uint8Array {
  return typeof content === 'string' ? Buffer.from(content, encodingOf(options)) : content;
}

function statOf(stats: import('node:fs').Stats): FsStat {
  return {
    isFile: stats.isFile(),
    isDirectory: stats.isDirectory(),
    isSymbolicLink: stats.isSymbolicLink(),
    mode: stats.mode,
    size: stats.size,
    mtime: stats.mtime,
    dev: stats.dev,
    ino: stats.ino,
    identity: `real:${stats.dev}:${stats.ino}`,
  };
}

export class HostFolderFs implements IFileSystem {
  private constructor(
    private readonly host: HostFolder,
    private readonly options: HostFolderFsOptions,
  ) {}

  static async open(folder: string, options: HostFolderFsOptions): Promise<HostFolderFs> {
    return new HostFolderFs(await HostFolder.open(folder), options);
  }

  /** A path of this file system ("/sub/file", as MountableFs passes it) as names below the folder. */
  private names(path: string): string[] {
    if (path.includes('\0'))
      throw fsRefusal('EINVAL', 'invalid-input', `The path ${quoteName(path)} contains a NUL character.`);
    return posix
      .normalize(`/${path}`)
      .split('/')
      .filter((name) => name !== '' && name !== '.' && name !== '..');
  }

  /** Runs `action` in the open parent folder of `path`, turning every failure into an fs-style error. */
  private async inParent<T>(
    path: string,
    action: (dir: HostDir, name: string, shown: string) => Promise<T>,
    options: { create?: boolean; guard?: string } = {},
  ): Promise<T> {
    const names = this.names(path);
    const shown = names.join('/') || '.';
    try {
      if (names.length === 0)
        throw fsRefusal(
          'EBUSY',
          'invalid-input',
          'The workspace folder itself cannot be replaced or removed.',
          'Change the files inside it.',
        );
      if (options.guard) refuseProtected(names, this.options.protectedPaths, options.guard);
      const dir = await this.host.openDir(names.slice(0, -1), shown, { create: options.create });
      try {
        return await action(dir, names[names.length - 1]!, shown);
      } finally {
        await dir.close();
      }
    } catch (error) {
      throw fsError(error, shown);
    }
  }

  /** Runs `action` in the open folder at `path` itself. */
  private async inFolder<T>(path: string, action: (dir: HostDir, shown: string) => Promise<T>): Promise<T> {
    const names = this.names(path);
    const shown = names.join('/') || '.';
    try {
      const dir = await this.host.openDir(names, shown);
      try {
        return await action(dir, shown);
      } finally {
        await dir.close();
      }
    } catch (error) {
      throw fsError(error, shown);
    }
  }

  async readFile(path: string, options?: ReadFileOptions | BufferEncoding): Promise<string> {
    return Buffer.from(await this.readFileBuffer(path)).toString(encodingOf(options));
  }

  async readFileBuffer(path: string): Promise<Uint8Array> {
    if (this.names(path).length === 0)
      throw fsRefusal('EISDIR', 'is-a-directory', 'The workspace folder is a directory.');
    const data = await this.inParent(path, (dir, name, shown) =>
      readEntry(this.host, dir, name, shown, this.options.maxFileReadBytes),
    );
    return new Uint8Array(data.buffer, data.byteOffset, data.length);
  }

  async writeFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void> {
    const data = bytesOf(content, options);
    await this.inParent(path, (dir, name, shown) => writeEntry(dir, name, data, shown), {
      create: true,
      guard: 'Writing',
    });
  }

  async appendFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void> {
    const data = bytesOf(content, options);
    await this.inParent(
      path,
      (dir, name, shown) => appendEntry(this.host, dir, name, data, shown, this.options.maxFileReadBytes),
      { create: true, guard: 'Writing' },
    );
  }

  async exists(path: string): Promise<boolean> {
    return this.stat(path).then(
      () => true,
      () => false,
    );
  }

  /** Like lstat, but a link is refused: links in the folder are never followed. */
  async stat(path: string): Promise<FsStat> {
    const stats = await this.lstat(path);
    if (stats.isSymbolicLink) throw fsError(linkRefused(this.names(path).join('/')), path);
    return stats;
  }

  async lstat(path: string): Promise<FsStat> {
    if (this.names(path).length === 0) return this.inFolder(path, async (dir) => statOf(await dir.handle.stat()));
    return this.inParent(path, async (dir, name, shown) => {
      const stats = await entryStats(dir, name, shown);
      if (!stats)
        throw fsRefusal(
          'ENOENT',
          'file-not-found',
          `no such file or directory, stat ${quoteName(path)}`,
          'List the directory to see what is there.',
        );
      return statOf(stats);
    });
  }

  async mkdir(path: string, options?: MkdirOptions): Promise<void> {
    const names = this.names(path);
    if (names.length === 0) {
      if (options?.recursive) return;
      throw fsRefusal('EEXIST', 'file-exists', `file already exists, mkdir ${quoteName(path)}`);
    }
    if (options?.recursive) {
      try {
        refuseProtected(names, this.options.protectedPaths, 'Creating');
      } catch (error) {
        throw fsError(error, names.join('/'));
      }
      await this.inFolderCreating(names);
      return;
    }
    await this.inParent(path, (dir, name) => mkdir(dir.entry(name), 0o755), { guard: 'Creating' });
  }

  /** mkdir -p: every missing folder on the way is made, each opened without following a link. */
  private async inFolderCreating(names: string[]): Promise<void> {
    const shown = names.join('/');
    try {
      await (await this.host.openDir(names, shown, { create: true })).close();
    } catch (error) {
      throw fsError(error, shown);
    }
  }

  async readdir(path: string): Promise<string[]> {
    return (await this.readdirWithFileTypes(path)).map((entry) => entry.name);
  }

  async readdirWithFileTypes(path: string): Promise<DirentEntry[]> {
    return this.inFolder(path, async (dir) => {
      const entries = await readdir(dir.self, { withFileTypes: true });
      return entries
        .map((entry) => ({
          name: entry.name,
          isFile: entry.isFile(),
          isDirectory: entry.isDirectory(),
          isSymbolicLink: entry.isSymbolicLink(),
        }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    });
  }

  async rm(path: string, options?: RmOptions): Promise<void> {
    await this.inParent(
      path,
      async (dir, name, shown) => {
        if (!(await entryStats(dir, name, shown))) {
          if (options?.force) return;
          throw fsRefusal('ENOENT', 'file-not-found', `no such file or directory, rm ${quoteName(path)}`);
        }
        await removeEntry(this.host, dir, name, shown, options?.recursive ?? false);
      },
      { guard: 'Removing' },
    );
  }

  async cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    const from = this.names(src).join('/');
    const to = this.names(dest).join('/');
    if (to === from || to.startsWith(`${from}/`) || from === '')
      throw fsRefusal('EINVAL', 'invalid-input', `cannot copy ${quoteName(src)} into itself, ${quoteName(dest)}`);
    const stats = await this.lstat(src);
    if (stats.isSymbolicLink) throw fsError(linkRefused(from), from);
    if (stats.isFile) {
      await this.writeFile(dest, await this.readFileBuffer(src));
      await this.chmod(dest, stats.mode);
      return;
    }
    if (!stats.isDirectory) throw fsRefusal('EINVAL', 'not-a-file', `unsupported file type, cp ${quoteName(src)}`);
    if (!options?.recursive) throw fsRefusal('EISDIR', 'is-a-directory', `is a directory, cp ${quoteName(src)}`);
    await this.mkdir(dest, { recursive: true });
    for (const entry of await this.readdir(src))
      await this.cp(posix.join(src, entry), posix.join(dest, entry), options);
    await this.chmod(dest, stats.mode);
  }

  async mv(src: string, dest: string): Promise<void> {
    await this.inParent(
      src,
      (from, fromName) =>
        this.inParent(
          dest,
          async (to, toName, shown) => {
            await rename(from.entry(fromName), to.entry(toName)).catch(async (error: unknown) => {
              if (errnoOf(error) !== 'EXDEV') throw error;
              // Another file system mounted inside the folder: copy, then remove.
              await this.cp(src, dest, { recursive: true });
              await this.rm(src, { recursive: true });
            });
            return shown;
          },
          { create: true, guard: 'Moving into' },
        ),
      { guard: 'Moving' },
    );
  }

  resolvePath(base: string, path: string): string {
    return posix.resolve(base, path);
  }

  getAllPaths(): string[] {
    return scanHostFolder(this.host.root);
  }

  async chmod(path: string, mode: number): Promise<void> {
    if (this.names(path).length === 0)
      return this.inFolder(path, async (dir) => dir.handle.chmod(mode & SAFE_MODE_BITS));
    await this.inParent(
      path,
      (dir, name, shown) => changeEntry(this.host, dir, name, shown, { mode }, this.options.maxFileReadBytes),
      { guard: 'Changing' },
    );
  }

  async symlink(_target: string, linkPath: string): Promise<void> {
    throw fsRefusal(
      'EPERM',
      'permission-denied',
      `operation not permitted, symlink ${quoteName(linkPath)}: links cannot be made in the workspace folder.`,
      'Copy the file instead.',
    );
  }

  async link(existingPath: string, newPath: string): Promise<void> {
    await this.inParent(
      existingPath,
      (from, fromName) =>
        this.inParent(newPath, (to, toName) => link(from.entry(fromName), to.entry(toName)), { guard: 'Linking' }),
      { guard: 'Linking' },
    );
  }

  /** The link's text as it is; it is never followed here, and a target outside /workspace is refused by the file tools. */
  async readlink(path: string): Promise<string> {
    return this.inParent(path, (dir, name) => readlink(dir.entry(name)));
  }

  /** Nothing is followed, so the real path is the path, once every name on it is confirmed to be no link. */
  async realpath(path: string): Promise<string> {
    await this.stat(path);
    return `/${this.names(path).join('/')}`;
  }

  async utimes(path: string, atime: Date, mtime: Date): Promise<void> {
    if (this.names(path).length === 0) return this.inFolder(path, async (dir) => dir.handle.utimes(atime, mtime));
    await this.inParent(
      path,
      (dir, name, shown) =>
        changeEntry(this.host, dir, name, shown, { times: [atime, mtime] }, this.options.maxFileReadBytes),
      { guard: 'Changing' },
    );
  }
}
