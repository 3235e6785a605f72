import assert from 'node:assert/strict';
import { CappedOutput } from '../../src/core/results/output';
import { FrameDemux, TrailerScanner } from '../../src/engines/docker/runnerStream';

function frame(kind: number, text: string): Buffer {
  const data = Buffer.from(text);
  const head = Buffer.alloc(8);
  head[0] = kind;
  head.writeUInt32BE(data.length, 4);
  return Buffer.concat([head, data]);
}

/** Every way to cut `bytes` in two, and one-byte pieces. */
function cuts(bytes: Buffer): Buffer[][] {
  const out: Buffer[][] = [[...bytes].map((byte) => Buffer.from([byte]))];
  for (let at = 0; at <= bytes.length; at++) out.push([bytes.subarray(0, at), bytes.subarray(at)]);
  return out;
}

describe("the one-shot runner's stream", () => {
  it('splits frames into stdout and stderr however the chunks fall', () => {
    const stream = Buffer.concat([frame(1, 'out1'), frame(2, 'err'), frame(1, ''), frame(1, 'out2')]);
    for (const pieces of cuts(stream)) {
      const demux = new FrameDemux();
      const seen: string[] = [];
      for (const piece of pieces) demux.push(piece);
      demux.listen((kind, data) => seen.push(`${kind}:${data.toString()}`));
      assert.deepEqual(seen, ['1:out1', '2:err', '1:', '1:out2']);
    }
  });

  it('cuts the output at the end line and reads the exit code, however the chunks fall', () => {
    const nonce = 'ab'.repeat(16);
    const stream = Buffer.from(`partial ${nonce.slice(0, 5)} line\nno newline${nonce}x42\nlate output`);
    for (const pieces of cuts(stream)) {
      const scanner = new TrailerScanner(nonce, new CappedOutput(1024));
      for (const piece of pieces) scanner.push(piece);
      scanner.flush();
      assert.equal(scanner.done, true);
      assert.equal(scanner.kind, 'x');
      assert.equal(scanner.exitCode, 42);
      assert.equal(Buffer.from(scanner.output.bytes()).toString(), `partial ${nonce.slice(0, 5)} line\nno newline`);
    }
  });

  it('keeps everything as output when the end line never comes', () => {
    const scanner = new TrailerScanner('cd'.repeat(16), new CappedOutput(1024));
    scanner.push(Buffer.from('killed before the end'));
    scanner.flush();
    assert.equal(scanner.done, false);
    assert.equal(scanner.exitCode, null);
    assert.equal(Buffer.from(scanner.output.bytes()).toString(), 'killed before the end');
  });
});
