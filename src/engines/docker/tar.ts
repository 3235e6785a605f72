/** Builds the tar archives that carry files into a container: with tar-stream, or laid out in one buffer (TarLayout). */
import { pack } from 'tar-stream';

export interface TarEntry {
  /** Path inside the archive, relative (no leading slash). */
  name: string;
  type: 'file' | 'directory' | 'symlink';
  /** A link's target. */
  linkname?: string;
  data?: Uint8Array;
  mode: number;
  uid: number;
  gid: number;
}

export async function buildTar(entries: readonly TarEntry[]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (chunk: unknown) => void chunks.push(chunk as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    archive.on('end', resolve);
    archive.on('error', reject);
  });
  const mtime = new Date();
  for (const entry of entries) {
    const header = { name: entry.name, mode: entry.mode, uid: entry.uid, gid: entry.gid, mtime, type: entry.type };
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (entry.type === 'file')
        archive.entry({ ...header, size: entry.data?.length ?? 0 }, Buffer.from(entry.data ?? new Uint8Array()), done);
      else if (entry.type === 'symlink') archive.entry({ ...header, linkname: entry.linkname ?? '' }, done);
      else archive.entry(header, done);
    });
  }
  archive.finalize();
  await done;
  return Buffer.concat(chunks);
}

const BLOCK = 512;
const USTAR = Buffer.from('ustar\u000000', 'latin1');
const TYPEFLAG: Record<TarEntry['type'], string> = { file: '0', directory: '5', symlink: '2' };

/** What the layout of an entry needs: everything but its bytes and mode. */
export type LaidOutEntry = Pick<TarEntry, 'name' | 'type' | 'linkname'> & { size: number };

interface EntryPlan {
  fields: { name: string; prefix: string; linkname: string };
  /** The PAX record that carries what the ustar fields cannot. */
  pax?: Buffer;
  size: number;
  /** Where the entry's headers start; its bytes follow them. */
  at: number;
  dataAt: number;
}

/**
 * An archive laid out before its files are read: a place in one buffer for each file's bytes, the
 * headers written once the modes are known. The format is buildTar's (ustar; a PAX record for a name
 * or link target that does not fit or is not ASCII), with no stream and no copy of the bytes: for
 * the many files of a copy, where tar-stream's work per entry and a second copy of every byte cost
 * more than reading them.
 */
export class TarLayout {
  readonly archive: Buffer;
  private readonly plans: EntryPlan[];

  constructor(private readonly entries: readonly LaidOutEntry[]) {
    let at = 0;
    this.plans = entries.map((entry) => {
      const plan = planEntry(entry, at);
      at = plan.dataAt + padded(plan.size);
      return plan;
    });
    // Shared memory, so that a worker thread can hash the files read into it (readFolderCopy).
    this.archive = Buffer.from(new SharedArrayBuffer(at + 2 * BLOCK));
  }

  /** The place for the bytes of entry `index`, of its laid-out size; undefined for a link or a folder. */
  place(index: number): Uint8Array | undefined {
    const plan = this.plans[index]!;
    if (this.entries[index]!.type !== 'file') return undefined;
    return this.archive.subarray(plan.dataAt, plan.dataAt + plan.size);
  }

  /**
   * The archive of `entries` (the laid-out ones, in order, with their modes), when every file's bytes
   * are in its place; undefined when one is not (a file that changed size while it was read).
   */
  finish(entries: readonly TarEntry[], mtime = new Date()): Buffer | undefined {
    if (entries.length !== this.plans.length) return undefined;
    for (let index = 0; index < entries.length; index++) {
      const entry = entries[index]!;
      const plan = this.plans[index]!;
      if (entry.name !== this.entries[index]!.name || entry.type !== this.entries[index]!.type) return undefined;
      if (entry.type === 'file' && !sameBytes(entry.data, this.archive, plan.dataAt, plan.size)) return undefined;
    }
    const seconds = Math.floor(mtime.getTime() / 1000);
    entries.forEach((entry, index) => {
      const plan = this.plans[index]!;
      let at = plan.at;
      if (plan.pax) {
        const paxFields = { ...plan.fields, name: 'PaxHeader', linkname: '' };
        writeHeader(this.archive.subarray(at, at + BLOCK), paxFields, entry, 'x', plan.pax.length, seconds);
        plan.pax.copy(this.archive, at + BLOCK);
        this.archive.fill(0, at + BLOCK + plan.pax.length, plan.dataAt - BLOCK);
        at = plan.dataAt - BLOCK;
      }
      writeHeader(this.archive.subarray(at, at + BLOCK), plan.fields, entry, TYPEFLAG[entry.type], plan.size, seconds);
      this.archive.fill(0, plan.dataAt + plan.size, plan.dataAt + padded(plan.size));
    });
    this.archive.fill(0, this.archive.length - 2 * BLOCK);
    return this.archive;
  }
}

