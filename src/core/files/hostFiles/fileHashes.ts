/**
 * The digests of the files a copy reads (sha256 for the baseline, BLAKE2b-512 for the listing of
 * changes), made on a worker thread while the next files are read when their bytes are in shared
 * memory (the archive they are read into: TarLayout); here otherwise, or when the worker cannot run.
 * On a machine with a core to spare this takes the hashing (about 0.35 s for 200 MiB) off the reads.
 */
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';

export interface Digests {
  sha256: string;
  /** BLAKE2b-512, as coreutils' b2sum prints it. */
  blake2b: string;
}

export function digestsOf(data: Uint8Array): Digests {
  return { sha256: createHash('sha256').update(data).digest('hex'), blake2b: blake2b(data) };
}

/** BLAKE2b-512, as coreutils' b2sum prints it. */
export function blake2b(data: Uint8Array): string {
  return createHash('blake2b512').update(data).digest('hex');
}

/** The worker's code: sha256 and BLAKE2b of each range of the shared buffer it is sent. */
const HASH_WORKER = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
parentPort.on('message', ({ buffer, ranges }) => {
  const digests = [];
  for (let i = 0; i < ranges.length; i += 2) {
    const data = new Uint8Array(buffer, ranges[i], ranges[i + 1]);
    digests.push(createHash('sha256').update(data).digest('hex'), createHash('blake2b512').update(data).digest('hex'));
  }
  parentPort.postMessage(digests);
});`;

interface Batch {
  buffer: SharedArrayBuffer;
  /** Offset and length of each file's bytes in the buffer. */
  ranges: number[];
  done: ((digests: Digests) => void)[];
}

/** Files added are hashed in batches: send() hands the worker what was added since the last time. */
export class FileHashes {
  private worker: Worker | undefined;
  private failed = false;
  private batch: Batch | undefined;
  /** Batches sent, in order: the worker answers each in turn. */
  private readonly sent: Batch[] = [];
  private settled: Promise<void> = Promise.resolve();
  private settle: (() => void) | undefined;

  add(data: Uint8Array, done: (digests: Digests) => void): void {
    if (!(data.buffer instanceof SharedArrayBuffer) || !this.running()) {
      done(digestsOf(data));
      return;
    }
    if (this.batch && this.batch.buffer !== data.buffer) this.send();
    this.batch ??= { buffer: data.buffer, ranges: [], done: [] };
    this.batch.ranges.push(data.byteOffset, data.length);
    this.batch.done.push(done);
  }

  /** Sends what was added since the last time to the worker. */
  send(): void {
    const batch = this.batch;
    this.batch = undefined;
    if (!batch) return;
    if (!this.running()) return hashHere(batch);
    if (this.sent.length === 0) this.settled = new Promise((resolve) => (this.settle = resolve));
    this.sent.push(batch);
    this.worker!.postMessage({ buffer: batch.buffer, ranges: batch.ranges });
  }

  /** Every file added is hashed. */
  async done(): Promise<void> {
    this.send();
    await this.settled;
  }

  /** Ends the worker, done or not. */
  async close(): Promise<void> {
    this.failed = true;
    await this.worker?.terminate();
  }

  private running(): boolean {
    if (this.failed) return false;
    if (this.worker) return true;
    try {
      this.worker = new Worker(HASH_WORKER, { eval: true });
    } catch {
      this.failed = true;
      return false;
    }
    this.worker.on('message', (digests: string[]) => {
      const batch = this.sent.shift()!;
      batch.done.forEach((done, index) => done({ sha256: digests[2 * index]!, blake2b: digests[2 * index + 1]! }));
      if (this.sent.length === 0) this.settle?.();
    });
    // The bytes are still there: what the worker did not answer is hashed here.
    const fail = () => {
      this.failed = true;
      for (const batch of this.sent.splice(0)) hashHere(batch);
      this.settle?.();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', fail);
    return true;
  }
}

function hashHere(batch: Batch): void {
  batch.done.forEach((done, index) => {
    done(digestsOf(new Uint8Array(batch.buffer, batch.ranges[2 * index], batch.ranges[2 * index + 1])));
  });
}
