/**
 * Warm compute containers that outlive the process that made them, so that a short-lived process (one
 * `agent-sandbox run`) starts its program in a container that is already running. A detached filler
 * process (`agent-sandbox warm-fill`, started after a run) makes them and leaves one ready file per
 * container in the user's state folder (warm/<key>/<id>, a 0700 folder): the pool's record. A later
 * process of the same user claims one by renaming its ready file away, which only one process can do,
 * then attaches and sends its one request, exactly as with a process's own warm container
 * (oneShot.ts); it renames the container to carry its pid, so gc can tell an orphan. Each waiting
 * container ends by itself when no one claimed it within its wait (its runner's watchdog, then
 * AutoRemove). Bounded: `size` per configuration, MAX_WAITING per user.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { z } from 'zod';
import { withSignal } from './engineCalls';
import { CONTAINER_PREFIX, LABEL } from './labels';
import { WaitingContainer, oneShotCreateOptions } from './oneShot';
import { warmContainerMismatch } from './warmCheck';

/** How long a shared warm container waits to be claimed before it ends. */
export const DEFAULT_WARM_WAIT_SECONDS = 600;
/** Warm containers of one user on one machine, whatever their configuration. */
export const MAX_WAITING = 8;
/** A container this close to the end of its wait is not claimed: it could end under the request. */
function claimMarginMs(waitSeconds: number): number {
  return Math.min(20_000, waitSeconds * 250);
}
/** The shortest and longest wait AGENT_SANDBOX_WARM_SECONDS may set. */
export const MIN_WARM_WAIT_SECONDS = 10;
export const MAX_WARM_WAIT_SECONDS = 24 * 3600;
/** A filler's lock older than this is taken as left by a filler that died. */
const FILL_LOCK_STALE_MS = 60_000;
/** A ready file is a few dozen bytes; anything larger is not one (and is not read). */
const MAX_READY_BYTES = 4096;

const WARM_PREFIX = `${CONTAINER_PREFIX}warm-`;
const CLAIMED = /-by-(\d+)$/;

/** What a claimant hands its filler: the create request (without the shared labels, name and runner wait, which fill adds), its key and the pool's bounds. */
export const fillRequestSchema = z.object({
  createOptions: z.record(z.string(), z.unknown()),
  key: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().min(1).max(MAX_WAITING),
  waitSeconds: z.number().int().min(MIN_WARM_WAIT_SECONDS).max(MAX_WARM_WAIT_SECONDS),
  finished: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
});
export interface FillRequest {
  createOptions: Docker.ContainerCreateOptions;
  key: string;
  size: number;
  waitSeconds: number;
  /**
   * A compute container the claimant ran its program in, whose runner wrote its end marker: the
   * filler confirms that it stops (the engine then removes it) and removes it otherwise, so that the
   * claimant can end as soon as it has the program's output (confirmStopped).
   */
  finished?: string;
}
/** How long a runner that wrote its end marker has to stop before its container is removed. */
export const STOP_AFTER_RUN_MS = 1000;

export interface SharedPoolOptions {
  size: number;
  waitSeconds?: number;
  /** The user's folder for claim and fill-lock files (made 0700). */
  stateDir: string;
  /** Starts a filler in the background; without one, fill() is up to the caller. */
  launchFiller?: (request: FillRequest) => Promise<boolean>;
}

/** Who may claim a shared container: this user on this machine. */
export function sharedOwner(): { host: string; uid: string } {
  let uid = 'unknown';
  try {
    uid = String(userInfo().uid);
  } catch {
    // No passwd entry: the labels still tell the machine.
  }
  return { host: hostname(), uid };
}

/** The pid a claimed shared container's name carries, or undefined for one still waiting. */
export function claimantOf(names: readonly string[] | undefined): number | undefined {
  for (const name of names ?? []) {
    const match = CLAIMED.exec(name);
    if (match) return Number(match[1]);
  }
  return undefined;
}

export class SharedPool {
  readonly size: number;
  readonly waitSeconds: number;
  private readonly owner = sharedOwner();
  private readonly claimsDir: string;

  constructor(private readonly options: SharedPoolOptions) {
    this.size = Math.max(0, Math.floor(options.size));
    this.waitSeconds = Math.min(
      MAX_WARM_WAIT_SECONDS,
      Math.max(MIN_WARM_WAIT_SECONDS, Math.floor(options.waitSeconds ?? DEFAULT_WARM_WAIT_SECONDS)),
    );
    this.claimsDir = join(options.stateDir, 'warm');
  }

