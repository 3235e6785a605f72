/**
 * The images a call returned, kept in the local file store so that the user can open them later
 * (the panel's thumbnails, `agent-sandbox files download`): each gets its store key, which the
 * result's text names. A store that cannot take them costs the images nothing: the result says so.
 */
import { errorMessage } from '../errors';
import type { FileStore } from '../files/fileStore';
import type { ImageOutput } from './images';

const EXTENSIONS: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
};

export async function keepImages(
  images: readonly ImageOutput[],
  store: FileStore,
): Promise<{ images: ImageOutput[]; notices: string[] }> {
  const kept: ImageOutput[] = [];
  const failed: string[] = [];
  for (const image of images) {
    try {
      const file = await store.put(image.data, { name: storedName(image) });
      kept.push({ ...image, key: file.key });
    } catch (error) {
      kept.push(image);
      failed.push(`${image.source} (${errorMessage(error).split('\n')[0]})`);
    }
  }
  return {
    images: kept,
    notices: failed.length ? [`Images not kept in the file store: ${failed.join(', ')}.`] : [],
  };
}

/** "figure-1.png", "value.png", or the file's own name for a picture the code wrote. */
export function storedName(image: ImageOutput): string {
  const extension = EXTENSIONS[image.mime] ?? '';
  const own = /[^/]+$/.exec(image.source)?.[0];
  if (image.source.startsWith('/') && own) return own;
  const words = image.source
    .replace(/^the /, '')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  return `${words || 'image'}${extension}`;
}
