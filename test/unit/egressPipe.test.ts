// How the egress proxy passes a tunnel's bytes on (egressPipe.ts): every byte, in order, when the
// answer ends with its connection and the client reads slowly; reads pause while the reader is full.
// Only servers this test starts on 127.0.0.1.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { allowlistSchema } from '../../src/core/network/allowlist';
import { readsInto } from '../../src/core/network/egressPipe';
import { EgressProxy, type NetworkDecision } from '../../src/core/network/egressProxy';

const ANSWER_BYTES = 24 * 1024 * 1024;
/** Before the fix, about one answer in two lost its last bytes here. */
const ROUNDS = 5;

/** Bytes that differ from one offset to the next, so a lost or repeated stretch changes the hash. */
function pattern(bytes: number): Buffer {
  const data = Buffer.allocUnsafe(bytes);
  for (let at = 0; at < bytes; at += 4) data.writeUInt32LE(at, at);
  return data;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('network allowlist: passing bytes on', function () {
  this.timeout(30_000);
  const answer = pattern(ANSWER_BYTES);

  it('a CONNECT tunnel passes on every byte of an answer that ends with its connection, to a slow reader', async () => {
    // Answers the first bytes it gets with the whole pattern, then closes: the end of the answer is the end of the connection.
    const app = createServer((socket) => socket.once('data', () => socket.end(answer)));
    const appPort = await listen(app);
    const decisions: NetworkDecision[] = [];
    const proxy = new EgressProxy({
      allowlist: allowlistSchema.parse([`localhost:${appPort}`]),
      localAddress: '127.0.0.1',
      onDecision: (decision) => decisions.push(decision),
    });
    // On a unix socket, as the relay reaches it: its small buffer fills soon, so writes wait.
    const folder = mkdtempSync(join(tmpdir(), 'agent-sandbox-pipe-'));
    const path = join(folder, 'proxy.sock');
    await proxy.listen({ path });
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const received = await new Promise<Buffer>((resolve, reject) => {
          const socket = connect(path);
          const chunks: Buffer[] = [];
          let head = '';
          let tunnelled = false;
          socket.write(`CONNECT localhost:${appPort} HTTP/1.1\r\nHost: localhost:${appPort}\r\n\r\n`);
          // A reader slower than the answer, to its very end: the proxy holds what it cannot pass on yet.
          const slowly = () => {
            socket.pause();
            setTimeout(() => socket.resume(), 1);
          };
          socket.on('data', (chunk: Buffer) => {
            if (tunnelled) {
              chunks.push(chunk);
              return slowly();
            }
            head += chunk.toString('latin1');
            const end = head.indexOf('\r\n\r\n');
            if (end < 0) return;
            assert.match(head, /^HTTP\/1\.1 200/);
            tunnelled = true;
            const rest = Buffer.from(head.slice(end + 4), 'latin1');
            if (rest.length) chunks.push(rest);
            socket.write('go');
            slowly();
          });
          socket.on('end', () => resolve(Buffer.concat(chunks)));
          socket.on('error', reject);
        });
        assert.equal(received.length, ANSWER_BYTES, `round ${round}`);
        assert.equal(sha(received), sha(answer), `round ${round}`);
      }
      for (let look = 0; look < 200 && decisions.length < ROUNDS; look++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      assert.deepEqual(
        decisions.map((decision) => [decision.allowed, decision.bytesReceived, decision.bytesSent]),
        Array(ROUNDS).fill([true, ANSWER_BYTES, 2]),
      );
    } finally {
      await proxy.close();
      await new Promise((resolve) => app.close(resolve));
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('reads into two buffers in turn and pauses while both are being written, losing nothing', async () => {
    const data = pattern(8 * 1024 * 1024);
    const app = createServer((socket) => socket.end(data));
    const port = await listen(app);
    const out: Buffer[] = [];
    let mostHeld = 0;
    // A slow writer, which copies each chunk only when it gets to it: a buffer used again too soon shows in the hash.
    const slow = new Writable({
      write(chunk: Buffer, _encoding, done) {
        mostHeld = Math.max(mostHeld, slow.writableLength);
        out.push(Buffer.from(chunk));
        setTimeout(done, 1);
      },
    });
    let counted = 0;
    try {
      await new Promise<void>((resolve, reject) => {
        const socket: Socket = connect({
          port,
          host: '127.0.0.1',
          onread: readsInto(
            slow,
            () => socket,
            (bytes) => (counted += bytes),
            64 * 1024,
          ),
        });
        socket.on('end', () => slow.end(resolve));
        socket.on('error', reject);
      });
    } finally {
      await new Promise((resolve) => app.close(resolve));
    }
    const received = Buffer.concat(out);
    assert.equal(counted, data.length);
    assert.equal(sha(received), sha(data));
    // Reading paused while both buffers waited: the writer never held more than two reads.
    assert.ok(mostHeld <= 2 * 256 * 1024, `${mostHeld} bytes held by the writer at once`);
  });
});