/** The same archive as buildTar, in one buffer (see TarLayout): each file's bytes copied once. */
export function tarBuffer(entries: readonly TarEntry[], mtime = new Date()): Buffer {
  const layout = new TarLayout(
    entries.map((entry) => ({ ...entry, size: entry.type === 'file' ? (entry.data?.length ?? 0) : 0 })),
  );
  const placed = entries.map((entry, index) => {
    const place = layout.place(index);
    if (!place) return entry;
    place.set(entry.data ?? new Uint8Array());
    return { ...entry, data: place };
  });
  return layout.finish(placed, mtime)!;
}

function sameBytes(data: Uint8Array | undefined, archive: Buffer, at: number, size: number): boolean {
  if (!data) return size === 0;
  return (
    data.length === size &&
    (size === 0 || (data.buffer === archive.buffer && data.byteOffset === archive.byteOffset + at))
  );
}

function planEntry(entry: LaidOutEntry, at: number): EntryPlan {
  const name = entry.type === 'directory' && !entry.name.endsWith('/') ? `${entry.name}/` : entry.name;
  const linkname = entry.type === 'symlink' ? (entry.linkname ?? '') : '';
  const size = entry.type === 'file' ? entry.size : 0;
  if (size > 0o77777777777) throw new Error(`${entry.name} is too large for a tar entry`);
  const split = ustarName(name);
  const linkFits = isAscii(linkname) && linkname.length <= 100;
  if (split && linkFits) return { fields: { ...split, linkname }, size, at, dataAt: at + BLOCK };
  let pax = paxRecord('path', name);
  if (!linkFits) pax = Buffer.concat([pax, paxRecord('linkpath', linkname)]);
  // The ustar fields keep what fits, for readers without PAX.
  const fields = {
    name: asciiPrefix(name, 100),
    prefix: '',
    linkname: linkFits ? linkname : asciiPrefix(linkname, 100),
  };
  return { fields, pax, size, at, dataAt: at + 2 * BLOCK + padded(pax.length) };
}

/** name and prefix of ustar (split as tar-stream splits them), or undefined when the path needs PAX. */
function ustarName(path: string): { name: string; prefix: string } | undefined {
  if (!isAscii(path)) return undefined;
  let name = path;
  let prefix = '';
  while (name.length > 100) {
    const slash = name.indexOf('/');
    if (slash === -1) return undefined;
    prefix += prefix ? `/${name.slice(0, slash)}` : name.slice(0, slash);
    name = name.slice(slash + 1);
  }
  return prefix.length > 155 ? undefined : { name, prefix };
}

function isAscii(text: string): boolean {
  return /^[\x01-\x7f]*$/.test(text);
}

function asciiPrefix(text: string, bytes: number): string {
  return text.replace(/[^\x01-\x7f]/g, '_').slice(0, bytes);
}

/** "<length> <key>=<value>\n", the length counting its own digits. */
function paxRecord(key: string, value: string): Buffer {
  const body = Buffer.byteLength(` ${key}=${value}\n`);
  let length = body + String(body).length;
  if (String(length).length > String(body).length) length = body + String(length).length;
  return Buffer.from(`${length} ${key}=${value}\n`);
}

function padded(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK;
}

function writeHeader(
  header: Buffer,
  fields: EntryPlan['fields'],
  entry: TarEntry,
  typeflag: string,
  size: number,
  seconds: number,
): void {
  if (entry.uid > 0o7777777 || entry.gid > 0o7777777) throw new Error(`${entry.name}: uid or gid too large for ustar`);
  header.fill(0);
  header.write(fields.name, 0, 100, 'latin1');
  header.write(octal(entry.mode & 0o7777, 7), 100, 'latin1');
  header.write(octal(entry.uid, 7), 108, 'latin1');
  header.write(octal(entry.gid, 7), 116, 'latin1');
  header.write(octal(size, 11), 124, 'latin1');
  header.write(octal(seconds, 11), 136, 'latin1');
  header.write(typeflag, 156, 'latin1');
  header.write(fields.linkname, 157, 100, 'latin1');
  USTAR.copy(header, 257);
  header.write(octal(0, 7), 329, 'latin1');
  header.write(octal(0, 7), 337, 'latin1');
  header.write(fields.prefix, 345, 155, 'latin1');
  // The checksum counts its own field as eight spaces.
  let sum = 8 * 32;
  for (let index = 0; index < BLOCK; index++) if (index < 148 || index >= 156) sum += header[index]!;
  header.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 'latin1');
}

/** `digits` octal digits, zero-padded, then NUL: the field's full width. */
function octal(value: number, digits: number): string {
  return `${value.toString(8).padStart(digits, '0')}\u0000`;
}
