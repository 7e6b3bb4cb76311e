// Two glob dialects, compiled once to a token list and matched without backtracking:
// - `fnmatch`: the basename matcher of find_files and of component deny globs (Python fnmatchcase:
//   `*` `?` `[...]` `[!...]`, no escapes, `*` may match anything because a name has no `/`).
// - `pathGlob`: ripgrep `--glob` semantics for search_text and slash deny globs: `*`/`?` never
//   cross `/`, `**/` is zero or more directories, a trailing `/**` is everything below, `[!...]` and
//   `[^...]` negate, an unterminated `[` is a literal, no braces. Case-sensitive on every platform.
//
// Why not RegExp: a wildcard compiled to a backtracking regex is exponential on runs of `*`, `?`
// and `**` that end in a non-matching character (a 16-byte find_files pattern froze serve for
// minutes). Here every pattern becomes a small NFA whose state set is advanced one code point at a
// time, so one match costs at most (states) x (code points + 1) transitions, with
// states <= pattern code points + 1. The common shapes (a literal, `lit*`, `*.ext`, `*lit*`,
// `dir/**`, `**/name`) skip the NFA and use string primitives, which keeps the walk hot path
// as fast as the regex it replaces. Matching is by code point, lone surrogates included, exactly
// as the `u`-flag regexes this replaced did.

/** Longest glob a tool argument may carry, in UTF-16 code units (find_files.pattern, search_text.glob). */
export const MAX_GLOB_CHARS = 1024;

const SLASH = 47;

/** Observable work counter: NFA state visits plus one per code point on the fast paths (tests bound it). */
export const globWork = { steps: 0 };

export interface GlobMatcher {
  test(subject: string): boolean;
}

// ---- tokens ---------------------------------------------------------------------------------

const LIT = 0; // one code point
const ANY = 1; // `?`
const STAR = 2; // `*`
const CLASS = 3; // `[...]`
const ALL = 4; // `[\s\S]*`: trailing `**`
const DIRS = 5; // `(?:[^/]*/)*`: `**/`
const OPT_SUB = 6; // `(?:/[\s\S]*)?`: trailing `/**` of a deny rule (the directory itself too)

interface Token {
  k: number;
  /** LIT: the code point. */
  c?: number;
  /** ANY/STAR/negated CLASS: refuses `/` (path dialect). */
  noSlash?: boolean;
  /** CLASS: [lo, hi] pairs; an empty list never matches unless negated. */
  ranges?: number[];
  negate?: boolean;
}

/** Parse `[...]` after the `[` at cps[i]; the class and the next index, or null if unterminated. */
function parseClass(cps: number[], i: number, caretNegates: boolean, noSlash: boolean): { tok: Token; next: number } | null {
  let j = i;
  let negate = false;
  if (cps[j] === 33 /* ! */ || (caretNegates && cps[j] === 94) /* ^ */) {
    negate = true;
    j++;
  }
  const bodyStart = j;
  if (cps[j] === 93 /* ] */) j++; // a leading `]` is a literal member
  while (j < cps.length && cps[j] !== 93) j++;
  if (j >= cps.length) return null;
  const ranges: number[] = [];
  for (let k = bodyStart; k < j; k++) {
    const a = cps[k] as number;
    if (cps[k + 1] === 45 /* - */ && k + 2 < j) {
      const b = cps[k + 2] as number;
      // A reversed range matches nothing (Python drops it).
      if (a <= b) ranges.push(a, b);
      k += 2;
    } else ranges.push(a, a);
  }
  return { tok: { k: CLASS, ranges, negate, noSlash }, next: j + 1 };
}

function pushStar(out: Token[], noSlash: boolean): void {
  const last = out[out.length - 1];
  if (last !== undefined && last.k === STAR && last.noSlash === noSlash) return; // `**` glued = `*`
  out.push({ k: STAR, noSlash });
}

