/**
 * A seeded folder for the copy benchmark: a git work tree (nothing committed, so git ls-files lists
 * every file as untracked) of `files` files totalling `bytes`, in nested folders, sizes spread
 * log-uniformly from a few bytes to about a megabyte, some executable. The bytes come from AES-256-CTR
 * keyed by the seed: the same seed gives the same folder, and the content does not compress.
 */
import { execFileSync } from 'node:child_process';
import { createCipheriv, createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CopyFolder {
  folder: string;
  seed: number;
  files: number;
  bytes: number;
}

/** mulberry32, as in test/seed.ts: numbers in [0, 1). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function makeCopyFolder(seed: number, files = 10_000, bytes = 200 * 1024 * 1024): CopyFolder {
  const random = seeded(seed);
  const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-bench-copy-'));
  execFileSync('git', ['init', '-q', folder]);
  // About 40 files a folder, up to four levels deep.
  const dirs = [''];
  while (dirs.length < Math.ceil(files / 40)) {
    const parent = dirs[Math.floor(random() * dirs.length)]!;
    if (parent.split('/').length > 4) continue;
    const dir = `${parent ? `${parent}/` : ''}d${dirs.length}`;
    mkdirSync(join(folder, dir));
    dirs.push(dir);
  }
  const weights = Array.from({ length: files }, () => Math.exp(random() * Math.log(100_000)));
  const sum = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((weight) => Math.floor((weight / sum) * bytes));
  sizes[0]! += bytes - sizes.reduce((a, b) => a + b, 0);
  const key = createHash('sha256').update(`agent-sandbox bench copy ${seed}`).digest();
  const stream = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  const zeros = Buffer.alloc(1024 * 1024);
  sizes.forEach((size, index) => {
    const dir = dirs[Math.floor(random() * dirs.length)]!;
    const path = join(folder, dir, `f${index}.${random() < 0.5 ? 'txt' : 'bin'}`);
    const parts: Buffer[] = [];
    for (let left = size; left > 0; left -= zeros.length)
      parts.push(stream.update(zeros.subarray(0, Math.min(left, zeros.length))));
    writeFileSync(path, Buffer.concat(parts), { mode: random() < 0.1 ? 0o755 : 0o644 });
  });
  return { folder, seed, files, bytes };
}
