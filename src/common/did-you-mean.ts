// "did you mean …": the one known name close to what was typed, or null when none is, or when
// two are equally close (a guess between two would mislead). Close means within a small edit
// distance (insertions, deletions, substitutions and swaps of neighbours), compared without
// case, so `readonly` finds `read_only` and `READ_ONY` finds `read_only`.

function distance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest candidate within max(1, min(3, length/4)) edits, if exactly one is closest. */
export function closestName(typed: string, candidates: Iterable<string>): string | null {
  const t = typed.toLowerCase();
  const limit = Math.max(1, Math.min(3, Math.floor(t.length / 4)));
  let best: string | null = null;
  let bestDistance = Infinity;
  let tie = false;
  for (const c of candidates) {
    if (c.toLowerCase() === t) return c;
    const dist = distance(t, c.toLowerCase());
    if (dist > limit) continue;
    if (dist < bestDistance) {
      best = c;
      bestDistance = dist;
      tie = false;
    } else if (dist === bestDistance && c !== best) tie = true;
  }
  return tie ? null : best;
}

/** " (did you mean 'x'?)", or "" when no single candidate is close. */
export function didYouMean(typed: string, candidates: Iterable<string>): string {
  const hit = closestName(typed, candidates);
  return hit === null ? "" : ` (did you mean '${hit}'?)`;
}
