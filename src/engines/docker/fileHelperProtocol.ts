/**
 * The file helper's wire format (see FILE_HELPER_SCRIPT): the host's requests, and a parser for the
 * replies. The helper runs as the sandbox's user, so the sandbox's own code can write anything into
 * its output; the parser takes no length from it, keeps at most what the caller's caps allow, and calls
 * anything but one well-formed reply per request a broken helper.
 */
import type { CappedOutput } from '../../core/results/output';
import { FILE_OP_NUMBER, type FileOp } from './fileScripts';

/** One argument in single quotes for the helper's `eval "set -- ..."`: a quote inside becomes '\''. */
export function shellQuote(arg: string): string {
  if (arg.includes('\0')) throw new Error('An argument of a file operation holds a NUL byte.');
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The request's head line and arguments; the input (if any) follows them on the helper's stdin. */
export function helperRequest(nonce: string, op: FileOp, args: readonly string[], inputBytes: number): Buffer {
  if (!/^[0-9a-f]{16,64}$/.test(nonce)) throw new Error('A file helper nonce is 16 to 64 lowercase hex digits.');
  const quoted = Buffer.from(args.map(shellQuote).join(' '), 'utf8');
  const head = Buffer.from(`${nonce} ${FILE_OP_NUMBER[op]} ${quoted.length} ${inputBytes}\n`, 'latin1');
  return Buffer.concat([head, quoted]);
}

/** The longest exit code line the parser waits for ("255\n"). */
const MAX_CODE_BYTES = 4;

/**
 * One reply: the script's stdout up to "<nonce>o", its stderr up to "<nonce>e", then its exit code and a
 * newline. Output past a cap, a malformed exit code or any byte after the reply is an error that ends the
 * helper (the call then runs as one exec, which cuts and counts output as it always did).
 */
export class HelperReply {
  private readonly markers: [Buffer, Buffer];
  private phase: 'stdout' | 'stderr' | 'code' | 'done' | 'broken' = 'stdout';
  /** Bytes at the end of the last chunk that may be the start of a marker. */
  private held: Buffer = Buffer.alloc(0);
  private code = '';
  exitCode: number | undefined;
  error: string | undefined;

  constructor(
    nonce: string,
    readonly stdout: CappedOutput,
    readonly stderr: CappedOutput,
  ) {
    this.markers = [Buffer.from(`${nonce}o`, 'latin1'), Buffer.from(`${nonce}e`, 'latin1')];
  }

  get done(): boolean {
    return this.phase === 'done';
  }

  get broken(): boolean {
    return this.phase === 'broken';
  }

  /** Takes the next bytes of the helper's stdout. */
  push(chunk: Buffer): void {
    let rest = chunk;
    while (rest.length > 0 || this.held.length > 0) {
      if (this.phase === 'done') return this.fail('the helper sent bytes after its reply');
      if (this.phase === 'broken') return;
      if (this.phase === 'code') {
        rest = this.readCode(rest);
        continue;
      }
      const sink = this.phase === 'stdout' ? this.stdout : this.stderr;
      const after = this.scan(rest, this.markers[this.phase === 'stdout' ? 0 : 1]!, sink);
      // A script's output fits its cap (dd and head bound it); more is another writer, or a listing that one exec reports cut.
      if (sink.truncated) return this.fail(`the helper's ${this.phase} passed its cap of ${sink.capBytes} bytes`);
      if (after < 0) return;
      this.phase = this.phase === 'stdout' ? 'stderr' : 'code';
      rest = rest.subarray(after);
    }
  }

  fail(why: string): void {
    if (this.phase === 'broken') return;
    this.phase = 'broken';
    this.error = why;
  }

  /**
   * Passes the bytes before the marker to the sink; the offset in `chunk` just past the marker, or -1 when
   * it is not there yet (its possible start then held back for the next chunk).
   */
  private scan(chunk: Buffer, marker: Buffer, sink: CappedOutput): number {
    const span = marker.length - 1;
    if (this.held.length) {
      const held = this.held;
      const joined = Buffer.concat([held, chunk.subarray(0, span)]);
      const at = joined.indexOf(marker);
      this.held = Buffer.alloc(0);
      if (at >= 0) {
        if (at > 0) sink.push(joined.subarray(0, at));
        return at + marker.length - held.length;
      }
      if (chunk.length < span) {
        // Still too short to rule a marker out: keep the joined tail.
        const keep = Math.min(joined.length, span);
        if (joined.length > keep) sink.push(joined.subarray(0, joined.length - keep));
        this.held = Buffer.from(joined.subarray(joined.length - keep));
        return -1;
      }
      // A marker starting in the held bytes would have ended within `joined`: they are output.
      sink.push(held);
    }
    const at = chunk.indexOf(marker);
    if (at >= 0) {
      if (at > 0) sink.push(chunk.subarray(0, at));
      return at + marker.length;
    }
    const keep = Math.min(chunk.length, span);
    if (chunk.length > keep) sink.push(chunk.subarray(0, chunk.length - keep));
    this.held = Buffer.from(chunk.subarray(chunk.length - keep));
    return -1;
  }

  /** The exit code's digits up to the newline; the rest of the chunk after it. */
  private readCode(chunk: Buffer): Buffer {
    const newline = chunk.indexOf(0x0a);
    this.code += chunk
      .subarray(0, newline < 0 ? Math.min(chunk.length, MAX_CODE_BYTES + 1) : newline)
      .toString('latin1');
    if (!/^\d{0,3}$/.test(this.code) || (newline < 0 && this.code.length >= MAX_CODE_BYTES)) {
      this.fail('the helper sent a malformed exit code');
      return Buffer.alloc(0);
    }
    if (newline < 0) return Buffer.alloc(0);
    const code = Number(this.code);
    if (this.code === '' || code > 255) {
      this.fail('the helper sent a malformed exit code');
      return Buffer.alloc(0);
    }
    this.exitCode = code;
    this.phase = 'done';
    return chunk.subarray(newline + 1);
  }
}
