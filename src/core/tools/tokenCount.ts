/**
 * Counting the tokens of a result with the caller's tokenizer, in bounded time whatever the text.
 *
 * Copilot hands tools its byte-pair tokenizer. Byte-pair merging is quadratic in the length of one
 * run of text without spaces or line breaks (measured with o200k_base: 10,000 characters in one run
 * took 7 s, 40,000 took 139 s), and tool output is often such a run: minified JSON, base64, a
 * progress bar. So the text is never handed over as it is: it is cut into pieces of at most
 * PIECE_CHARS characters (at a space or line break when one is near) in which no run is longer than
 * RUN_PIECE_CHARS, and the pieces are joined by
 * line breaks, which the tokenizer never merges across. The count of that text is at least the
 * count of the original (a cut only removes merges, a line break only adds a token), so it bounds
 * the real count from above, and it costs a few calls of at most CALL_CHARS characters each.
 */

/** Longest piece handed to the tokenizer: quadratic merging on it costs milliseconds. */
export const PIECE_CHARS = 400;
/**
 * A run without a space or line break is cut every RUN_PIECE_CHARS characters: byte-pair merging is
 * slowest on such runs (measured with o200k_base on 32,000 characters of one character: 1,256 ms in pieces of
 * 400, 276 ms in pieces of 100, 219 ms in pieces of 64; base64 about 24 ms either way), and each
 * extra cut adds at most one token to the bound.
 */
export const RUN_PIECE_CHARS = 64;
/** Most characters in one countTokens call. */
export const CALL_CHARS = 16_000;

export type CountTokens = (text: string) => PromiseLike<number>;

/** At most this many repeated pieces are counted on their own (see countTokensBounded). */
const MOST_REPEATED = 2;
/** A repeated piece is counted on its own only when its repeats cover this many characters. */
const REPEATED_CHARS = 4_096;

/**
 * An upper bound on the text's tokens, from a few calls of the tokenizer on short runs: pieces that
 * repeat (a run of one character, a repeated line) are counted once each, times how often they
 * appear; the rest in calls of at most CALL_CHARS characters.
 */
export async function countTokensBounded(
  text: string,
  countTokens: CountTokens,
  signal?: AbortSignal,
): Promise<number> {
  const seen = new Map<string, number>();
  for (const piece of pieces(text)) seen.set(piece, (seen.get(piece) ?? 0) + 1);
  const repeated = [...seen]
    .filter(([piece, times]) => times > 1 && piece.length * times >= REPEATED_CHARS)
    .sort(([a, timesA], [b, timesB]) => b.length * timesB - a.length * timesA)
    .slice(0, MOST_REPEATED);
  const alone = new Set(repeated.map(([piece]) => piece));
  let total = 0;
  for (const [piece, times] of repeated) {
    signal?.throwIfAborted();
    total += (await countTokens(piece)) * times;
  }
  let call = '';
  for (const piece of pieces(text)) {
    if (alone.has(piece)) continue;
    if (call.length + piece.length + 1 > CALL_CHARS && call) {
      signal?.throwIfAborted();
      total += await countTokens(call);
      call = '';
    }
    call = call ? `${call}\n${piece}` : piece;
  }
  if (call) {
    signal?.throwIfAborted();
    total += await countTokens(call);
  }
  return total;
}

/**
 * The text in pieces of at most PIECE_CHARS characters, each ending at its last space or line break,
 * and with no run (characters without a space or line break) longer than RUN_PIECE_CHARS: a longer
 * run is cut there, at the end of the text too.
 */
export function* pieces(text: string): Generator<string> {
  let at = 0;
  while (at < text.length) {
    const limit = Math.min(at + PIECE_CHARS, text.length);
    let end = limit;
    let lastBreak = -1;
    let runStart = at;
    for (let i = at; i < limit; i++) {
      const code = text.charCodeAt(i);
      if (code === 0x20 || code === 0x0a) {
        lastBreak = i + 1;
        runStart = i + 1;
      } else if (i - runStart >= RUN_PIECE_CHARS) {
        end = i;
        break;
      }
    }
    if (end === limit && limit < text.length && lastBreak > at) end = lastBreak;
    // Never between the halves of a surrogate pair.
    if (end < text.length) {
      const code = text.charCodeAt(end);
      if (code >= 0xdc00 && code <= 0xdfff && end - 1 > at) end--;
    }
    yield text.slice(at, end);
    at = end;
  }
}
