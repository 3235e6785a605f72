/**
 * Watches a host folder that a sandbox mounts read-write. No engine can cap a folder of the user's
 * own disk, so the sandbox is stopped once the folder grew past the disk or inode limit since the
 * watch began. Cheap while nothing happens: one statfs of the folder's file system a second; only when
 * that file system grew by what is left of a limit is the folder itself walked, to tell the sandbox's
 * growth from everyone else's. The walk never follows a link nor leaves the folder's file system, and
 * stops as soon as the limit is passed, so a folder full of hostile names costs at most the limit.
 */
import { lstat, readdir, statfs } from 'node:fs/promises';
import { join } from 'node:path';

export interface Usage {
  /** Allocated bytes (a sparse file counts what it holds, not its length). */
  bytes: number;
  /** Files, folders and links. */
  inodes: number;
}

export interface FolderGrowthOptions {
  folder: string;
  limits: Usage;
  /** Called once, with the growth, when the folder grew past a limit; the watch has stopped by then. */
  onExceeded(growth: Usage): Promise<void> | void;
  /** Holds the sandbox still while the folder is measured (a container's pause); returns what lets it go. */
  hold?(): Promise<() => Promise<void>>;
  /** How often the file system is looked at (1 s when not given). */
  intervalMs?: number;
  /**
   * The folder's use before the sandbox existed (measured at open, kept in the container's labels), so
   * that every process that watches counts from the same start; the first look then measures at once.
   * Without it, the watch measures the folder as it finds it.
   */
  baseline?: Usage;
  /**
   * Space the sandbox holds beyond what a walk sees (files deleted while open); asked while it is held
   * still. `opaque` says it holds some whose size cannot be read: the file system's growth counts then.
   */
  unseen?(): Promise<Usage & { opaque?: boolean }>;
}

const DEFAULT_INTERVAL_MS = 1000;
/** On a file system that reports no inode counts, the folder is walked every this many looks. */
const WALK_EVERY_WITHOUT_INODES = 10;

export class FolderGrowthWatch {
  private readonly timer: NodeJS.Timeout;
  private baseline: Usage | undefined;
  /** The file system's use when the watch began. */
  private start: Usage | undefined;
  /** Folders that could not be read when the watch began (the user's own, not the sandbox's doing). */
  private readonly unreadable = new Set<string>();
  /** The file system's use when the folder was last measured, and the folder's growth then. */
  private reference: Usage | undefined;
  private known: Usage = { bytes: 0, inodes: 0 };
  private looks = 0;
  private busy = false;
  private current: Promise<void> | undefined;
  private stopped = false;
  /** The next look measures whatever the file system says (set when the baseline came from elsewhere). */
  private measureNext = false;
  private readonly ready: Promise<boolean>;

  constructor(private readonly options: FolderGrowthOptions) {
    this.ready = this.begin();
    if (options.baseline)
      void this.ready.then(async (started) => {
        if (started) await this.check();
      });
    this.timer = setInterval(() => void this.check(), options.intervalMs ?? DEFAULT_INTERVAL_MS);
    // The watch never keeps a process (the CLI, a test run) alive.
    this.timer.unref?.();
  }

  /** Whether the watch could start: the folder is on this machine and readable. */
  get started(): Promise<boolean> {
    return this.ready;
  }

