// A prefilter for case-insensitive search of an ASCII query in ASCII text: a few exact byte
// searches that prove a buffer cannot hold the query, so most buffers are never lowercased.
//
// Lowercasing a buffer in JavaScript runs at ~2 GB/s; Buffer.indexOf (native memmem) at tens of
// GB/s. A case-insensitive match of the query at some offset holds, at the same offset plus k,
// one of the spellings of any window query[k .. k+w) that differ only in the case of its letters.
// So if no spelling of one window occurs in the buffer, neither does the query. The window is the
// one with the fewest letters (fewest spellings to look for: 2^letters, at most 8) among those of
// at least 4 bytes, and then the longest (at most MAX_WINDOW), so its spellings rarely occur by
// chance; a query with digits or punctuation usually yields a window with one spelling only. An
// all-letter query takes a 3-letter window (8 spellings: still ~3x faster than lowercasing).
//
// Text that is not pure ASCII is folded per line in Unicode (scan.ts), where a few non-ASCII
// characters fold to ASCII letters (K KELVIN SIGN to k, long s and sharp s to s, ligatures to f, i,
// l, t, ...). The spellings rule such text out only when no byte of the window is one of those
// letters (UNICODE_REACHABLE, checked against every code point by test/fs/scan-anchor.test.ts):
// then each window byte can only come from itself or its other case.

const MIN_WINDOW = 4;
const MAX_WINDOW = 12;
const MAX_LETTERS = 3;

/** The ASCII letters that the case folding of some non-ASCII character produces. */
export const UNICODE_REACHABLE = "afhijklnstwy";

export interface FoldAnchors {
  spellings: Buffer[];
  /** The spellings rule out any text, not only pure ASCII (no window byte is UNICODE_REACHABLE). */
  anyText: boolean;
}

function isLetter(b: number): boolean {
  return (b >= 97 && b <= 122) || (b >= 65 && b <= 90);
}

/** Every case spelling of the best window of an ASCII, already lowercased query. */
export function foldAnchors(lowered: Buffer): FoldAnchors {
  const minLen = Math.min(MIN_WINDOW, lowered.length);
  let best: { at: number; len: number; letters: number } | null = null;
  for (let at = 0; at + minLen <= lowered.length; at++) {
    let letters = 0;
    for (let len = 1; len <= MAX_WINDOW && at + len <= lowered.length; len++) {
      if (isLetter(lowered[at + len - 1] as number)) letters++;
      if (letters > MAX_LETTERS) break;
      if (len < minLen) continue;
      if (best === null || letters < best.letters || (letters === best.letters && len > best.len)) best = { at, len, letters };
    }
  }
  // every window of MIN_WINDOW bytes holds more than MAX_LETTERS letters: take MAX_LETTERS of them
  best ??= { at: 0, len: MAX_LETTERS, letters: MAX_LETTERS };
  const window = lowered.subarray(best.at, best.at + best.len);
  const letterAt: number[] = [];
  for (let i = 0; i < window.length; i++) if (isLetter(window[i] as number)) letterAt.push(i);
  const out: Buffer[] = [];
  for (let mask = 0; mask < 1 << letterAt.length; mask++) {
    const v = Buffer.from(window);
    letterAt.forEach((pos, bit) => {
      if ((mask >> bit) & 1) v[pos] = (v[pos] as number) & ~32;
    });
    out.push(v);
  }
  const anyText = ![...window.toString("latin1")].some((c) => UNICODE_REACHABLE.includes(c));
  return { spellings: out, anyText };
}

/** Whether `view` may hold the query: some spelling of its window occurs in it. */
export function mayHold(view: Buffer, anchors: readonly Buffer[]): boolean {
  for (const a of anchors) if (view.indexOf(a) !== -1) return true;
  return false;
}
