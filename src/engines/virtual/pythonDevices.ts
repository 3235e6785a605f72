/**
 * The devices through which the persistent Python's kernel program (virtualKernel.ts) meets its worker:
 * stdout and stderr captured per call (capped, with their full size counted), /dev/agent for its
 * requests and replies (JSON lines), and /dev/agent-sleep, where time.sleep waits until its time is
 * up or an interrupt arrives (CPython's signal slot changes).
 */
import type { EmscriptenFs } from './pythonFileSystem';
import { SIGNAL } from './pythonChannel';

/** Emscripten's FS, with what devices need. */
export interface DeviceFs extends EmscriptenFs {
  makedev(major: number, minor: number): number;
  registerDevice(dev: number, ops: object): void;
  mkdev(path: string, mode: number, dev: number): unknown;
}

/** A stream's bytes of one call: the first `cap` kept, all counted. */
export class Capture {
  private data: Uint8Array;
  private length = 0;
  private total = 0;

  constructor(private readonly cap: number) {
    this.data = new Uint8Array(Math.min(cap, 64 * 1024));
  }

  readonly push = (byte: number): void => {
    this.total++;
    if (this.length >= this.cap) return;
    if (this.length === this.data.length) {
      const grown = new Uint8Array(Math.min(this.cap, this.data.length * 2));
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = byte;
  };

  pushText(text: string): void {
    for (const byte of Buffer.from(text, 'utf8')) this.push(byte);
  }

  /** The bytes kept, and how many were written. */
  bytes(): { data: Uint8Array; bytes: number } {
    return { data: this.data.slice(0, this.length), bytes: this.total };
  }

  /** What the call wrote, decoded, and its size; empties the capture for the next call. */
  take(): { text: string; bytes: number } {
    const taken = { text: Buffer.from(this.data.buffer, 0, this.length).toString('utf8'), bytes: this.total };
    this.length = 0;
    this.total = 0;
    return taken;
  }
}

const AGENT_MAJOR = 240;

export interface AgentLine {
  /** The next request line, waited for when none is pending. */
  next(): Uint8Array;
  /** A line the kernel program wrote (without its newline). */
  line(text: string): void;
}

/** /dev/agent: reads give the request lines `next` waits for; writes are cut into lines for `line`. */
export function makeAgentDevice(FS: DeviceFs, agent: AgentLine): void {
  let incoming: Uint8Array = new Uint8Array(0);
  let outgoing: Buffer[] = [];
  const dev = FS.makedev(AGENT_MAJOR, 0);
  FS.registerDevice(dev, {
    open: (stream: { seekable: boolean }) => {
      stream.seekable = false;
    },
    read: (_stream: unknown, buffer: Uint8Array, offset: number, length: number) => {
      if (incoming.length === 0) incoming = agent.next();
      const count = Math.min(length, incoming.length);
      buffer.set(incoming.subarray(0, count), offset);
      incoming = incoming.subarray(count);
      return count;
    },
    write: (_stream: unknown, buffer: Uint8Array, offset: number, length: number) => {
      let chunk = Buffer.from(buffer.subarray(offset, offset + length));
      for (let newline = chunk.indexOf(10); newline >= 0; newline = chunk.indexOf(10)) {
        const text = Buffer.concat([...outgoing, chunk.subarray(0, newline)]).toString('utf8');
        outgoing = [];
        chunk = chunk.subarray(newline + 1);
        agent.line(text);
      }
      if (chunk.length) outgoing.push(chunk);
      return length;
    },
  });
  FS.mkdev('/dev/agent', 0o600, dev);
}

/** /dev/agent-sleep: a write of N seconds waits that long, or until the signal slot is set. */
export function makeSleepDevice(FS: DeviceFs, view: Int32Array): void {
  const dev = FS.makedev(AGENT_MAJOR, 1);
  FS.registerDevice(dev, {
    open: (stream: { seekable: boolean }) => {
      stream.seekable = false;
    },
    write: (_stream: unknown, buffer: Uint8Array, offset: number, length: number) => {
      const seconds = Number(Buffer.from(buffer.subarray(offset, offset + length)).toString('latin1'));
      if (seconds > 0) Atomics.wait(view, SIGNAL, 0, seconds * 1000);
      return length;
    },
  });
  FS.mkdev('/dev/agent-sleep', 0o200, dev);
}
