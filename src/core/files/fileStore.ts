/**
 * A local, content-addressed file store: files move between it and sandboxes (sandbox_stage_file,
 * sandbox_publish_file, `agent-sandbox files`) without passing through the model. Each file is a blob
 * `f_<id>` with its metadata beside it in `f_<id>.json`; the id is the start of the content's sha256,
 * so the same content always gets the same key. Every read checks the sha256.
 */
import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { SandboxError } from '../errors';
import { MiB, formatSize } from '../spec/units';

export const DEFAULT_MAX_FILE_BYTES = 100 * MiB;

/** Hex digits of the sha256 in a key; more only when two contents share that start. */
const ID_DIGITS = 16;
const KEY_PATTERN = /^files\/f_([0-9a-f]{16,64})$/;
const KEY_EXAMPLE = 'files/f_0123456789abcdef';
const MAX_NAME_BYTES = 255;

export interface StoredFile {
  /** `files/f_<id>`: what tools and the CLI take to name the file. */
  key: string;
  /** The original file name, for people and as the default name on download. */
  name: string;
  size: number;
  /** Hex sha256 of the content. */
  sha256: string;
  /** ISO 8601 time the content was first stored. */
  created: string;
}

const metadataSchema = z.object({
  key: z.string().regex(KEY_PATTERN),
  name: z.string(),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  created: z.string(),
});

export interface FileStoreOptions {
  /** Largest file the store takes, in bytes; 100 MiB by default. */
  maxFileBytes?: number;
}

export class FileStore {
  readonly maxFileBytes: number;

  constructor(
    /** The folder that holds the blobs and their metadata; created on the first write. */
    readonly folder: string,
    options: FileStoreOptions = {},
  ) {
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  }

  /** Stores the bytes; storing content that is already there returns its existing record (and keeps its first name). */
  async put(data: Uint8Array, meta: { name?: string } = {}): Promise<StoredFile> {
    this.checkSize(data.length, meta.name ?? 'The file');
    const sha256 = createHash('sha256').update(data).digest('hex');
    await mkdir(this.folder, { recursive: true, mode: 0o700 });
    for (let digits = ID_DIGITS; digits <= 64; digits += 4) {
      const id = `f_${sha256.slice(0, digits)}`;
      const existing = await this.readMetadata(id);
      if (existing && existing.sha256 !== sha256) continue; // another content starts with the same digits
      if (existing && (await this.blobMatches(id, data))) return existing; // else the blob is missing or damaged: write it again
      const file: StoredFile = {
        key: `files/${id}`,
        name: cleanName(meta.name) ?? id,
        size: data.length,
        sha256,
        created: existing?.created ?? new Date().toISOString(),
      };
      // The blob first, the metadata last: metadata on disk means the blob beside it is complete.
      await this.writeAtomic(id, data);
      await this.writeAtomic(`${id}.json`, Buffer.from(`${JSON.stringify(file, null, 2)}\n`));
      return file;
    }
    throw new SandboxError(
      'engine-error',
      `The file store at ${this.folder} has no free key for sha256 ${sha256}.`,
      'Delete files from the store and try again.',
    );
  }

