/**
 * The lines a client sends, on their way to the SDK's stdio transport. The transport drops a line
 * that is not a valid JSON-RPC message without answering, so a request with an id but a malformed
 * body (params null, a progress token that is an object) would leave its caller waiting forever:
 * such a request is answered here with an Invalid Request error naming what is wrong.
 */
import { Transform } from 'node:stream';
import { ErrorCode, JSONRPCMessageSchema, JSONRPCRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** Lines longer than this pass unchecked (a malformed request is short; the SDK caps a line's length itself). */
const CHECKED_LINE_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

/** A stream to put between stdin and the transport; `reply` writes an answer line to the client. */
export function answerInvalidRequests(reply: (line: string) => void): Transform {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let passing = false; // within a line too long to check
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let start = 0;
      for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
        const end = chunk.subarray(start, newline + 1);
        start = newline + 1;
        if (passing) {
          passing = false;
          this.push(end);
          continue;
        }
        const line = Buffer.concat([...pending, end]);
        pending = [];
        pendingBytes = 0;
        if (!answered(line, reply)) this.push(line);
      }
      const rest = chunk.subarray(start);
      if (passing) this.push(rest);
      else if (rest.length) {
        pending.push(rest);
        pendingBytes += rest.length;
        if (pendingBytes > CHECKED_LINE_BYTES) {
          passing = true;
          this.push(Buffer.concat(pending));
          pending = [];
          pendingBytes = 0;
        }
      }
      done();
    },
    flush(done) {
      if (pending.length) this.push(Buffer.concat(pending));
      done();
    },
  });
}

/** Answers a request the transport would drop; true when it did. */
function answered(line: Buffer, reply: (line: string) => void): boolean {
  let message: unknown;
  try {
    message = JSON.parse(line.toString('utf8'));
  } catch {
    return false; // not JSON: no id to answer
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return false;
  const { id, method } = message as { id?: unknown; method?: unknown };
  if ((typeof id !== 'string' && typeof id !== 'number') || typeof method !== 'string') return false;
  if (JSONRPCMessageSchema.safeParse(message).success) return false;
  // It has an id and a method: it was meant as a request, and says best what is wrong as one.
  const issues = JSONRPCRequestSchema.safeParse(message).error?.issues ?? [];
  const problems = issues.map((issue) => `${issue.path.map(String).join('.') || 'request'}: ${issue.message}`);
  reply(
    `${JSON.stringify({
      jsonrpc: '2.0',
      id,
      error: {
        code: ErrorCode.InvalidRequest,
        message: `Invalid request "${method}": ${[...new Set(problems)].slice(0, 5).join('; ')}. Send a JSON-RPC 2.0 request as the MCP specification describes (params an object, _meta.progressToken a string or number).`,
      },
    })}\n`,
  );
  return true;
}
