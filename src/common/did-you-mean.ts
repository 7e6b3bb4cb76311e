// "Did you mean …" for a mistyped command, flag, enum value or configuration key: the one known
// name closest to what was typed, or none. Close means within a few edits (insertions, deletions,
// substitutions and swaps of neighbours), compared without case, so `readonly` finds `read_only`,
// `serv` finds `serve` and `runing` finds `running`. When nothing is that close, a name the typed
// text is the start of counts (`ser` finds `service` if no other name starts so). A tie suggests
// nothing: a guess between two would mislead.

/** Optimal string alignment distance: Levenshtein plus a swap of two neighbours as one edit. */
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

/** Edits allowed for a typed name of this length: 1 for short names, up to 3 for long keys. */
function editsAllowed(length: number): number {
  return Math.max(1, Math.min(3, Math.ceil(length / 4)));
}

/** The single closest candidate, or null when none is close or two are equally close. */
export function closestName(typed: string, candidates: Iterable<string>): string | null {
  if (typed === "") return null;
  const t = typed.toLowerCase();
  const limit = editsAllowed(t.length);
  const all = [...new Set(candidates)];
  let best: string | null = null;
  let bestDistance = Infinity;
  let tie = false;
  for (const c of all) {
    if (c === typed) continue;
    const dist = distance(t, c.toLowerCase());
    if (dist > limit) continue;
    if (dist < bestDistance) {
      best = c;
      bestDistance = dist;
      tie = false;
    } else if (dist === bestDistance) tie = true;
  }
  if (best !== null) return tie ? null : best;
  const extending = all.filter((c) => c !== typed && c.toLowerCase().startsWith(t));
  return extending.length === 1 ? extending[0]! : null;
}

/** Command-line phrasing: `; did you mean 'x'?`, or "" (`show` spells the name, e.g. with `--`). */
export function didYouMean(typed: string, candidates: Iterable<string>, show: (c: string) => string = (c) => c): string {
  const hit = closestName(typed, candidates);
  return hit === null ? "" : `; did you mean '${show(hit)}'?`;
}

/** Configuration phrasing, inside a problem's reason: ` (did you mean 'x'?)`, or "". */
export function didYouMeanKey(typed: string, candidates: Iterable<string>): string {
  const hit = closestName(typed, candidates);
  return hit === null ? "" : ` (did you mean '${hit}'?)`;
}
