/**
 * "Did you mean" suggestions for a misspelt key or name (EXTENSIONS.md 2 "Strict documents").
 * Pure: no `node:*`, no clock.
 */

/** Largest edit distance that still counts as "near". */
export const SUGGEST_MAX_DISTANCE = 2;

/**
 * The candidate nearest to `word` by Damerau-Levenshtein distance (optimal string alignment:
 * insertions, deletions, substitutions and swaps of two neighbours, each costing 1), when that
 * distance is at most `maxDistance` and smaller than `word` itself (so a 1-letter word is not
 * "near" every other 1-letter word). Ties go to the first candidate. Comparison ignores case.
 * Undefined when nothing is near.
 */
export function suggest(word: string, candidates: Iterable<string>, maxDistance = SUGGEST_MAX_DISTANCE): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const limit = Math.min(maxDistance, bestDistance - 1, Math.max(w.length, candidate.length) - 1);
    if (limit < 0) continue;
    const d = editDistance(w, candidate.toLowerCase(), limit);
    if (d <= limit) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * Damerau-Levenshtein distance (optimal string alignment) of `a` and `b`; any value above
 * `limit` is returned as `limit + 1` (the rows stop early once every cell is over it).
 */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  const n = b.length;
  let prev2: number[] = new Array<number>(n + 1).fill(0);
  let prev: number[] = Array.from({ length: n + 1 }, (_, j) => j);
  let row: number[] = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    let rowMin = row[0];
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2]! + 1);
      row[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
    [prev2, prev, row] = [prev, row, prev2];
  }
  const d = prev[n]!;
  return d > limit ? limit + 1 : d;
}

/** The text appended to an "unknown key" problem: ` (did you mean 'x'?)`, or nothing. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const near = suggest(word, candidates);
  return near === undefined ? '' : ` (did you mean '${near}'?)`;
}
