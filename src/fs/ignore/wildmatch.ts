// One git ignore pattern compiled to the glob NFA's tokens (../glob-nfa.ts), with the semantics of
// git's wildmatch in WM_PATHNAME mode: `*`, `?` and `[...]` never match `/`; `**` between slashes
// (or at either end) crosses directories, anywhere else it is `*`; `\x` is a literal x; classes
// take `!` or `^`, ranges, `\` escapes and the POSIX `[:name:]` classes. Git matches bytes, so
// patterns and subjects are compared as their UTF-8 bytes (`?` is one byte, as in git).
// A pattern git's wildmatch aborts on (an unterminated `[`, an unknown `[:name:]`, a trailing
// lone `\`) never matches; compileGitPattern then returns null.

import { ALL, ANY, CLASS, DIRS, LIT, SLASH, STAR, type Token } from "../glob-nfa.ts";

const BACKSLASH = 92;
const STAR_CH = 42;

/**
 * ASCII letters lowered, as git's tolower does with core.ignorecase (its ctype is ASCII only, so
 * `É` and every byte >= 128 stay as they are).
 */
export function asciiLower(s: string): string {
  return /[A-Z]/.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s;
}

/** The lower-case image of the A-Z part of [a, b], under core.ignorecase (empty: none). */
function lowerImage(a: number, b: number): number[] {
  const lo = Math.max(a, 65);
  const hi = Math.min(b, 90);
  return lo <= hi ? [lo + 32, hi + 32] : [];
}

/** A string as its UTF-8 bytes, one code unit per byte (ASCII strings are returned as they are). */
export function gitBytes(s: string): string {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return Buffer.from(s, "utf8").toString("latin1");
  return s;
}

/** POSIX classes as git's own ctype tables define them (ASCII only: bytes >= 128 are in none). */
const POSIX: Record<string, number[]> = {
  alnum: [48, 57, 65, 90, 97, 122],
  alpha: [65, 90, 97, 122],
  blank: [9, 9, 32, 32],
  cntrl: [0, 31, 127, 127],
  digit: [48, 57],
  graph: [33, 126],
  lower: [97, 122],
  print: [32, 126],
  punct: [33, 47, 58, 64, 91, 96, 123, 126],
  space: [9, 10, 13, 13, 32, 32],
  upper: [65, 90],
  xdigit: [48, 57, 65, 70, 97, 102],
};

/** Ranges without `/`: with WM_PATHNAME a class never matches a slash. */
function withoutSlash(ranges: number[]): number[] {
  const out: number[] = [];
  for (let k = 0; k < ranges.length; k += 2) {
    const a = ranges[k] as number;
    const b = ranges[k + 1] as number;
    if (a <= SLASH && SLASH <= b) {
      if (a < SLASH) out.push(a, SLASH - 1);
      if (b > SLASH) out.push(SLASH + 1, b);
    } else out.push(a, b);
  }
  return out;
}

/**
 * git's `[...]` from just after the `[`; null where wildmatch aborts. `casefold` (core.ignorecase,
 * for a subject already lowered) follows git's wildmatch to the letter: a range also matches a
 * lower-case subject whose upper case is in it, `[:upper:]` matches lower-case letters too, and a
 * single member is compared as written, so an upper-case one (`[AB]`, `[\A]`) never matches.
 */
function parseClass(q: number[], start: number, casefold = false): { tok: Token; next: number } | null {
  const n = q.length;
  let k = start;
  let negate = false;
  if (q[k] === 94 /* ^ */ || q[k] === 33 /* ! */) {
    negate = true;
    k++;
  }
  const ranges: number[] = [];
  let prev = 0;
  let first = true;
  for (;;) {
    if (k >= n) return null;
    let c = q[k] as number;
    if (!first && c === 93 /* ] */) break;
    first = false;
    if (c === BACKSLASH) {
      k++;
      if (k >= n) return null;
      c = q[k] as number;
      ranges.push(c, c);
      prev = c;
    } else if (c === 45 /* - */ && prev !== 0 && k + 1 < n && q[k + 1] !== 93) {
      k++;
      let e = q[k] as number;
      if (e === BACKSLASH) {
        k++;
        if (k >= n) return null;
        e = q[k] as number;
      }
      if (prev <= e) ranges.push(prev, e);
      if (casefold) ranges.push(...lowerImage(prev, e));
      prev = 0;
    } else if (c === 91 /* [ */ && q[k + 1] === 58 /* : */) {
      const s = k + 2;
      let j = s;
      while (j < n && q[j] !== 93) j++;
      if (j >= n) return null;
      if (j - s - 1 < 0 || q[j - 1] !== 58) {
        // no `:]`: the `[` is an ordinary member
        ranges.push(91, 91);
        prev = 91;
      } else {
        const name = String.fromCharCode(...q.slice(s, j - 1));
        const cls = POSIX[name];
        if (cls === undefined) return null;
        ranges.push(...cls);
        if (casefold && name === "upper") ranges.push(...(POSIX.lower as number[]));
        prev = 0;
        k = j;
      }
    } else {
      ranges.push(c, c);
      prev = c;
    }
    k++;
  }
  return { tok: { k: CLASS, ranges: withoutSlash(ranges), negate, noSlash: true }, next: k + 1 };
}

/**
 * The tokens of `pattern` (already in gitBytes form, leading `/` removed); null: it never matches.
 * `casefold`: git's core.ignorecase (WM_CASEFOLD), for subjects passed through asciiLower.
 */
export function gitPatternTokens(pattern: string, casefold = false): Token[] | null {
  const q: number[] = [];
  for (let i = 0; i < pattern.length; i++) q.push(pattern.charCodeAt(i));
  const n = q.length;
  const out: Token[] = [];
  let i = 0;
  while (i < n) {
    const c = q[i] as number;
    if (c === STAR_CH) {
      let j = i;
      while (q[j] === STAR_CH) j++;
      if (j - i >= 2) {
        const atStart = i === 0 || q[i - 1] === SLASH;
        const slashNext = q[j] === SLASH ? 1 : q[j] === BACKSLASH && q[j + 1] === SLASH ? 2 : 0;
        if (atStart && j === n) {
          out.push({ k: ALL });
          i = j;
          continue;
        }
        if (atStart && slashNext > 0) {
          out.push({ k: DIRS });
          i = j + slashNext;
          continue;
        }
      }
      const last = out[out.length - 1];
      if (last === undefined || last.k !== STAR) out.push({ k: STAR, noSlash: true });
      i = j;
      continue;
    }
    if (c === 63 /* ? */) {
      out.push({ k: ANY, noSlash: true });
      i++;
      continue;
    }
    if (c === 91 /* [ */) {
      const cls = parseClass(q, i + 1, casefold);
      if (cls === null) return null;
      out.push(cls.tok);
      i = cls.next;
      continue;
    }
    if (c === BACKSLASH) {
      if (i + 1 >= n) return null;
      out.push({ k: LIT, c: lit(q[i + 1] as number, casefold) });
      i += 2;
      continue;
    }
    out.push({ k: LIT, c: lit(c, casefold) });
    i++;
  }
  return out;
}

function lit(c: number, casefold: boolean): number {
  return casefold && c >= 65 && c <= 90 ? c + 32 : c;
}

/** The literal a pattern stands for when it holds no wildcard and no escape (git's no_wildcard), else null. */
export function plainLiteral(pattern: string): string | null {
  return /[*?[\\]/.test(pattern) ? null : pattern;
}