  /**
   * A waiting container of this configuration, claimed for this process and attached, or undefined
   * when none waits (or every one that did was taken or went away meanwhile). The filler leaves a
   * ready file per container it made (warm/<key>/<id>, its wait's end inside); a claim renames it
   * away, which only one process can do, with no engine call before the attach.
   */
  async claim(
    docker: Docker,
    key: string,
    /** The claimant's own create request (poolKey's input): a container made otherwise is not used. */
    expected: Docker.ContainerCreateOptions,
    signal?: AbortSignal,
    /** How the engine describes a container (warmCheck.ts). */
    dialect: 'docker' | 'podman' = 'docker',
  ): Promise<WaitingContainer | undefined> {
    if (this.size === 0 || !this.folderIsOurs()) return undefined;
    for (const ready of this.readyFiles(key).slice(0, 3)) {
      if (!takeFile(ready.file)) continue; // another process took it first
      const container = docker.getContainer(ready.id);
      let stream: Duplex | undefined;
      try {
        // A ready file names a container; only the engine says what it is. One that is not a warm
        // container of this user and configuration (another session, one made with other options) is
        // left alone: not renamed, and no request is written to it.
        const [attached, inspected] = await Promise.all([
          container.attach(
            withSignal({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true }, signal),
          ) as Promise<Duplex>,
          container.inspect(withSignal({}, signal)),
        ]);
        stream = attached;
        const mismatch = warmContainerMismatch(inspected, {
          name: `${WARM_PREFIX}${ready.name}`,
          key,
          owner: this.owner,
          expected,
          dialect,
        });
        if (mismatch) throw new Error(mismatch);
        // The claimant's pid in the name: gc removes the container once this process is gone.
        await container.rename(withSignal({ name: `${CONTAINER_PREFIX}run-${ready.name}-by-${process.pid}` }, signal));
        return new WaitingContainer(container, stream, ready.createdAt);
      } catch {
        stream?.destroy();
        if (signal?.aborted) return undefined;
        // Gone meanwhile (its wait ended, or gc took it), or not one of ours: the next one.
      }
    }
    return undefined;
  }

