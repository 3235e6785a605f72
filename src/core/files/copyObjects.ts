/**
 * The bytes a copy started from, kept for the merge of a conflict (a file changed both in the folder
 * and in the sandbox needs the common base). Only text-sized files are kept, up to a budget per
 * session, in one pack file beside the baseline with an index by sha256 (one write at open, instead
 * of a file per object); a file without its base is still shown as a conflict, as a two-sided diff.
 */
import { mkdir, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { baselinePath, sha256, type CopyBaseline } from './folderCopy';

/** A file larger than this has no kept base. */
const MAX_OBJECT_BYTES = 1024 * 1024;
/** At most this much is kept per session. */
const MAX_TOTAL_BYTES = 32 * 1024 * 1024;

type PackIndex = Record<string, [offset: number, length: number]>;

function packPaths(stateDir: string, containerId: string): { pack: string; index: string } {
  const base = baselinePath(stateDir, containerId).replace(/\.json$/, '');
  return { pack: `${base}.objects`, index: `${base}.objects.json` };
}

function looksLikeText(data: Uint8Array): boolean {
  return !data.subarray(0, 8192).includes(0);
}

/**
 * Keeps the bytes of the copied text files, within the budget, by the sha256 the baseline already
 * holds for them; returns how many were kept.
 */
export async function keepBaseObjects(
  stateDir: string,
  containerId: string,
  files: readonly { path: string; data?: Uint8Array }[],
  baseline?: CopyBaseline,
): Promise<number> {
  const { pack, index } = packPaths(stateDir, containerId);
  const kept: PackIndex = {};
  const parts: Uint8Array[] = [];
  let total = 0;
  for (const file of files) {
    const data = file.data;
    if (!data || data.length > MAX_OBJECT_BYTES || !looksLikeText(data)) continue;
    if (total + data.length > MAX_TOTAL_BYTES) break;
    const hash = baseline?.files[file.path]?.sha256 ?? sha256(data);
    if (kept[hash]) continue;
    kept[hash] = [total, data.length];
    parts.push(data);
    total += data.length;
  }
  await mkdir(dirname(pack), { recursive: true, mode: 0o700 });
  await writeFile(pack, Buffer.concat(parts), { mode: 0o600 });
  await writeFile(index, JSON.stringify(kept), { mode: 0o600 });
  return Object.keys(kept).length;
}

async function readIndex(path: string): Promise<PackIndex> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (!text) return {};
  try {
    return JSON.parse(text) as PackIndex;
  } catch {
    return {};
  }
}

/** Keeps one more base (a file the user merged becomes the new base). */
export async function keepBaseObject(stateDir: string, containerId: string, data: Uint8Array): Promise<void> {
  if (data.length > MAX_OBJECT_BYTES) return;
  const { pack, index } = packPaths(stateDir, containerId);
  const kept = await readIndex(index);
  const hash = sha256(data);
  if (kept[hash]) return;
  await mkdir(dirname(pack), { recursive: true, mode: 0o700 });
  const offset = (await stat(pack).catch(() => undefined))?.size ?? 0;
  await writeFile(pack, data, { flag: 'a', mode: 0o600 });
  kept[hash] = [offset, data.length];
  await writeFile(index, JSON.stringify(kept), { mode: 0o600 });
}

/** The kept bytes with this sha256, checked, or undefined. */
export async function baseObject(stateDir: string, containerId: string, hash: string): Promise<Uint8Array | undefined> {
  if (!/^[0-9a-f]{64}$/.test(hash)) return undefined;
  const { pack, index } = packPaths(stateDir, containerId);
  const where = (await readIndex(index))[hash];
  if (!Array.isArray(where) || !Number.isInteger(where[0]) || !Number.isInteger(where[1])) return undefined;
  const [offset, length] = where;
  if (length < 0 || length > MAX_OBJECT_BYTES) return undefined;
  const handle = await open(pack, 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    const data = Buffer.alloc(length);
    const { bytesRead } = await handle.read(data, 0, length, offset);
    return bytesRead === length && sha256(data) === hash ? data : undefined;
  } finally {
    await handle.close();
  }
}

export async function forgetBaseObjects(stateDir: string, containerId: string): Promise<void> {
  const { pack, index } = packPaths(stateDir, containerId);
  await rm(pack, { force: true });
  await rm(index, { force: true });
}
