/** Collects a stream's bytes up to a cap, counting what was dropped, and renders it with a visible marker. */
import { formatSize } from '../spec/units';

export class CappedOutput {
  private readonly chunks: Uint8Array[] = [];
  private kept = 0;
  private total = 0;

  constructor(readonly capBytes: number) {}

  push(chunk: Uint8Array): void {
    this.total += chunk.length;
    const room = this.capBytes - this.kept;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(part);
    this.kept += part.length;
  }

  get totalBytes(): number {
    return this.total;
  }

  get truncated(): boolean {
    return this.total > this.kept;
  }

  bytes(): Uint8Array {
    return Buffer.concat(this.chunks, this.kept);
  }

  /** The kept bytes as UTF-8 text (invalid bytes become U+FFFD), with a truncation marker if anything was dropped. */
  text(streamName: string): string {
    let bytes = this.bytes();
    if (this.truncated) bytes = trimIncompleteUtf8(bytes);
    const text = new TextDecoder('utf-8').decode(bytes);
    return this.truncated ? text + truncationMarker(streamName, bytes.length, this.total) : text;
  }
}

export function truncationMarker(streamName: string, shown: number, total: number): string {
  return `\n[${streamName} truncated: showing the first ${formatSize(shown)} of ${formatSize(total)}. Write large output to a file and read the part you need.]`;
}

/** Drops a multi-byte UTF-8 sequence cut off at the end, so the cap never produces a broken character. */
export function trimIncompleteUtf8(bytes: Uint8Array): Uint8Array {
  const end = bytes.length;
  for (let back = 1; back <= Math.min(3, end); back++) {
    const byte = bytes[end - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? bytes.subarray(0, end - back) : bytes;
  }
  return bytes;
}
