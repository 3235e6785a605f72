/**
 * How the egress proxy passes a tunnel's bytes on, fast and without losing the last of them. The
 * relay in the sandbox (engines/docker/egress.ts) does the same in its own script, which cannot
 * import this: keep the two alike.
 */
import type { OnReadOpts, Socket } from 'node:net';
import type { Duplex, Writable } from 'node:stream';

/** A connection's first reads go into buffers this large, as a stream's would (a short exchange needs no more). */
export const FIRST_READ_BYTES = 64 * 1024;
/**
 * Reads of a connection that keeps filling its buffer (a download) grow to buffers this large:
 * fewer, larger reads, and no buffer allocated per read.
 */
export const READ_BUFFER_BYTES = 1024 * 1024;

/**
 * `onread` options for a socket whose bytes all go on to `to`: reads land in two buffers in turn, so
 * one can be read into while the other's write is still under way; when both are, reading pauses
 * until the older write is done (so no byte is overwritten, and at most two buffers are held however
 * slow `to` is). A read that fills its buffer makes the next ones larger, up to `bytes`. `counted` is
 * told each read's length. `from` is the socket these options are for (it does not exist yet when
 * they are made).
 */
export function readsInto(
  to: Writable,
  from: () => Socket,
  counted: (bytes: number) => void = () => undefined,
  bytes = READ_BUFFER_BYTES,
): OnReadOpts {
  let size = Math.min(FIRST_READ_BYTES, bytes);
  const buffers: (Buffer | undefined)[] = [undefined, undefined];
  const writing = [false, false];
  let next = 0;
  let waitingFor = -1;
  return {
    buffer: () => {
      // A buffer still being written is the write's to keep; a new one takes its place.
      if (!buffers[next] || buffers[next]!.length < size) buffers[next] = Buffer.allocUnsafe(size);
      return buffers[next]!;
    },
    callback: (length, chunk) => {
      const index = next;
      writing[index] = true;
      counted(length);
      if (length === chunk.length) size = Math.min(bytes, size * 4);
      to.write(chunk.subarray(0, length), () => {
        writing[index] = false;
        if (waitingFor !== index) return;
        waitingFor = -1;
        from().resume();
      });
      next = 1 - index;
      if (!writing[next]) return true;
      waitingFor = next;
      return false;
    },
  };
}

/**
 * Ties the two ends of a tunnel: each end's close lets the other send what it still holds, then ends
 * it (never a destroy that drops the last bytes, nor a half-open socket left behind); an error ends
 * both at once. Calls `done` once both have closed.
 */
export function tieEnds(a: Duplex, b: Duplex, done: () => void): void {
  let open = 2;
  const fail = () => {
    a.destroy();
    b.destroy();
  };
  const closed = (other: Duplex) => () => {
    other.end(() => other.destroy());
    if (--open === 0) done();
  };
  a.on('error', fail);
  b.on('error', fail);
  a.once('close', closed(b));
  b.once('close', closed(a));
}
