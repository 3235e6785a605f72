/**
 * Images a call returns beside its text (plots, pictures the code made): what they are, how big,
 * and where they came from, for the model's text and for each front end (VS Code image parts, MCP
 * image content, files from the command line).
 */
export interface ImageOutput {
  readonly mime: string;
  readonly data: Uint8Array;
  /** Where it came from: "figure 1", "the value", "/tmp/outputs/plot.png". */
  readonly source: string;
  /** Its key in the local file store, once kept there (keptImages.ts). */
  readonly key?: string;
}

/** Width and height from a PNG's header, a GIF's screen descriptor or a JPEG's frame header; undefined when unknown. */
export function imageSize(image: ImageOutput): { width: number; height: number } | undefined {
  const data = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  if (image.mime === 'image/png' && data.length >= 24 && data.toString('latin1', 12, 16) === 'IHDR')
    return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
  if (image.mime === 'image/gif' && data.length >= 10)
    return { width: data.readUInt16LE(6), height: data.readUInt16LE(8) };
  if (image.mime === 'image/jpeg') {
    for (let at = 2; at + 9 < data.length;) {
      if (data[at] !== 0xff) return undefined;
      const marker = data[at + 1]!;
      const length = data.readUInt16BE(at + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
        return { width: data.readUInt16BE(at + 7), height: data.readUInt16BE(at + 5) };
      at += 2 + length;
    }
  }
  return undefined;
}

/** "2 images came back: figure 1 (600×400 PNG, 23 KB, files/f_…), /tmp/outputs/a.png (1568×1000 PNG, 180 KB, files/f_…)." */
export function describeImages(images: readonly ImageOutput[]): string {
  const each = images.map((image) => {
    const size = imageSize(image);
    const kind = image.mime
      .replace(/^image\//, '')
      .toUpperCase()
      .replace('SVG+XML', 'SVG');
    const kb = Math.max(1, Math.round(image.data.byteLength / 1024));
    return `${image.source} (${size ? `${size.width}×${size.height} ` : ''}${kind}, ${kb} KB${image.key ? `, ${image.key}` : ''})`;
  });
  return `${images.length} image${images.length === 1 ? '' : 's'} came back: ${each.join(', ')}.`;
}

/** The image types a call may return, each with how its bytes begin. */
const IMAGE_SIGNATURES: Record<string, (data: Buffer) => boolean> = {
  'image/png': (data) => data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (data) => data.length > 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff,
  'image/gif': (data) => /^GIF8[79]a$/.test(data.toString('latin1', 0, 6)),
  'image/webp': (data) => data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WEBP',
};

/** At most this many images per call, of at most IMAGE_BYTES each (what the kernels keep to). */
export const MOST_IMAGES = 4;
export const IMAGE_BYTES = 5 * 1024 * 1024;
const SHOWN_SOURCE_CHARS = 200;
const SHOWN_DROPPED = 10;

/** A name from the sandbox as text for people and models: no control or direction characters, at most 200 characters. */
export function shownSource(source: string): string {
  const clean = source.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g, '?');
  return clean.length > SHOWN_SOURCE_CHARS ? `${clean.slice(0, SHOWN_SOURCE_CHARS - 1)}…` : clean;
}

/**
 * Images as the sandbox sent them (base64), checked on the host as untrusted input: at most
 * MOST_IMAGES, each at most IMAGE_BYTES, of an image type whose bytes begin as that type's do (so
 * text/html or SVG never reaches a front end as an image), names made printable. What is left out,
 * with what the sandbox said it left out, is named in one notice of bounded length.
 */
export function checkedImages(
  sent: readonly { mime: string; data: string; source: string }[],
  droppedInSandbox: readonly string[] = [],
): { images: ImageOutput[]; notices: string[] } {
  const images: ImageOutput[] = [];
  const dropped: string[] = [];
  let droppedCount = droppedInSandbox.length;
  const drop = (why: string) => {
    droppedCount += 1;
    if (dropped.length < SHOWN_DROPPED) dropped.push(why);
  };
  for (const image of sent) {
    const source = shownSource(image.source);
    if (images.length >= MOST_IMAGES) drop(source);
    else if (!Object.hasOwn(IMAGE_SIGNATURES, image.mime))
      drop(`${source} (${shownSource(image.mime).slice(0, 40)} is no image type)`);
    else if (image.data.length > Math.ceil(IMAGE_BYTES / 3) * 4) drop(`${source} (over 5 MiB)`);
    else {
      const data = Buffer.from(image.data, 'base64');
      if (data.length > IMAGE_BYTES) drop(`${source} (over 5 MiB)`);
      else if (!IMAGE_SIGNATURES[image.mime]!(data))
        drop(`${source} (its bytes are no ${image.mime.slice(6).toUpperCase()})`);
      else images.push({ mime: image.mime, data, source });
    }
  }
  const named = [...droppedInSandbox.slice(0, SHOWN_DROPPED).map(shownSource), ...dropped].slice(0, SHOWN_DROPPED);
  const more = droppedCount - named.length;
  return {
    images,
    notices: droppedCount
      ? [
          `Images not returned (at most ${MOST_IMAGES}, of 5 MiB each): ${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}.`,
        ]
      : [],
  };
}