function fnmatchTokens(pattern: string): Token[] {
  const cps = Array.from(pattern, (ch) => ch.codePointAt(0) as number);
  const out: Token[] = [];
  for (let i = 0; i < cps.length; ) {
    const c = cps[i++] as number;
    if (c === 42 /* * */) pushStar(out, false);
    else if (c === 63 /* ? */) out.push({ k: ANY, noSlash: false });
    else if (c === 91 /* [ */) {
      const cls = parseClass(cps, i, false, false);
      if (cls === null) out.push({ k: LIT, c });
      else {
        out.push(cls.tok);
        i = cls.next;
      }
    } else out.push({ k: LIT, c });
  }
  return out;
}

function pathTokens(pattern: string, trailingMatchesSelf: boolean): Token[] {
  const cps = Array.from(pattern.startsWith("/") ? pattern.slice(1) : pattern, (ch) => ch.codePointAt(0) as number);
  const out: Token[] = [];
  let i = 0;
  while (i < cps.length) {
    const c = cps[i] as number;
    if (c === 42 && cps[i + 1] === 42) {
      const atStart = i === 0 || cps[i - 1] === SLASH;
      const atEnd = i + 2 === cps.length;
      if (atStart && cps[i + 2] === SLASH) {
        out.push({ k: DIRS });
        i += 3;
        continue;
      }
      if (atStart && atEnd) {
        const last = out[out.length - 1];
        if (trailingMatchesSelf && last !== undefined && last.k === LIT && last.c === SLASH) {
          out.pop();
          out.push({ k: OPT_SUB }, { k: ALL });
        } else out.push({ k: ALL });
        i += 2;
        continue;
      }
      pushStar(out, true);
      i += 2;
      continue;
    }
    i++;
    if (c === 42) pushStar(out, true);
    else if (c === 63) out.push({ k: ANY, noSlash: true });
    else if (c === 91) {
      const cls = parseClass(cps, i, true, true);
      if (cls === null) out.push({ k: LIT, c });
      else {
        out.push(cls.tok);
        i = cls.next;
      }
    } else out.push({ k: LIT, c });
  }
  return out;
}

// ---- NFA ------------------------------------------------------------------------------------
// One state per token plus the accept state; DIRS and OPT_SUB use a helper state (see below).

function classHas(t: Token, c: number): boolean {
  const r = t.ranges as number[];
  let inside = false;
  for (let k = 0; k < r.length; k += 2) {
    if (c >= (r[k] as number) && c <= (r[k + 1] as number)) {
      inside = true;
      break;
    }
  }
  if (t.negate) return !inside && !(t.noSlash && c === SLASH);
  return inside;
}

class Nfa implements GlobMatcher {
  private readonly kind: Int32Array;
  private readonly toks: Token[];
  /** Epsilon successor of each state, -1 for none. */
  private readonly eps: Int32Array;
  private readonly accept: number;
  private readonly seen: Int32Array;
  private cur: Int32Array;
  private nxt: Int32Array;
  private stamp = 0;

  constructor(tokens: Token[]) {
    // DIRS becomes [boundary, inside-a-directory-name]; OPT_SUB is already followed by its ALL.
    const toks: Token[] = [];
    for (const t of tokens) {
      toks.push(t);
      if (t.k === DIRS) toks.push({ k: -1 });
    }
    const n = toks.length;
    this.toks = toks;
    this.accept = n;
    this.kind = new Int32Array(n + 1).fill(-2);
    this.eps = new Int32Array(n + 1).fill(-1);
    for (let s = 0; s < n; s++) {
      const k = (toks[s] as Token).k;
      this.kind[s] = k;
      if (k === STAR || k === ALL) this.eps[s] = s + 1;
      else if (k === DIRS || k === OPT_SUB) this.eps[s] = s + 2;
    }
    this.seen = new Int32Array(n + 1);
    this.cur = new Int32Array(n + 1);
    this.nxt = new Int32Array(n + 1);
  }

  /** Add `s` and its epsilon successors to `set` at `count`; returns the new count. */
  private add(set: Int32Array, count: number, state: number): number {
    let s = state;
    while (s !== -1 && this.seen[s] !== this.stamp) {
      this.seen[s] = this.stamp;
      set[count++] = s;
      s = this.eps[s] as number;
    }
    return count;
  }

