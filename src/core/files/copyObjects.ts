/**
 * The bytes a copy started from, kept for the merge of a conflict (a file changed both in the folder
 * and in the sandbox needs the common base). Only text-sized files are kept, up to a budget per
 * session, by sha256 beside the baseline; a file without its base is still shown as a conflict, as a
 * two-sided diff.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { baselinePath, sha256 } from './folderCopy';

/** A file larger than this has no kept base. */
const MAX_OBJECT_BYTES = 1024 * 1024;
/** At most this much is kept per session. */
const MAX_TOTAL_BYTES = 32 * 1024 * 1024;

function objectsDir(stateDir: string, containerId: string): string {
  return baselinePath(stateDir, containerId).replace(/\.json$/, '.objects');
}

/** Keeps the bytes of the copied files, within the budget; returns how many were kept. */
export async function keepBaseObjects(
  stateDir: string,
  containerId: string,
  files: readonly { data?: Uint8Array }[],
): Promise<number> {
  const dir = objectsDir(stateDir, containerId);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let total = 0;
  let kept = 0;
  const written = new Set<string>();
  for (const file of files) {
    if (!file.data || file.data.length > MAX_OBJECT_BYTES || file.data.subarray(0, 8192).includes(0)) continue;
    if (total + file.data.length > MAX_TOTAL_BYTES) break;
    const hash = sha256(file.data);
    if (written.has(hash)) continue;
    written.add(hash);
    await writeFile(join(dir, hash), file.data, { mode: 0o600 });
    total += file.data.length;
    kept++;
  }
  return kept;
}

/** Keeps one more base (a file the user merged becomes the new base). */
export async function keepBaseObject(stateDir: string, containerId: string, data: Uint8Array): Promise<void> {
  if (data.length > MAX_OBJECT_BYTES) return;
  const dir = objectsDir(stateDir, containerId);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(join(dir, sha256(data)), data, { mode: 0o600 });
}

/** The kept bytes with this sha256, checked, or undefined. */
export async function baseObject(stateDir: string, containerId: string, hash: string): Promise<Uint8Array | undefined> {
  if (!/^[0-9a-f]{64}$/.test(hash)) return undefined;
  const data = await readFile(join(objectsDir(stateDir, containerId), hash)).catch(() => undefined);
  return data && sha256(data) === hash ? data : undefined;
}

export async function forgetBaseObjects(stateDir: string, containerId: string): Promise<void> {
  await rm(objectsDir(stateDir, containerId), { recursive: true, force: true });
}
