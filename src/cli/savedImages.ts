/**
 * Images a tool call returned, for the command line: written to files the user can open (a folder
 * of their own under the system's temporary folder), their paths printed with the result.
 *
 * The folder may be where a sandbox can write (AGENT_SANDBOX_IMAGES inside a folder a session
 * mounts read-write, or a temporary folder that is), and the bytes are the sandbox's: so the folder
 * is opened, never followed through a symbolic link that root does not own (a sandbox's, or another
 * user's in a shared /tmp), checked to be this user's, and on Linux each file is created through
 * the opened folder itself (/proc/self/fd), new and not a link (docs: the trust boundary). A folder
 * that fails this is not used: the images go to a new folder of this user's in the temporary folder,
 * and a line on stderr says so.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, mkdtemp, open, readlink, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { ImageOutput } from '../core/results/images';

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

export interface SavedImage {
  readonly path: string;
  readonly mime: string;
  readonly bytes: number;
}

/** Where the images go: AGENT_SANDBOX_IMAGES, else agent-sandbox-images in the system's temporary folder. */
export function imagesFolder(env: NodeJS.ProcessEnv = process.env): string {
  return env.AGENT_SANDBOX_IMAGES || join(tmpdir(), `agent-sandbox-images-${process.getuid?.() ?? 'user'}`);
}

export async function saveImages(
  images: readonly ImageOutput[],
  warn: (message: string) => void = (message) => process.stderr.write(`agent-sandbox: ${message}\n`),
): Promise<SavedImage[]> {
  if (!images.length) return [];
  const configured = imagesFolder();
  let folder: OpenFolder;
  try {
    folder = await openFolder(configured);
  } catch (error) {
    const instead = await mkdtemp(join(tmpdir(), `agent-sandbox-images-${process.getuid?.() ?? 'user'}-`));
    warn(`images are not saved in ${configured}: ${(error as Error).message}. They are in ${instead} instead.`);
    folder = await openFolder(instead);
  }
  const stamp = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
  try {
    const saved: SavedImage[] = [];
    for (const [index, image] of images.entries()) {
      const name = `${stamp}-${index + 1}.${Object.hasOwn(EXTENSIONS, image.mime) ? EXTENSIONS[image.mime] : 'bin'}`;
      const file = await folder.create(name);
      try {
        await file.writeFile(image.data);
      } finally {
        await file.close();
      }
      saved.push({ path: join(folder.path, name), mime: image.mime, bytes: image.data.byteLength });
    }
    return saved;
  } finally {
    await folder.close();
  }
}

interface OpenFolder {
  readonly path: string;
  /** A new file in the folder, for writing: never an existing one, never a link. */
  create(name: string): Promise<FileHandle>;
  close(): Promise<void>;
}

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW } = constants;

/** The folder, made if missing, opened as a folder of this user's that no link of anyone but root leads to. */
async function openFolder(given: string): Promise<OpenFolder> {
  const path = resolve(given);
  // Before making it: a link on the way would have mkdir make folders wherever it leads.
  await realPathThroughRootLinks(path, true);
  await mkdir(path, { recursive: true, mode: 0o700 });
  const real = await realPathThroughRootLinks(path, false);
  const handle = await open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW).catch((error: NodeJS.ErrnoException) => {
    throw new Error(
      error.code === 'ELOOP' || error.code === 'ENOTDIR'
        ? `${path} is not a folder (a link, or a file)`
        : error.message,
    );
  });
  try {
    const info = await handle.stat();
    const uid = process.getuid?.();
    if (!info.isDirectory()) throw new Error(`${path} is not a folder`);
    if (uid !== undefined && info.uid !== uid) throw new Error(`${path} belongs to another user (uid ${info.uid})`);
    if (info.mode & 0o002) throw new Error(`${path} may be written by any user`);
    const flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
    if (process.platform !== 'linux')
      return { path, create: (name) => open(join(path, name), flags, 0o600), close: () => handle.close() };
    // Linux names what was opened: it must be the folder the walk found, not one a link swapped in since.
    const opened = await readlink(`/proc/self/fd/${handle.fd}`);
    if (opened !== real) throw new Error(`${path} changed while it was opened (it is now ${opened})`);
    return {
      path,
      create: (name) => open(`/proc/self/fd/${handle.fd}/${name}`, flags, 0o600),
      close: () => handle.close(),
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The real path of an absolute path, resolved by hand: a symbolic link on the way is followed only
 * when root owns it (/tmp, /var on macOS, /home on some systems); any other one is refused by name.
 * With `partly`, a missing component ends the walk (what would be made there is a folder, not a link).
 */
async function realPathThroughRootLinks(path: string, partly: boolean): Promise<string> {
  const todo = path.split('/').filter(Boolean);
  let done = '/';
  let links = 0;
  while (todo.length) {
    const part = todo.shift()!;
    if (part === '.') continue;
    if (part === '..') {
      done = dirname(done);
      continue;
    }
    const next = join(done, part);
    const info = await lstat(next).catch((error: NodeJS.ErrnoException) => {
      if (partly && error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (!info) return join(next, ...todo);
    if (info.isSymbolicLink()) {
      const target = await readlink(next);
      if (info.uid !== 0) throw new Error(`${next} is a symbolic link (to ${target}) that is not root's`);
      if (++links > 40) throw new Error(`${path} has too many symbolic links`);
      todo.unshift(...target.split('/').filter(Boolean));
      if (target.startsWith('/')) done = '/';
      continue;
    }
    done = next;
  }
  return done;
}
