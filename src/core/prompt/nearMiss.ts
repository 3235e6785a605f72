/** "Did you mean": the closest known word within a small edit distance (adjacent swaps count as one edit). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The known word closest to `word` (case-insensitive), if it is near enough to be a typo of it. */
export function nearMiss(word: string, known: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  const limit = lower.length <= 3 ? 1 : lower.length <= 6 ? 2 : 3;
  let best: { word: string; distance: number } | undefined;
  for (const candidate of known) {
    if (candidate === word) return undefined;
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { word: candidate, distance };
  }
  return best?.word;
}
