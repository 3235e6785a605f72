/**
 * The `agent-sandbox` command as installed (dist/cli.js): loads the CLI's bundle (dist/cli-main.js)
 * with V8's code cache, so a command does not parse and compile 1.5 MB of JavaScript each time it
 * starts. The cache is the user's own (under $XDG_CACHE_HOME or ~/.cache, a 0700 folder this user
 * owns; anything else is not used), one file per bundle (its size, modification time and inode),
 * Node.js version and command, written once after the first such command that had none (V8 itself also refuses data
 * made for another source length, V8 version or flags). Without a usable cache the bundle just loads
 * as usual. Nothing else lives here: this file must stay small.
 *
 * V8 checks only the cache's header: a body that changed on disk (a bad sector, a copy cut short, a
 * program that wrote there) ends the process with a fatal error on every command, before any code of
 * ours runs. So each file starts with the SHA-256 of what follows, checked before V8 sees the data.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import Module from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';

const BUNDLE = join(__dirname, 'cli-main.js');
const PREFIX = 'cli-main-';

/** The cache folder, when it is safe to use: this user's, and writable by no one else. */
function cacheDir(): string | undefined {
  if (process.env.AGENT_SANDBOX_CODE_CACHE === '0') return undefined;
  try {
    const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
    const dir = join(base, 'agent-sandbox', 'code-cache');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = statSync(dir);
    const uid = process.getuid?.();
    if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o022) !== 0) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

const DIGEST_BYTES = 32;
/** Far more than a bundle's code cache (a few MB): a larger file is not read. */
const MAX_CACHE_BYTES = 64 << 20;

function digest(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

/** The cache's data when the file is this user's regular file (checked on the opened descriptor) and its digest matches. */
function cachedData(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    const uid = process.getuid?.();
    if (!stat.isFile() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o022) !== 0) return undefined;
    if (stat.size <= DIGEST_BYTES || stat.size > MAX_CACHE_BYTES) return undefined;
    const bytes = Buffer.alloc(stat.size);
    if (readSync(fd, bytes, 0, bytes.length, 0) !== bytes.length) return undefined;
    const data = bytes.subarray(DIGEST_BYTES);
    return digest(data).equals(bytes.subarray(0, DIGEST_BYTES)) ? data : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Writes the cache beside the old ones, then takes their place: a reader never sees half a file. */
function writeCache(dir: string, stem: string, file: string, data: Buffer): void {
  try {
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, Buffer.concat([digest(data), data]), { flag: 'wx', mode: 0o600 });
    renameSync(temporary, file);
    // Those of another bundle (or Node.js) go.
    for (const name of readdirSync(dir))
      if (name.startsWith(PREFIX) && !join(dir, name).startsWith(`${stem}-`)) rmSync(join(dir, name), { force: true });
  } catch {
    // A full disk or a read-only home: the next command loads without it.
  }
}

function load(): void {
  const source = readFileSync(BUNDLE, 'utf8');
  const dir = cacheDir();
  let file: string | undefined;
  let stem = '';
  let data: Buffer | undefined;
  if (dir) {
    const stat = statSync(BUNDLE);
    const id = [process.version, process.arch, stat.size, Math.floor(stat.mtimeMs), stat.ino].join('-');
    // One per command: each holds the functions its command compiled (run's are not help's).
    const command = /^[a-z][a-z-]{0,19}$/.test(process.argv[2] ?? '') ? process.argv[2] : 'other';
    stem = join(dir, `${PREFIX}${id}`);
    file = `${stem}-${command}.bin`;
    data = cachedData(file);
  }
  const script = new Script(Module.wrap(source), { filename: BUNDLE, cachedData: data });
  if (dir && file && (!data || script.cachedDataRejected)) {
    const cacheFile = file;
    // Made at exit, so that it holds the functions this command compiled as it ran.
    process.once('exit', () => writeCache(dir, stem, cacheFile, script.createCachedData()));
  }
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: Module,
    filename: string,
    dirname: string,
  ) => void;
  const bundleModule = new Module(BUNDLE, module);
  bundleModule.filename = BUNDLE;
  wrapper.call(bundleModule.exports, bundleModule.exports, createRequire(BUNDLE), bundleModule, BUNDLE, __dirname);
}

load();