  /** Stores a file from the host's file system, named after it unless a name is given. */
  async putFile(path: string, meta: { name?: string } = {}): Promise<StoredFile> {
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      throw hostFileError(path, error);
    }
    if (!info.isFile())
      throw new SandboxError(
        'not-a-file',
        `${path} is not a regular file.`,
        'Give the path of a file; to store a folder, pack it into an archive first (tar, zip).',
      );
    this.checkSize(info.size, path);
    const data = await readFile(path);
    return this.put(data, { name: meta.name ?? basename(path) });
  }

  /** The content and its record; fails when the blob no longer matches its sha256. */
  async get(key: string): Promise<{ data: Uint8Array; file: StoredFile }> {
    const id = parseKey(key);
    const file = await this.readMetadata(id);
    if (!file) throw notFound(key);
    let data: Buffer;
    try {
      data = await readFile(join(this.folder, id));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw corrupted(file, 'its content is missing');
      throw error;
    }
    const sha256 = createHash('sha256').update(data).digest('hex');
    if (data.length !== file.size || sha256 !== file.sha256) {
      throw corrupted(
        file,
        `its content (${formatSize(data.length)}, sha256 ${sha256}) no longer matches what was stored (${formatSize(file.size)}, sha256 ${file.sha256})`,
      );
    }
    return { data, file };
  }

  /** The record alone, without reading the content. */
  async stat(key: string): Promise<StoredFile> {
    const file = await this.readMetadata(parseKey(key));
    if (!file) throw notFound(key);
    return file;
  }

  /** Every stored file, oldest first. */
  async list(): Promise<StoredFile[]> {
    let names: string[];
    try {
      names = await readdir(this.folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const files = await Promise.all(
      names
        .filter((name) => /^f_[0-9a-f]+\.json$/.test(name))
        .map((name) => this.readMetadata(name.slice(0, -'.json'.length)).catch(() => undefined)),
    );
    return files
      .filter((file): file is StoredFile => file !== undefined)
      .sort((a, b) => a.created.localeCompare(b.created) || a.key.localeCompare(b.key));
  }

  /** Removes a file; its key stops working. Returns what was removed. */
  async delete(key: string): Promise<StoredFile> {
    const id = parseKey(key);
    const file = await this.readMetadata(id);
    if (!file) throw notFound(key);
    await rm(join(this.folder, `${id}.json`), { force: true });
    await rm(join(this.folder, id), { force: true });
    return file;
  }

  private checkSize(size: number, what: string): void {
    if (size > this.maxFileBytes) {
      throw new SandboxError(
        'file-too-large',
        `${what} is ${formatSize(size)}; the file store takes files up to ${formatSize(this.maxFileBytes)}.`,
        'Compress or split the file and store the parts.',
      );
    }
  }

  private async readMetadata(id: string): Promise<StoredFile | undefined> {
    let text: string;
    try {
      text = await readFile(join(this.folder, `${id}.json`), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    let parsed;
    try {
      parsed = metadataSchema.safeParse(JSON.parse(text));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success || parsed.data.key !== `files/${id}`) {
      throw new SandboxError(
        'file-corrupted',
        `The record of files/${id} in the file store (${join(this.folder, `${id}.json`)}) is damaged.`,
        `Delete files/${id} and store the file again.`,
      );
    }
    return parsed.data;
  }

  private async blobMatches(id: string, data: Uint8Array): Promise<boolean> {
    const path = join(this.folder, id);
    const info = await lstat(path).catch(() => undefined);
    if (!info?.isFile() || info.size !== data.length) return false;
    return Buffer.from(data).equals(await readFile(path));
  }

  /** Writes a temporary file beside the target and renames it over, so no reader sees half a file. */
  private async writeAtomic(name: string, data: Uint8Array): Promise<void> {
    const temp = join(this.folder, `.tmp-${name}-${randomBytes(6).toString('hex')}`);
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, join(this.folder, name));
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }
}

/** The store's folder for the CLI: AGENT_SANDBOX_FILE_STORE, else $XDG_DATA_HOME/agent-sandbox/files, else ~/.local/share/agent-sandbox/files. */
export function defaultFileStoreFolder(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  if (env.AGENT_SANDBOX_FILE_STORE) return env.AGENT_SANDBOX_FILE_STORE;
  const data = env.XDG_DATA_HOME?.startsWith('/') ? env.XDG_DATA_HOME : join(home, '.local', 'share');
  return join(data, 'agent-sandbox', 'files');
}

/** Checks a key's form and returns its blob's file name, `f_<id>`. */
export function parseKey(key: string): string {
  const match = typeof key === 'string' ? KEY_PATTERN.exec(key) : null;
  if (!match) {
    throw new SandboxError(
      'invalid-input',
      `"${String(key).slice(0, 100)}" is not a file store key.`,
      `A key looks like "${KEY_EXAMPLE}": use one returned by sandbox_publish_file or agent-sandbox files upload, exactly as given.`,
    );
  }
  return `f_${match[1]}`;
}

/** A name for display and download: the last path component, without control characters, at most 255 bytes. */
function cleanName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;

  let clean = (name.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  if (clean === '.' || clean === '..') clean = '';
  while (Buffer.byteLength(clean) > MAX_NAME_BYTES) clean = clean.slice(0, -1);
  return clean || undefined;
}

function notFound(key: string): SandboxError {
  return new SandboxError(
    'file-not-found',
    `No file ${key} is in the file store.`,
    'Use a key returned by sandbox_publish_file or agent-sandbox files upload (agent-sandbox files list shows them); the file may have been deleted.',
  );
}

function corrupted(file: StoredFile, what: string): SandboxError {
  return new SandboxError(
    'file-corrupted',
    `The stored file ${file.key} ("${file.name}") is corrupted: ${what}.`,
    `Delete ${file.key} and store the file again from its source.`,
  );
}

function hostFileError(path: string, error: unknown): SandboxError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR')
    return new SandboxError('file-not-found', `${path} does not exist.`, 'Check the path.');
  if (code === 'EACCES' || code === 'EPERM')
    return new SandboxError(
      'permission-denied',
      `${path} cannot be read: permission denied.`,
      "Check the file's permissions.",
    );
  return new SandboxError('engine-error', `${path} cannot be read: ${(error as Error).message}`, 'Check the path.', {
    cause: error,
  });
}