  /** Stops looking; resolves once a look under way has let the sandbox go again. */
  stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    return this.current ?? Promise.resolve();
  }

  /** One look (the timer makes one a second); resolves when it is done. */
  check(): Promise<void> {
    if (this.busy || this.stopped) return this.current ?? Promise.resolve();
    this.busy = true;
    this.current = this.look().finally(() => {
      this.busy = false;
      this.current = undefined;
    });
    return this.current;
  }

  private async look(): Promise<void> {
    try {
      if (!(await this.ready) || this.stopped) return;
      const first = this.measureNext;
      if (!first && !(await this.grewEnough())) return;
      this.measureNext = false;
      // The first look from a kept baseline does not hold the sandbox: it runs as a call begins, and a
      // paused container would refuse the call; what it misses, the next looks see.
      const release = first ? undefined : await this.options.hold?.().catch(() => undefined);
      try {
        await this.measure();
      } finally {
        await release?.().catch(() => undefined);
      }
    } catch {
      // A folder that vanished or a file system that stopped answering: the next look tries again.
    }
  }

  private async begin(): Promise<boolean> {
    try {
      // The file system first: what the sandbox writes during the walk then counts as growth, never as baseline.
      this.reference = await fileSystemUse(this.options.folder);
      this.start = this.reference;
      const root = await lstat(this.options.folder);
      if (this.options.baseline) {
        this.baseline = this.options.baseline;
        this.measureNext = true;
      } else {
        this.baseline = (await walk(this.options.folder, root.dev, Infinity, this.unreadable)).usage;
      }
      return true;
    } catch {
      this.stop();
      return false;
    }
  }

  /** Whether the file system grew by what is left of a limit (at least a sixteenth of it, so that other writers cost few walks). */
  private async grewEnough(): Promise<boolean> {
    const now = await fileSystemUse(this.options.folder);
    const { limits } = this.options;
    const reference = this.reference!;
    const room = (limit: number, known: number) => Math.max(limit - known, limit / 16);
    if (now.bytes - reference.bytes >= room(limits.bytes, this.known.bytes)) return true;
    if (now.inodes === 0 && reference.inodes === 0) return ++this.looks % WALK_EVERY_WITHOUT_INODES === 0;
    return now.inodes - reference.inodes >= room(limits.inodes, this.known.inodes);
  }

  private async measure(): Promise<void> {
    const baseline = this.baseline!;
    const { limits } = this.options;
    const reference = await fileSystemUse(this.options.folder);
    const cap = { bytes: baseline.bytes + limits.bytes, inodes: baseline.inodes + limits.inodes };
    const root = await lstat(this.options.folder);
    const unseen = (await this.options.unseen?.().catch(() => undefined)) ?? { bytes: 0, inodes: 0, opaque: false };
    const { usage, exceeded, hidden } = await walk(
      this.options.folder,
      root.dev,
      { bytes: cap.bytes - unseen.bytes, inodes: cap.inodes - unseen.inodes },
      new Set(this.unreadable),
    );
    const growth = {
      bytes: usage.bytes + unseen.bytes - baseline.bytes,
      inodes: usage.inodes + unseen.inodes - baseline.inodes,
    };
    if (hidden || unseen.opaque) {
      // A folder the sandbox made unreadable (chmod 000), or a deleted file it maps, could hide what it
      // wrote: the file system's growth is taken instead.
      growth.bytes = Math.max(growth.bytes, reference.bytes - this.start!.bytes);
      growth.inodes = Math.max(growth.inodes, reference.inodes - this.start!.inodes);
    }
    if (exceeded || growth.bytes > limits.bytes || growth.inodes > limits.inodes) {
      this.stop();
      await this.options.onExceeded(growth);
      return;
    }
    this.known = { bytes: Math.max(0, growth.bytes), inodes: Math.max(0, growth.inodes) };
    this.reference = reference;
  }
}

/** What a folder holds now (allocated bytes, entries), without following links or leaving its file system. */
export async function measureFolder(folder: string): Promise<Usage> {
  const root = await lstat(folder);
  return (await walk(folder, root.dev, Infinity, new Set())).usage;
}

/** Used bytes and inodes of the file system that holds `path`. */
async function fileSystemUse(path: string): Promise<Usage> {
  const stats = await statfs(path);
  return { bytes: (stats.blocks - stats.bfree) * stats.bsize, inodes: stats.files - stats.ffree };
}

/**
 * Sums a folder, without following links or leaving its file system; stops once past `cap` (a number
 * caps both). Folders it cannot read are added to `unreadable`; `hidden` says whether a new one was.
 */
async function walk(
  folder: string,
  device: number,
  cap: Usage | number,
  unreadable: Set<string>,
): Promise<{ usage: Usage; exceeded: boolean; hidden: boolean }> {
  const most = typeof cap === 'number' ? { bytes: cap, inodes: cap } : cap;
  const usage: Usage = { bytes: 0, inodes: 0 };
  let hidden = false;
  const pending = [folder];
  while (pending.length) {
    const dir = pending.pop()!;
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && !unreadable.has(dir)) {
        unreadable.add(dir);
        hidden = true;
      }
      continue;
    }
    for (let start = 0; start < names.length; start += 64) {
      const stats = await Promise.all(
        names.slice(start, start + 64).map((name) =>
          lstat(join(dir, name)).then(
            (stat) => ({ name, stat }),
            () => undefined,
          ),
        ),
      );
      for (const entry of stats) {
        if (!entry || entry.stat.dev !== device) continue;
        usage.inodes++;
        usage.bytes += entry.stat.blocks * 512;
        if (entry.stat.isDirectory()) pending.push(join(dir, entry.name));
      }
      if (usage.bytes > most.bytes || usage.inodes > most.inodes) return { usage, exceeded: true, hidden };
    }
  }
  return { usage, exceeded: false, hidden };
}
