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
// as the `u`-flag regexes this replaced did. The NFA itself is in glob-nfa.ts.

import { ALL, ANY, CLASS, DIRS, globWork, LIT, literal, Nfa, OPT_SUB, SLASH, STAR, type GlobMatcher, type Token } from "./glob-nfa.ts";

export { globWork, type GlobMatcher } from "./glob-nfa.ts";

/** Longest glob a tool argument may carry, in UTF-16 code units (find_files.pattern, search_text.glob). */
export const MAX_GLOB_CHARS = 1024;

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

/**
 * The token for the single code point before cps[next] (`*`, `?`, `[...]` or a literal); the
 * index after it. In a path glob `*`, `?` and classes never match `/`, and `[^...]` negates too.
 */
function pushOne(out: Token[], cps: number[], next: number, path: boolean): number {
  const c = cps[next - 1] as number;
  if (c === 42 /* * */) pushStar(out, path);
  else if (c === 63 /* ? */) out.push({ k: ANY, noSlash: path });
  else if (c === 91 /* [ */) {
    const cls = parseClass(cps, next, path, path);
    if (cls === null) out.push({ k: LIT, c });
    else {
      out.push(cls.tok);
      return cls.next;
    }
  } else out.push({ k: LIT, c });
  return next;
}

function fnmatchTokens(pattern: string): Token[] {
  const cps = Array.from(pattern, (ch) => ch.codePointAt(0) as number);
  const out: Token[] = [];
  for (let i = 0; i < cps.length; ) i = pushOne(out, cps, i + 1, false);
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
    i = pushOne(out, cps, i + 1, true);
  }
  return out;
}

// ---- fast paths -----------------------------------------------------------------------------

const SURROGATE = /[\uD800-\uDFFF]/;

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
  const slashLit = `/${lit}`;
  const exact = lead === 0 ? (s: string) => s === lit : (s: string) => s === lit || s.endsWith(slashLit);
  if (tail === n) return counted(exact);
  const below = self ? `${lit}/` : lit;
  const slashBelow = `/${below}`;
  const prefix = lead === 0 ? (s: string) => s.startsWith(below) : (s: string) => s.startsWith(below) || s.includes(slashBelow);
  return counted(self ? (s) => exact(s) || prefix(s) : prefix);
}

function build(tokens: Token[]): GlobMatcher {
  return fastPath(tokens) ?? new Nfa(tokens);
}

/** A token list another dialect produced (git ignore patterns, ./ignore/wildmatch.ts), with the same fast paths. */
export function compileTokens(tokens: Token[]): GlobMatcher {
  return build(tokens);
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
  const prefixes: string[] = [];
  const suffixes: string[] = [];
  const rest: GlobMatcher[] = [];
  for (const p of patterns) {
    const tokens = fnmatchTokens(p);
    const whole = literal(tokens, 0, tokens.length);
    if (whole !== null) {
      exact.add(whole);
      continue;
    }
    // `lit*` and `*lit` (the built-in `.env.*`, `*.pem`, ...): plain string tests, no closure
    const n = tokens.length;
    const starLast = n > 1 && (tokens[n - 1] as Token).k === STAR;
    const starFirst = n > 1 && (tokens[0] as Token).k === STAR;
    const lit = starLast && !starFirst ? literal(tokens, 0, n - 1) : starFirst && !starLast ? literal(tokens, 1, n) : null;
    if (lit !== null && !SURROGATE.test(lit)) (starLast ? prefixes : suffixes).push(lit);
    else rest.push(build(tokens));
  }
  // Most names share no first (last) code unit with any exact name or prefix (suffix): one table
  // look-up rejects them without hashing the name.
  const first = unitTable([...exact, ...prefixes], (x) => x.charCodeAt(0));
  const last = unitTable(suffixes, (x) => x.charCodeAt(x.length - 1));
  return {
    test(s: string) {
      globWork.steps += s.length + 1;
      if (mayHold(first, s.charCodeAt(0))) {
        if (exact.has(s)) return true;
        for (const x of prefixes) if (s.startsWith(x)) return true;
      }
      if (mayHold(last, s.charCodeAt(s.length - 1))) for (const x of suffixes) if (s.endsWith(x)) return true;
      for (const m of rest) if (m.test(s)) return true;
      return false;
    },
  };
}

/** Which ASCII code units start (or end) one of `xs`; index 128 stands for every other unit. */
function unitTable(xs: string[], unit: (x: string) => number): Uint8Array {
  const t = new Uint8Array(129);
  for (const x of xs) {
    const u = x === "" ? 128 : unit(x);
    t[u < 128 ? u : 128] = 1;
  }
  if (xs.includes("")) t.fill(1);
  return t;
}

function mayHold(t: Uint8Array, u: number): boolean {
  return t[u < 128 ? u : 128] === 1 || Number.isNaN(u);
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
