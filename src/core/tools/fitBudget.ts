/**
 * Fitting a result into the caller's budget in bounded work: first a cut by characters (no
 * tokenizer), then at most MEASURE_ROUNDS counts of the text (each bounded, see tokenCount.ts),
 * each dropping the excess it saw. The result's headline and notes are never cut: `render(keep)`
 * keeps at most `keep` characters of the part that may be shortened (the output, a file's content).
 */
import { countTokensBounded } from './tokenCount';

/**
 * How much text the model may get. `tokenBudget` and `countTokens` come straight from VS Code's
 * `options.tokenizationOptions`; without `countTokens` a token is taken to be 4 characters.
 */
export interface TextBudget {
  maxChars?: number;
  tokenBudget?: number;
  countTokens?: (text: string) => PromiseLike<number>;
  /** Stops the counting when the call is cancelled. */
  signal?: AbortSignal;
}

/** The most characters a result has in every front end (VS Code, `agent-sandbox tool`, MCP): about 12,000 tokens. */
export const RESULT_CHARS = 48_000;

/** Counting rounds before the shortened part is dropped whole: each costs a few bounded countTokens calls. */
const MEASURE_ROUNDS = 2;

/** Room for what a cut adds (about two cut markers). */
const MARKER_ROOM = 320;

/** The text of `render(keep)` for the largest `keep` (at most `total`) found to fit the budget. */
export async function fitToBudget(
  render: (keep: number) => string,
  total: number,
  budget: TextBudget,
): Promise<string> {
  let keep = total;
  let text = render(keep);
  // First by characters, with no tokenizer: a token is at least one character in practice and about
  // four on average, so this bounds the text before anything is counted.
  const charLimit = Math.min(
    budget.maxChars ?? Infinity,
    budget.tokenBudget !== undefined ? budget.tokenBudget * 4 : Infinity,
  );
  if (text.length > charLimit) {
    keep = Math.max(0, keep - (text.length - charLimit) - MARKER_ROOM);
    text = render(keep);
  }
  // Then by tokens: each round counts the text once (in bounded time) and drops the excess it saw.
  for (let round = 0; round < MEASURE_ROUNDS; round++) {
    const { excess, limit } = await measure(text, budget);
    if (excess <= 0) return text;
    if (keep === 0) return text; // the headline, notes and hints are never cut
    keep = Math.max(0, keep - Math.ceil(excess) - MARKER_ROOM - Math.ceil(limit * 0.1));
    text = render(keep);
  }
  return (await measure(text, budget)).excess <= 0 ? text : render(0);
}

/** How many characters the text is over the budget (0 or less: it fits), and the budget in characters. */
async function measure(text: string, budget: TextBudget): Promise<{ excess: number; limit: number }> {
  let excess = -Infinity;
  let limit = Infinity;
  if (budget.maxChars !== undefined) {
    excess = text.length - budget.maxChars;
    limit = budget.maxChars;
  }
  if (budget.tokenBudget !== undefined) {
    // A byte-level tokenizer never makes more tokens than the text has UTF-8 bytes: a text that
    // small fits without counting.
    const bytes = Buffer.byteLength(text, 'utf8');
    const tokens =
      bytes <= budget.tokenBudget
        ? bytes
        : budget.countTokens
          ? await countTokensBounded(text, budget.countTokens, budget.signal)
          : Math.ceil(text.length / 4);
    const charsPerToken = tokens > 0 ? text.length / tokens : 4;
    excess = Math.max(excess, (tokens - budget.tokenBudget) * charsPerToken);
    limit = Math.min(limit, budget.tokenBudget * charsPerToken);
  }
  return { excess, limit };
}
