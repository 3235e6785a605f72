/**
 * Images a tool call returned, for the command line: written to files the user can open (a folder
 * of their own under the system's temporary folder), their paths printed with the result.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

export async function saveImages(images: readonly ImageOutput[]): Promise<SavedImage[]> {
  if (!images.length) return [];
  const folder = imagesFolder();
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const stamp = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
  return Promise.all(
    images.map(async (image, index) => {
      const path = join(folder, `${stamp}-${index + 1}.${EXTENSIONS[image.mime] ?? 'bin'}`);
      await writeFile(path, image.data, { mode: 0o600, flag: 'wx' });
      return { path, mime: image.mime, bytes: image.data.byteLength };
    }),
  );
}
