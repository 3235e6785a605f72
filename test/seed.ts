/**
 * Randomness in tests comes from a seed that a failure prints and AGENT_SANDBOX_SEED replays: every
 * random choice of a test is drawn from `seeded(...)`, never from Math.random.
 *
 *   AGENT_SANDBOX_SEED=1234 npx mocha ... --grep 'the test that failed'
 */
import { randomInt } from 'node:crypto';

export const SEED_VARIABLE = 'AGENT_SANDBOX_SEED';

/** A small seeded generator (mulberry32): numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed to use: AGENT_SANDBOX_SEED when set (a replay), otherwise a fresh one. */
export function chooseSeed(): number {
  const given = process.env[SEED_VARIABLE];
  if (given !== undefined && given !== '') {
    const seed = Number(given);
    if (!Number.isSafeInteger(seed)) throw new Error(`${SEED_VARIABLE} must be a whole number, not "${given}"`);
    return seed;
  }
  // The one unseeded draw: it only picks the seed, which every failure prints.
  return randomInt(2 ** 31);
}

export interface Seeded {
  seed: number;
  /** A number in [0, 1). */
  random(): number;
  /** A whole number in [0, below). */
  below(below: number): number;
  /** One of the items. */
  pick<T>(items: readonly T[]): T;
  /** How to replay, for a message: `seed 1234 (AGENT_SANDBOX_SEED=1234 replays it)`. */
  hint: string;
}

export function seeded(seed = chooseSeed()): Seeded {
  const random = seededRandom(seed);
  const below = (n: number) => Math.floor(random() * n);
  return {
    seed,
    random,
    below,
    pick: (items) => items[below(items.length)]!,
    hint: `seed ${seed} (${SEED_VARIABLE}=${seed} replays it)`,
  };
}

/**
 * Runs a test body with its own seeded randomness; when it fails, the error says the seed and how to
 * replay it (mocha shows the message).
 */
export async function withSeed<T>(body: (seeded: Seeded) => T | Promise<T>, seed = chooseSeed()): Promise<T> {
  const chosen = seeded(seed);
  try {
    return await body(chosen);
  } catch (error) {
    if (error instanceof Error) {
      const message = `${error.message}\n(random choices from ${chosen.hint})`;
      error.stack = error.stack?.replace(error.message, message);
      error.message = message;
      throw error;
    }
    throw new Error(`${String(error)}\n(random choices from ${chosen.hint})`, { cause: error });
  }
}
