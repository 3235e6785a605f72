/**
 * The images of each session's last result that had any, for the panel's thumbnails. Each is copied
 * from the call's result into a folder of the extension's own (named by its file store key, with the
 * extension its type has), which the panel's webview may load and VS Code's image preview opens.
 * The folder keeps the newest MAX_FILES copies; the file store keeps every image.
 */
import { EventEmitter } from 'node:events';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { imageSize, type ImageOutput } from '../../core/results/images';
import { storedName } from '../../core/results/keptImages';

const MAX_FILES = 64;
const EXTENSIONS: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
};

export interface PanelImage {
  /** The file store key (files/f_…). */
  key: string;
  name: string;
  /** Where it came from in the sandbox: "figure 1", "/tmp/outputs/plot.png". */
  source: string;
  /** The copy on the host that the panel shows and the preview opens. */
  file: string;
  width?: number;
  height?: number;
}

export class PanelImages {
  private readonly last = new Map<string, PanelImage[]>();
  private readonly events = new EventEmitter();

  constructor(private readonly folder: string) {}

  /** The images a call on this sandbox returned: they become its last ones. */
  async keep(sandboxId: string, images: readonly ImageOutput[]): Promise<void> {
    const shown: PanelImage[] = [];
    await mkdir(this.folder, { recursive: true, mode: 0o700 });
    for (const image of images) {
      const extension = EXTENSIONS[image.mime];
      if (!image.key || !extension) continue;
      const file = join(this.folder, `${image.key.replace(/^files\//, '')}${extension}`);
      await writeFile(file, image.data, { flag: 'wx', mode: 0o600 }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      });
      const size = imageSize(image);
      shown.push({ key: image.key, name: storedName(image), source: image.source, file, ...size });
    }
    if (!shown.length) return;
    this.last.set(sandboxId, shown);
    this.events.emit('change');
    await this.prune();
  }

  lastFor(sandboxId: string): readonly PanelImage[] {
    return this.last.get(sandboxId) ?? [];
  }

  /** The copy of an image the panel shows, by its key; undefined for any other key. */
  fileFor(key: string): string | undefined {
    for (const images of this.last.values()) for (const image of images) if (image.key === key) return image.file;
    return undefined;
  }

  /** A closed session's images leave the panel (their copies stay until pruned, the store keeps them). */
  forget(sandboxId: string): void {
    if (this.last.delete(sandboxId)) this.events.emit('change');
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.events.on('change', listener);
    return { dispose: () => this.events.off('change', listener) };
  }

  /** Keeps the newest copies and any the panel shows. */
  private async prune(): Promise<void> {
    const names = await readdir(this.folder).catch(() => [] as string[]);
    if (names.length <= MAX_FILES) return;
    const shown = new Set([...this.last.values()].flat().map((image) => image.file));
    const aged = await Promise.all(
      names.map(async (name) => {
        const file = join(this.folder, name);
        return { file, mtime: (await stat(file).catch(() => undefined))?.mtimeMs ?? 0 };
      }),
    );
    aged.sort((a, b) => b.mtime - a.mtime);
    for (const { file } of aged.slice(MAX_FILES)) if (!shown.has(file)) await rm(file, { force: true });
  }
}
