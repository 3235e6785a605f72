/**
 * The sandbox's files as the persistent Python sees them: an Emscripten file system whose every
 * operation is a synchronous request to the sandbox's worker (the same file system its commands and
 * file tools use), mounted at each top-level folder of the sandbox at its own path, so that
 * /workspace, /tmp and $HOME are the same paths inside and out (and the whole sandbox at /host, as
 * its python3 commands also see it). A file is read whole when opened and written back when closed,
 * synced, or at the end of a call (flushOpenFiles), so that what the code wrote to a file it keeps
 * open is seen outside between calls.
 */
import type { FsOp, FsStat } from './pythonChannel';

/** The parts of Emscripten's FS this uses. */
export interface EmscriptenFs {
  ErrnoError: new (errno: number) => Error;
  createNode(parent: FsNode | null, name: string, mode: number, dev?: number): FsNode;
  isDir(mode: number): boolean;
  isFile(mode: number): boolean;
  isLink(mode: number): boolean;
  mount(type: unknown, options: { root: string }, mountpoint: string): unknown;
  mkdirTree(path: string): void;
  analyzePath(path: string): { exists: boolean };
  hashRemoveNode(node: FsNode): void;
  nameTable: (FsNode | null)[];
}

export interface FsNode {
  id: number;
  name: string;
  mode: number;
  parent: FsNode;
  mount: { type: unknown; root: FsNode; opts: { root: string } };
  name_next?: FsNode | null;
  node_ops: unknown;
  stream_ops: unknown;
}

interface Stream {
  node: FsNode;
  flags: number;
  position: number;
  seekable?: boolean;
  file?: OpenFile;
}

interface OpenFile {
  path: string;
  data: Uint8Array;
  length: number;
  dirty: boolean;
}

/** Emscripten's errno numbers (WASI's), by name. */
const ERRNO: Record<string, number> = {
  EACCES: 2,
  EAGAIN: 6,
  EBADF: 8,
  EBUSY: 10,
  EEXIST: 20,
  EFBIG: 22,
  EINVAL: 28,
  EIO: 29,
  EISDIR: 31,
  ELOOP: 32,
  ENAMETOOLONG: 37,
  ENOENT: 44,
  ENOSPC: 51,
  ENOSYS: 52,
  ENOTDIR: 54,
  ENOTEMPTY: 55,
  EPERM: 63,
  EROFS: 69,
  EXDEV: 75,
};
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
/**
 * Folders at the top of the sandbox that CPython's own file system keeps (its devices and standard
 * library), and /host, where the whole sandbox is too, as its python3 commands see it (pythonCommand.ts).
 */
const OWN_FOLDERS = new Set(['dev', 'proc', 'lib', 'host']);
const WHOLE_SANDBOX = '/host';

export type FsRequest = (op: FsOp) => unknown;

export class PythonFileSystem {
  private readonly open = new Set<Stream>();
  private readonly mounted = new Set<string>();
  private readonly type: unknown;

  constructor(
    private readonly FS: EmscriptenFs,
    private readonly request: FsRequest,
    private readonly maxFileBytes: number,
  ) {
    this.type = { mount: () => this.createNode(null, '/', S_IFDIR | 0o755) };
  }

  /** Mounts the sandbox's top-level folders not mounted yet (a command may have made one since). */
  mountFolders(): void {
    if (!this.FS.analyzePath(WHOLE_SANDBOX).exists) {
      this.FS.mkdirTree(WHOLE_SANDBOX);
      this.FS.mount(this.type, { root: '/' }, WHOLE_SANDBOX);
    }
    for (const name of this.call<string[]>({ op: 'readdir', path: '/' })) {
      if (OWN_FOLDERS.has(name) || this.mounted.has(name)) continue;
      const stat = this.tryCall<FsStat>({ op: 'lstat', path: `/${name}` });
      if (stat?.kind !== 'directory') continue;
      if (!this.FS.analyzePath(`/${name}`).exists) this.FS.mkdirTree(`/${name}`);
      this.FS.mount(this.type, { root: `/${name}` }, `/${name}`);
      this.mounted.add(name);
    }
  }

  /** Forgets the nodes looked up so far: files changed outside between calls are looked up afresh. */
  forgetLookups(): void {
    for (const head of this.FS.nameTable) {
      for (let node = head; node;) {
        const next = node.name_next ?? null;
        if (node.mount?.type === this.type && node !== node.mount.root) this.FS.hashRemoveNode(node);
        node = next;
      }
    }
  }

  /** Writes back what open files hold; says which could not be written. */
  flushOpenFiles(): string[] {
    const failed: string[] = [];
    for (const stream of this.open) {
      try {
        this.flush(stream);
      } catch (error) {
        failed.push(`${stream.file?.path}: ${(error as Error).message}`);
      }
    }
    return failed;
  }

  private createNode(parent: FsNode | null, name: string, mode: number): FsNode {
    const node = this.FS.createNode(parent, name, mode, 0);
    node.node_ops = this.nodeOps;
    node.stream_ops = this.streamOps;
    return node;
  }

  private path(node: FsNode): string {
    const names: string[] = [];
    for (; node.parent !== node; node = node.parent) names.unshift(node.name);
    const root = node.mount.opts.root;
    return names.length ? `${root === '/' ? '' : root}/${names.join('/')}` : root;
  }

  private call<T>(op: FsOp): T {
    try {
      return this.request(op) as T;
    } catch (error) {
      throw new this.FS.ErrnoError(ERRNO[(error as Error).message] ?? ERRNO.EIO!);
    }
  }

  private tryCall<T>(op: FsOp): T | undefined {
    try {
      return this.request(op) as T;
    } catch {
      return undefined;
    }
  }

