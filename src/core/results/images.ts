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