  test(subject: string): boolean {
    let steps = 0;
    this.stamp++;
    let curN = this.add(this.cur, 0, 0);
    steps += curN;
    const len = subject.length;
    for (let i = 0; i < len && curN > 0; ) {
      let c = subject.charCodeAt(i++);
      if (c >= 0xd800 && c <= 0xdbff && i < len) {
        const d = subject.charCodeAt(i);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
          i++;
        }
      }
      this.stamp++;
      let nN = 0;
      const cur = this.cur;
      const nxt = this.nxt;
      for (let q = 0; q < curN; q++) {
        const s = cur[q] as number;
        const t = this.toks[s] as Token;
        switch (this.kind[s]) {
          case LIT:
            if (c === t.c) nN = this.add(nxt, nN, s + 1);
            break;
          case ANY:
            if (!(t.noSlash && c === SLASH)) nN = this.add(nxt, nN, s + 1);
            break;
          case CLASS:
            if (classHas(t, c)) nN = this.add(nxt, nN, s + 1);
            break;
          case STAR:
            if (!(t.noSlash && c === SLASH)) nN = this.add(nxt, nN, s);
            break;
          case ALL:
            nN = this.add(nxt, nN, s);
            break;
          case DIRS: // at a directory boundary: `/` ends an empty name, anything else starts one
            nN = this.add(nxt, nN, c === SLASH ? s : s + 1);
            break;
          case -1: // inside a directory name of DIRS: `/` returns to the boundary
            nN = this.add(nxt, nN, c === SLASH ? s - 1 : s);
            break;
          case OPT_SUB:
            if (c === SLASH) nN = this.add(nxt, nN, s + 1);
            break;
        }
      }
      steps += nN;
      this.cur = nxt;
      this.nxt = cur;
      curN = nN;
    }
    globWork.steps += steps;
    for (let q = 0; q < curN; q++) if (this.cur[q] === this.accept) return true;
    return false;
  }
}

// ---- fast paths -----------------------------------------------------------------------------

const SURROGATE = /[\uD800-\uDFFF]/;

/** The literal run tokens[from..to) as a string, or null if any token is not a literal. */
function literal(tokens: Token[], from: number, to: number): string | null {
  let s = "";
  for (let i = from; i < to; i++) {
    const t = tokens[i] as Token;
    if (t.k !== LIT) return null;
    s += String.fromCodePoint(t.c as number);
  }
  return s;
}

function counted(fn: (s: string) => boolean): GlobMatcher {
  return {
    test(s: string) {
      globWork.steps += s.length + 1;
      return fn(s);
    },
  };
}

/**
 * `lit*lit*...*lit` where every `*` has the same slash rule: anchored ends, and each middle
 * literal at its leftmost place, which is optimal. With `/`-refusing stars the gaps must hold no
 * `/`; leftmost stays optimal when the middle literals hold none themselves (checked by caller).
 */
function starSequence(segs: string[], noSlash: boolean): GlobMatcher {
  const first = segs[0] as string;
  const last = segs[segs.length - 1] as string;
  const mids = segs.slice(1, -1);
  const gapOk = (s: string, from: number, to: number) => !noSlash || from >= to || s.slice(from, to).indexOf("/") === -1;
  if (mids.length === 0 && !noSlash) {
    const min = first.length + last.length;
    if (last === "") return counted((s) => s.startsWith(first));
    if (first === "") return counted((s) => s.endsWith(last));
    return counted((s) => s.length >= min && s.startsWith(first) && s.endsWith(last));
  }
  if (mids.length === 1 && first === "" && last === "" && !noSlash) {
    const mid = mids[0] as string;
    return counted((s) => s.includes(mid));
  }
  return counted((s) => {
    const end = s.length - last.length;
    if (end < first.length || !s.startsWith(first) || !s.endsWith(last)) return false;
    let at = first.length;
    for (const m of mids) {
      const found = s.indexOf(m, at);
      if (found === -1 || found + m.length > end || !gapOk(s, at, found)) return false;
      at = found + m.length;
    }
    return gapOk(s, at, end);
  });
}

