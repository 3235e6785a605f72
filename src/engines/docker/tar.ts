/** Builds the tar streams that carry files into a container, with tar-stream. */
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
