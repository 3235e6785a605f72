/**
 * The one-shot runner's side of the attach stream: Docker's frames split into stdout and stderr, and
 * each stream's output cut at the runner's end line ("<nonce>x<exit code>"), which may arrive split
 * across chunks.
 */
import type { CappedOutput } from '../../core/results/output';

/** Splits Docker's multiplexed attach stream (8-byte frame headers) into stdout and stderr. */
export class FrameDemux {
  private chunks: Buffer[] = [];
  private length = 0;
  private listener: ((kind: number, data: Buffer) => void) | undefined;
  private early: [number, Buffer][] = [];

  listen(listener: (kind: number, data: Buffer) => void): void {
    this.listener = listener;
    for (const [kind, data] of this.early.splice(0)) listener(kind, data);
  }

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
    while (this.length >= 8) {
      const head = this.chunks[0]!.length >= 8 ? this.chunks[0]! : this.flatten();
      const size = head.readUInt32BE(4);
      if (this.length < 8 + size) return;
      const all = this.flatten();
      const kind = all[0]!;
      const data = all.subarray(8, 8 + size);
      const rest = all.subarray(8 + size);
      this.chunks = rest.length ? [rest] : [];
      this.length = rest.length;
      if (this.listener) this.listener(kind, data);
      else this.early.push([kind, data]);
    }
  }

  private flatten(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.length)];
    return this.chunks[0]!;
  }
}

/** Passes a stream's bytes to its capped output up to the runner's end line, and reads the exit code from it. */
export class TrailerScanner {
  private readonly marker: Buffer;
  private held: Buffer = Buffer.alloc(0);
  private trailer: Buffer | undefined;
  done = false;
  kind: string | undefined;
  exitCode: number | null = null;

  constructor(
    nonce: string,
    readonly output: CappedOutput,
  ) {
    this.marker = Buffer.from(nonce);
  }

  push(chunk: Buffer): void {
    if (this.done) return; // what background processes write after the end line is not the program's result
    if (this.trailer) return this.readTrailer(Buffer.concat([this.trailer, chunk]));
    const data = this.held.length ? Buffer.concat([this.held, chunk]) : chunk;
    const at = data.indexOf(this.marker);
    if (at >= 0) {
      this.output.push(data.subarray(0, at));
      this.held = Buffer.alloc(0);
      return this.readTrailer(data.subarray(at + this.marker.length));
    }
    // The marker may begin in the last bytes; hold them back until the next chunk.
    const keep = Math.min(data.length, this.marker.length - 1);
    this.output.push(data.subarray(0, data.length - keep));
    this.held = Buffer.from(data.subarray(data.length - keep));
  }

  /** At the end of the stream without an end line: everything held back was output after all. */
  flush(): void {
    if (this.done) return;
    if (this.held.length) this.output.push(this.held);
    this.held = Buffer.alloc(0);
  }

  private readTrailer(data: Buffer): void {
    const newline = data.indexOf(0x0a);
    if (newline < 0) {
      this.trailer = data.length > 64 ? data.subarray(0, 64) : data;
      return;
    }
    const match = /^([xsm])(\d+)$/.exec(data.subarray(0, newline).toString('latin1'));
    this.kind = match?.[1];
    this.exitCode = match ? Number(match[2]) : null;
    this.trailer = undefined;
    this.done = true;
  }
}