  private modeOf(stat: FsStat): number {
    const type = stat.kind === 'directory' ? S_IFDIR : stat.kind === 'symlink' ? S_IFLNK : S_IFREG;
    return type | (stat.mode & 0o7777);
  }

  private flush(stream: Stream): void {
    const file = stream.file;
    if (!file?.dirty) return;
    this.call({ op: 'write', path: file.path, data: file.data.slice(0, file.length) });
    file.dirty = false;
  }

  private readonly nodeOps = {
    getattr: (node: FsNode) => {
      const stat = this.call<FsStat>({ op: 'lstat', path: this.path(node) });
      const time = new Date(stat.mtimeMs);
      return {
        dev: 1,
        ino: node.id,
        mode: this.modeOf(stat),
        nlink: 1,
        uid: 0,
        gid: 0,
        rdev: 0,
        size: stat.size,
        atime: time,
        mtime: time,
        ctime: time,
        blksize: 4096,
        blocks: Math.ceil(stat.size / 512),
      };
    },
    setattr: (node: FsNode, attr: { mode?: number; size?: number; mtime?: number }) => {
      const path = this.path(node);
      if (attr.mode !== undefined) {
        this.call({ op: 'chmod', path, mode: attr.mode & 0o7777 });
        node.mode = (node.mode & ~0o7777) | (attr.mode & 0o7777);
      }
      if (attr.size !== undefined) {
        if (attr.size > this.maxFileBytes) throw new this.FS.ErrnoError(ERRNO.EFBIG!);
        const data = new Uint8Array(attr.size);
        if (attr.size > 0) data.set(this.call<Uint8Array>({ op: 'read', path }).subarray(0, attr.size));
        this.call({ op: 'write', path, data });
        // Streams open on the file hold its content: they are cut (or padded) too, or they would write the old size back.
        for (const stream of this.open) {
          const file = stream.file;
          if (file?.path !== path) continue;
          if (attr.size > file.data.length) {
            const grown = new Uint8Array(attr.size);
            grown.set(file.data.subarray(0, file.length));
            file.data = grown;
          } else file.data.fill(0, attr.size);
          file.length = attr.size;
        }
      }
      if (attr.mtime !== undefined && attr.mode === undefined && attr.size === undefined)
        this.call({ op: 'utimes', path, mtime: Number(attr.mtime) });
    },
    lookup: (parent: FsNode, name: string) => {
      const stat = this.call<FsStat>({ op: 'lstat', path: `${this.path(parent)}/${name}` });
      return this.createNode(parent, name, this.modeOf(stat));
    },
    mknod: (parent: FsNode, name: string, mode: number) => {
      const path = `${this.path(parent)}/${name}`;
      if (this.FS.isDir(mode)) this.call({ op: 'mkdir', path });
      else this.call({ op: 'write', path, data: new Uint8Array(0) });
      return this.createNode(parent, name, mode);
    },
    rename: (node: FsNode, newParent: FsNode, newName: string) =>
      this.call({ op: 'rename', from: this.path(node), to: `${this.path(newParent)}/${newName}` }),
    unlink: (parent: FsNode, name: string) => this.call({ op: 'rm', path: `${this.path(parent)}/${name}` }),
    rmdir: (parent: FsNode, name: string) => this.call({ op: 'rm', path: `${this.path(parent)}/${name}` }),
    readdir: (node: FsNode) => ['.', '..', ...this.call<string[]>({ op: 'readdir', path: this.path(node) })],
    symlink: (parent: FsNode, name: string, target: string) =>
      this.call({ op: 'symlink', target, path: `${this.path(parent)}/${name}` }),
    readlink: (node: FsNode) => this.call<string>({ op: 'readlink', path: this.path(node) }),
  };

  private readonly streamOps = {
    open: (stream: Stream) => {
      if (this.FS.isDir(stream.node.mode)) return;
      // Emscripten has truncated the file already for O_TRUNC (setattr), so its content is read as it is.
      const path = this.path(stream.node);
      const data = this.call<Uint8Array>({ op: 'read', path });
      stream.file = { path, data, length: data.length, dirty: false };
      this.open.add(stream);
    },
    close: (stream: Stream) => {
      this.open.delete(stream);
      this.flush(stream);
    },
    fsync: (stream: Stream) => {
      this.flush(stream);
      return 0;
    },
    read: (stream: Stream, buffer: Uint8Array, offset: number, length: number, position: number) => {
      const file = stream.file;
      if (!file || position >= file.length) return 0;
      const count = Math.min(length, file.length - position);
      buffer.set(file.data.subarray(position, position + count), offset);
      return count;
    },
    write: (stream: Stream, buffer: Uint8Array, offset: number, length: number, position: number) => {
      const file = stream.file;
      if (!file) throw new this.FS.ErrnoError(ERRNO.EBADF!);
      const end = position + length;
      if (end > this.maxFileBytes) throw new this.FS.ErrnoError(ERRNO.ENOSPC!);
      if (end > file.data.length) {
        // Doubling, so that a file written a line at a time is not copied at every line.
        const grown = new Uint8Array(Math.min(this.maxFileBytes, Math.max(end, file.data.length * 2, 4096)));
        grown.set(file.data.subarray(0, file.length));
        file.data = grown;
      }
      file.data.set(buffer.subarray(offset, offset + length), position);
      file.length = Math.max(file.length, end);
      file.dirty = true;
      return length;
    },
    llseek: (stream: Stream, offset: number, whence: number) => {
      const base = whence === 1 ? stream.position : whence === 2 ? (stream.file?.length ?? 0) : 0;
      const position = base + offset;
      if (whence < 0 || whence > 2 || position < 0) throw new this.FS.ErrnoError(ERRNO.EINVAL!);
      return position;
    },
  };
}