  /**
   * Whether the state folder and its warm/ folder are this user's alone (real folders, not links,
   * owned by this user, writable by no one else): otherwise anyone who can write there could name a
   * container for our request, and the shared pool is not used.
   */
  private folderIsOurs(): boolean {
    const uid = process.getuid?.();
    for (const dir of [this.options.stateDir, this.claimsDir]) {
      try {
        const stat = lstatSync(dir);
        if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o022) !== 0) return false;
      } catch {
        return false;
      }
    }
    return true;
  }

  /** This configuration's ready files with time left to wait, the freshest first; those without go. */
  private readyFiles(key: string): { file: string; id: string; name: string; createdAt: string; until: number }[] {
    const dir = join(this.claimsDir, key);
    let names: string[];
    try {
      if (!lstatSync(dir).isDirectory()) return [];
      names = readdirSync(dir);
    } catch {
      return [];
    }
    const now = Date.now();
    const ready = [];
    for (const id of names) {
      if (!/^[0-9a-f]{64}$/.test(id)) continue;
      const file = join(dir, id);
      let record: { until?: unknown; name?: unknown; createdAt?: unknown };
      try {
        record = JSON.parse(readReadyFile(file)) as typeof record;
      } catch {
        // Not a ready file (a link, a FIFO, a huge or malformed one): never claimed, and it goes.
        rmSync(file, { force: true });
        continue;
      }
      if (record === null || typeof record !== 'object') {
        rmSync(file, { force: true });
        continue;
      }
      const until = typeof record.until === 'number' ? record.until : 0;
      if (until - now <= claimMarginMs(this.waitSeconds)) {
        rmSync(file, { force: true });
        continue;
      }
      ready.push({
        file,
        id,
        name:
          typeof record.name === 'string' && /^[0-9a-f]{12}$/.test(record.name)
            ? record.name
            : randomBytes(6).toString('hex'),
        createdAt: typeof record.createdAt === 'string' ? record.createdAt : new Date(now).toISOString(),
        until,
      });
    }
    return ready.sort((a, b) => b.until - a.until);
  }

  /**
   * Tops this configuration up in the background (a detached filler), after a claim or a miss, and
   * hands it the container the run used (`finished`) to see it stop. Resolves true once a filler
   * has the request, false when none could start (the caller then sees to the container itself).
   */
  refill(createOptions: Docker.ContainerCreateOptions, key: string, finished?: string): Promise<boolean> {
    if (this.size === 0 || !this.options.launchFiller) return Promise.resolve(false);
    return this.options
      .launchFiller({
        createOptions,
        key,
        size: this.size,
        waitSeconds: this.waitSeconds,
        ...(finished ? { finished } : {}),
      })
      .catch(() => false);
  }

  /**
   * A filler's first job when a claimant handed it the container it ran in: that container's runner
   * wrote its end marker, so it stops within moments and the engine removes it (AutoRemove). One that
   * is still running after STOP_AFTER_RUN_MS goes on past its run (a program that printed the marker
   * itself): removed, if it is a compute container of this user on this machine.
   */
  async confirmStopped(
    docker: Docker,
    id: string,
    withinMs = STOP_AFTER_RUN_MS,
  ): Promise<'stopped' | 'removed' | 'left'> {
    const container = docker.getContainer(id);
    const stopped = await container
      .wait(withSignal({ condition: 'not-running' as const }, AbortSignal.timeout(withinMs)))
      .then(
        () => true,
        (error: { statusCode?: number }) => error?.statusCode === 404,
      );
    if (stopped) return 'stopped';
    let info: Docker.ContainerInspectInfo;
    try {
      info = await container.inspect();
    } catch {
      return 'stopped'; // gone meanwhile
    }
    if (!info.State.Running) return 'stopped';
    const labels = info.Config.Labels ?? {};
    const ours =
      info.Name.startsWith(`/${CONTAINER_PREFIX}run-`) &&
      labels[LABEL.managed] === '1' &&
      labels[LABEL.mode] === 'compute' &&
      labels[LABEL.ownerHost] === this.owner.host &&
      (labels[LABEL.ownerUid] === undefined || labels[LABEL.ownerUid] === this.owner.uid);
    if (!ours) return 'left';
    await container.remove({ force: true }).catch(() => undefined);
    return 'removed';
  }

  /**
   * The filler's work: makes and starts containers until `size` of this configuration wait, within
   * MAX_WAITING for the user (the oldest waiting ones of other configurations make room). One filler
   * per configuration at a time; another that finds the lock taken leaves it to that one.
   */
  async fill(docker: Docker, request: FillRequest, signal?: AbortSignal): Promise<number> {
    // The key names the configuration a claimant asks for: one that is not this request's own would
    // file containers made with other options (a bind mount, privileges) under another's key.
    if (poolKey(request.createOptions) !== request.key) return 0;
    this.ensureDir();
    if (!this.folderIsOurs()) return 0;
    // One filler at a time for the user, whatever the configuration: fillers of several
    // configurations counting at once would each see room and together pass MAX_WAITING. One that
    // finds the lock taken leaves it: the next run of its configuration starts another.
    const lock = join(this.claimsDir, 'fill.lock');
    if (!takeLock(lock)) return 0;
    try {
      // The ready files are the pool's record (a container without one is never claimed, and ends
      // when its wait is over): they are counted, not the engine's containers.
      const margin = claimMarginMs(request.waitSeconds) * 3;
      const mine = this.readyFiles(request.key).filter((ready) => ready.until - Date.now() > margin);
      const wanted = Math.max(0, Math.min(request.size, MAX_WAITING) - mine.length);
      if (wanted === 0) return 0;
      const others = this.allReady()
        .filter((ready) => ready.key !== request.key)
        .sort((a, b) => a.until - b.until);
      const room = MAX_WAITING - mine.length - others.length;
      for (const old of others.slice(0, Math.max(0, wanted - room))) {
        if (takeFile(old.file))
          await docker
            .getContainer(old.id)
            .remove({ force: true })
            .catch(() => undefined);
      }
      const made = await Promise.all(
        Array.from({ length: wanted }, () =>
          this.make(docker, request, signal).then(
            () => 1,
            () => 0,
          ),
        ),
      );
      return made.reduce((sum: number, one) => sum + one, 0);
    } finally {
      rmSync(lock, { force: true });
    }
  }

  private async make(docker: Docker, request: FillRequest, signal?: AbortSignal): Promise<void> {
    const createdAt = new Date();
    const base = request.createOptions;
    const options = oneShotCreateOptions(
      base,
      {
        [LABEL.created]: createdAt.toISOString(),
        [LABEL.pool]: '1',
        [LABEL.warm]: request.key,
        [LABEL.warmUntil]: new Date(createdAt.getTime() + request.waitSeconds * 1000).toISOString(),
        [LABEL.ownerHost]: this.owner.host,
        [LABEL.ownerUid]: this.owner.uid,
      },
      { waitSeconds: request.waitSeconds, shared: true },
    );
    const suffix = randomBytes(6).toString('hex');
    const container = await docker.createContainer(withSignal({ ...options, name: `${WARM_PREFIX}${suffix}` }, signal));
    try {
      await container.start(withSignal({}, signal));
    } catch (error) {
      await container.remove({ force: true }).catch(() => undefined);
      throw error;
    }
    const dir = join(this.claimsDir, request.key);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const record = {
      until: createdAt.getTime() + request.waitSeconds * 1000,
      name: suffix,
      createdAt: createdAt.toISOString(),
    };
    // Written aside, then renamed into place: a claimant never reads half a record.
    const temporary = join(this.claimsDir, `${container.id}.tmp`);
    writeFileSync(temporary, JSON.stringify(record), { mode: 0o600 });
    renameSync(temporary, join(dir, container.id));
  }

  private ensureDir(): void {
    mkdirSync(this.claimsDir, { recursive: true, mode: 0o700 });
  }

  /** The ready files of every configuration (those whose wait is over go). */
  private allReady(): { file: string; id: string; key: string; until: number }[] {
    return readdirSync(this.claimsDir)
      .filter((key) => /^[0-9a-f]{64}$/.test(key))
      .flatMap((key) => {
        const ready = this.readyFiles(key);
        // A configuration with nothing waiting leaves no folder behind (the filler's lock keeps
        // another filler from making one in it meanwhile; a claimant only renames files away).
        if (ready.length === 0) rmEmptyDir(join(this.claimsDir, key));
        return ready.map((one) => ({ ...one, key }));
      });
  }
}

