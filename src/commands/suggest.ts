// "Did you mean …" for a mistyped command, flag or enum value. A suggestion is made only when it
// is unambiguous: exactly one candidate is within two edits of what was typed, or (when none is)
// exactly one starts with it. Two close candidates suggest nothing: a wrong guess is worse than none.

const MAX_EDITS = 2;

/** Levenshtein distance (insert, delete, substitute), case-sensitive. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitute = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitute));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The one candidate close to `typed`, or null when none or several are. */
export function closestCandidate(typed: string, candidates: readonly string[]): string | null {
  if (typed === "") return null;
  const others = candidates.filter((c) => c !== typed);
  const near = others.filter((c) => editDistance(typed, c) <= MAX_EDITS);
  if (near.length > 0) return near.length === 1 ? near[0]! : null;
  const extending = others.filter((c) => c.startsWith(typed));
  return extending.length === 1 ? extending[0]! : null;
}

/** `; did you mean 'x'?` when one candidate is close, else "". */
export function didYouMean(typed: string, candidates: readonly string[], show: (c: string) => string = (c) => c): string {
  const best = closestCandidate(typed, candidates);
  return best === null ? "" : `; did you mean '${show(best)}'?`;
}