function fastPath(tokens: Token[]): GlobMatcher | null {
  const n = tokens.length;
  const whole = literal(tokens, 0, n);
  if (whole !== null) return counted((s) => s === whole);
  const kinds = tokens.map((t) => t.k);
  // Literals and stars of one slash rule only.
  if (kinds.every((k) => k === LIT || k === STAR)) {
    const noSlash = tokens.some((t) => t.k === STAR && t.noSlash === true);
    const segs: string[] = [];
    let from = 0;
    for (let i = 0; i <= n; i++) {
      if (i === n || kinds[i] === STAR) {
        segs.push(literal(tokens, from, i) as string);
        from = i + 1;
      }
    }
    if (segs.some((x) => SURROGATE.test(x))) return null;
    if (noSlash && segs.slice(1, -1).some((x) => x.includes("/"))) return null;
    return starSequence(segs, noSlash);
  }
  // `lit` + trailing `**` / `/**`, optionally after a leading `**/`.
  const lead = kinds[0] === DIRS ? 1 : 0;
  let tail = n;
  let self = false;
  if (kinds[n - 1] === ALL) {
    tail = n - 1;
    if (kinds[n - 2] === OPT_SUB) {
      tail = n - 2;
      self = true;
    }
  }
  if (lead === 0 && tail === n) return null;
  const lit = literal(tokens, lead, tail);
  if (lit === null || lit === "" || SURROGATE.test(lit)) return null;
  const exact = (s: string) => (lead === 0 ? s === lit : s === lit || s.endsWith(`/${lit}`));
  if (tail === n) return counted(exact);
  const below = self ? `${lit}/` : lit;
  const prefix = (s: string) => (lead === 0 ? s.startsWith(below) : s.startsWith(below) || s.includes(`/${below}`));
  return counted(self ? (s) => exact(s) || prefix(s) : prefix);
}

function build(tokens: Token[]): GlobMatcher {
  return fastPath(tokens) ?? new Nfa(tokens);
}

/** Python fnmatchcase over a single name. */
export function compileFnmatch(pattern: string): GlobMatcher {
  return build(fnmatchTokens(pattern));
}

/** ripgrep/globset path glob, matched against a `/`-separated relative path. */
export function compilePathGlob(pattern: string, trailingMatchesSelf = false): GlobMatcher {
  return build(pathTokens(pattern, trailingMatchesSelf));
}

/** The NFA alone, fast paths bypassed (tests compare both against a reference). */
export function compileNfaOnly(dialect: "fnmatch" | "path", pattern: string, trailingMatchesSelf = false): GlobMatcher {
  return new Nfa(dialect === "fnmatch" ? fnmatchTokens(pattern) : pathTokens(pattern, trailingMatchesSelf));
}

/**
 * Several fnmatch globs as one test: exact names in one Set, then the other shapes in turn. The
 * policy's component rules run on every entry of every walk, so this is the hot path.
 */
export function compileFnmatchSet(patterns: readonly string[]): GlobMatcher | null {
  if (patterns.length === 0) return null;
  const exact = new Set<string>();
  const rest: GlobMatcher[] = [];
  for (const p of patterns) {
    const tokens = fnmatchTokens(p);
    const whole = literal(tokens, 0, tokens.length);
    if (whole !== null) exact.add(whole);
    else rest.push(build(tokens));
  }
  return {
    test(s: string) {
      if (exact.has(s)) return true;
      for (const m of rest) if (m.test(s)) return true;
      return false;
    },
  };
}

/**
 * search_text's `glob`: without `/` it matches the file name at any depth; with `/` the path
 * relative to the search root.
 */
export function compileSearchGlob(pattern: string): (relToSearchRoot: string, name: string) => boolean {
  const body = pattern.startsWith("/") ? pattern.slice(1) : pattern;
  if (!body.includes("/")) {
    const m = compilePathGlob(body);
    if (pattern.startsWith("/")) return (rel) => m.test(rel);
    return (_rel, name) => m.test(name);
  }
  const m = compilePathGlob(pattern);
  return (rel) => m.test(rel);
}