/**
 * Starts `agent-sandbox warm-fill` detached, the request on its stdin; resolves true once the request
 * is handed over, false when the filler could not start or take it.
 */
export function fillerLauncher(command: {
  nodePath: string;
  cliPath: string;
  args?: readonly string[];
  env?: NodeJS.ProcessEnv;
}): (request: FillRequest) => Promise<boolean> {
  return (request) =>
    new Promise<boolean>((resolve) => {
      let child: ReturnType<typeof spawn>;
      try {
        child = spawn(command.nodePath, [command.cliPath, 'warm-fill', ...(command.args ?? [])], {
          detached: true,
          stdio: ['pipe', 'ignore', 'ignore'],
          env: { ...(command.env ?? process.env), ELECTRON_RUN_AS_NODE: '1' },
        });
      } catch {
        resolve(false);
        return;
      }
      child.on('error', () => resolve(false));
      child.unref();
      if (!child.stdin) return resolve(false);
      child.stdin.on('error', () => resolve(false));
      child.stdin.end(JSON.stringify(request), () => resolve(true));
    });
}

/** An O_EXCL lock file with this process's pid; one left by a filler that died is taken over after a minute. */
function takeLock(file: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false;
      try {
        if (Date.now() - statSync(file).mtimeMs < FILL_LOCK_STALE_MS) return false;
        rmSync(file, { force: true });
      } catch {
        return false;
      }
    }
  }
  return false;
}

/** Containers are interchangeable when their whole create request (without name and creation time) is the same. */
export function poolKey(createOptions: Docker.ContainerCreateOptions): string {
  const { name: _name, ...rest } = createOptions as Docker.ContainerCreateOptions & { name?: string };
  return createHash('sha256').update(JSON.stringify(rest)).digest('hex');
}

/** A ready file's text: a regular file of this user's, not a link (O_NOFOLLOW) nor a FIFO (O_NONBLOCK), a few bytes long. */
function readReadyFile(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    const uid = process.getuid?.();
    if (!stat.isFile() || stat.size > MAX_READY_BYTES || (uid !== undefined && stat.uid !== uid))
      throw new Error('not a ready file');
    const buffer = Buffer.alloc(MAX_READY_BYTES + 1);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    if (length > MAX_READY_BYTES) throw new Error('not a ready file');
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function rmEmptyDir(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Not empty (a claimant's file being taken), or gone.
  }
}

/** Renames a ready file away and removes it: true for the one process whose rename won. */
function takeFile(file: string): boolean {
  const taken = `${file}.taken-${process.pid}`;
  try {
    renameSync(file, taken);
  } catch {
    return false;
  }
  rmSync(taken, { force: true });
  return true;
}
