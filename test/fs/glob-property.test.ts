// Property test of the glob matcher (src/fs/glob.ts): random globs from the whole dialect alphabet
// on random names, for both dialects, must agree with a plain recursive backtracking reference
// written here from the dialect rules, and with the RegExp compilers the product used before
// (fixtures/legacy-glob-regex.ts), both run on short inputs only. The matcher's work counter must
// stay within (pattern + 1) x (name + 1), on random cases and on the pathological patterns.
import { describe, expect, test } from "bun:test";
import { compileFnmatch, compileFnmatchSet, compileNfaOnly, compilePathGlob, compileSearchGlob, globWork } from "../../src/fs/glob.ts";
import { repetitions } from "../support/stress.ts";
import * as legacy from "./fixtures/legacy-glob-regex.ts";
import { mulberry32 } from "../support/prng.ts";

// ---- reference matcher: recursive, by code point, straight from the rules ------------------

type El =
  | { k: "lit"; c: number }
  | { k: "any" }
  | { k: "star" }
  | { k: "all" }
  | { k: "dirs" }
  | { k: "optsub" }
  | { k: "class"; has: (c: number) => boolean };

const cp = (s: string) => Array.from(s, (ch) => ch.codePointAt(0) as number);
const SL = 47;

/** `[` at p[i-1]: the class element and the index after `]`, or null when unterminated. */
function refClass(p: number[], i: number, path: boolean): { el: El; next: number } | null {
  let j = i;
  const negate = p[j] === 33 || (path && p[j] === 94);
  if (negate) j++;
  const start = j;
  if (p[j] === 93) j++;
  while (j < p.length && p[j] !== 93) j++;
  if (j >= p.length) return null;
  const members: [number, number][] = [];
  for (let k = start; k < j; k++) {
    if (p[k + 1] === 45 && k + 2 < j) {
      members.push([p[k] as number, p[k + 2] as number]); // reversed: lo > hi, matches nothing
      k += 2;
    } else members.push([p[k] as number, p[k] as number]);
  }
  const inSet = (c: number) => members.some(([lo, hi]) => lo <= c && c <= hi);
  const has = negate ? (c: number) => !inSet(c) && !(path && c === SL) : inSet;
  return { el: { k: "class", has }, next: j + 1 };
}

function refParse(pattern: string, path: boolean, self: boolean): El[] {
  const p = cp(path && pattern.startsWith("/") ? pattern.slice(1) : pattern);
  const out: El[] = [];
  for (let i = 0; i < p.length; ) {
    const c = p[i] as number;
    if (path && c === 42 && p[i + 1] === 42) {
      const atStart = i === 0 || p[i - 1] === SL;
      if (atStart && p[i + 2] === SL) {
        out.push({ k: "dirs" });
        i += 3;
      } else if (atStart && i + 2 === p.length) {
        const last = out[out.length - 1];
        if (self && last?.k === "lit" && last.c === SL) out[out.length - 1] = { k: "optsub" };
        else out.push({ k: "all" });
        i += 2;
      } else {
        out.push({ k: "star" });
        i += 2;
      }
      continue;
    }
    i++;
    if (c === 42) out.push({ k: "star" });
    else if (c === 63) out.push({ k: "any" });
    else if (c === 91) {
      const cls = refClass(p, i, path);
      if (cls === null) out.push({ k: "lit", c });
      else {
        out.push(cls.el);
        i = cls.next;
      }
    } else out.push({ k: "lit", c });
  }
  return out;
}

function refMatch(els: El[], s: number[], path: boolean): boolean {
  const ok = (c: number) => !(path && c === SL);
  const go = (e: number, i: number): boolean => {
    if (e === els.length) return i === s.length;
    const el = els[e] as El;
    switch (el.k) {
      case "star":
        for (let k = i; k <= s.length; k++) {
          if (go(e + 1, k)) return true;
          if (k < s.length && !ok(s[k] as number)) return false;
        }
        return false;
      case "all":
        for (let k = i; k <= s.length; k++) if (go(e + 1, k)) return true;
        return false;
      case "dirs": {
        if (go(e + 1, i)) return true;
        for (let k = i; k < s.length; k++) {
          if (s[k] === SL) return go(e, k + 1);
        }
        return false;
      }
      case "optsub":
        return i === s.length || (s[i] === SL && els.length === e + 1);
      default: {
        if (i >= s.length) return false;
        const c = s[i] as number;
        const hit = el.k === "lit" ? c === el.c : el.k === "any" ? ok(c) : el.has(c);
        return hit && go(e + 1, i + 1);
      }
    }
  };
  return go(0, 0);
}

const refFn = (pattern: string, name: string) => refMatch(refParse(pattern, false, false), cp(name), false);
const refPath = (pattern: string, rel: string, self = false) => refMatch(refParse(pattern, true, self), cp(rel), true);
function refSearch(pattern: string, rel: string, name: string): boolean {
  const body = pattern.startsWith("/") ? pattern.slice(1) : pattern;
  if (!body.includes("/")) return pattern.startsWith("/") ? refPath(body, rel) : refPath(body, name);
  return refPath(pattern, rel);
}

// ---- random cases ---------------------------------------------------------------------------


const PATTERN_ALPHABET = ["a", "b", ".", "/", "*", "*", "?", "[", "]", "!", "^", "-", "**", "**/", "/**", "[a-c]", "[!b]", "[^a/]", "[c-a]", "[]a]", "é", "\u{1F600}", "\uD83D", "\uDE00", "{", "\\"];
const NAME_ALPHABET = ["a", "a", "b", "c", ".", "/", "/", "//", "-", "[", "]", "!", "^", "é", "\u{1F600}", "\uD83D", "\uDE00", "*", "?"];

function pick(r: () => number, xs: string[], max: number): string {
  const n = Math.floor(r() * (max + 1));
  let s = "";
  for (let i = 0; i < n; i++) s += xs[Math.floor(r() * xs.length)];
  return s;
}

/** Work done by one call, checked against (pattern + 1) x (subject + 1) in UTF-16 units. */
function bounded(pattern: string, subject: string, run: () => boolean): boolean {
  const before = globWork.steps;
  const result = run();
  const steps = globWork.steps - before;
  const bound = (pattern.length + 1) * (subject.length + 1);
  if (steps > bound) throw new Error(`pattern ${JSON.stringify(pattern)} on ${JSON.stringify(subject)}: ${steps} steps > ${bound}`);
  return result;
}

/** Random patterns per property (the stress lane: 4,000). */
const CASES = repetitions(1000, 4000);

describe("random globs agree with the reference and the former RegExp matcher", () => {
  test(`fnmatch, ${CASES} patterns x 3 names (fast paths and the NFA alone)`, () => {
    const r = mulberry32(0x5eed1);
    let matched = 0;
    for (let i = 0; i < CASES; i++) {
      const pattern = pick(r, PATTERN_ALPHABET, 7);
      const full = compileFnmatch(pattern);
      const nfa = compileNfaOnly("fnmatch", pattern);
      const old = legacy.compileFnmatch(pattern);
      for (let j = 0; j < 3; j++) {
        const name = j === 0 ? pattern.replace(/[*?[\]]/g, "a") : pick(r, NAME_ALPHABET, 8);
        const want = refFn(pattern, name);
        const got = { pattern, name, full: bounded(pattern, name, () => full.test(name)), nfa: bounded(pattern, name, () => nfa.test(name)), old: old.test(name) };
        expect(got).toEqual({ pattern, name, full: want, nfa: want, old: want });
        if (want) matched++;
      }
    }
    expect(matched).toBeGreaterThan(CASES / 4); // the generator reaches both outcomes
  });

  test(`path globs, ${CASES} patterns x 3 paths, with and without trailingMatchesSelf`, () => {
    const r = mulberry32(0x5eed2);
    let matched = 0;
    for (let i = 0; i < CASES; i++) {
      const pattern = pick(r, PATTERN_ALPHABET, 7);
      const self = i % 2 === 1;
      const full = compilePathGlob(pattern, self);
      const nfa = compileNfaOnly("path", pattern, self);
      const old = legacy.compilePathGlob(pattern, self);
      for (let j = 0; j < 3; j++) {
        const rel = j === 0 ? pattern.replace(/\*\*/g, "a/b").replace(/[*?[\]]/g, "a") : pick(r, NAME_ALPHABET, 9);
        const want = refPath(pattern, rel, self);
        const got = { pattern, rel, self, full: bounded(pattern, rel, () => full.test(rel)), nfa: bounded(pattern, rel, () => nfa.test(rel)), old: old.test(rel) };
        expect(got).toEqual({ pattern, rel, self, full: want, nfa: want, old: want });
        if (want) matched++;
      }
    }
    expect(matched).toBeGreaterThan(CASES / 4);
  });

  test(`search_text globs, ${CASES} cases: name at any depth without '/', relative path with it`, () => {
    const r = mulberry32(0x5eed3);
    for (let i = 0; i < CASES; i++) {
      const pattern = pick(r, PATTERN_ALPHABET, 6);
      const rel = pick(r, NAME_ALPHABET, 9).replace(/^\/+|\/+$/g, "") || "x";
      const name = rel.slice(rel.lastIndexOf("/") + 1);
      const want = refSearch(pattern, rel, name);
      expect({ pattern, rel, got: compileSearchGlob(pattern)(rel, name), old: legacy.compileSearchGlob(pattern)(rel, name) }).toEqual({ pattern, rel, got: want, old: want });
    }
  });

  test("a set of fnmatch globs matches exactly when one of them does", () => {
    const r = mulberry32(0x5eed4);
    for (let i = 0; i < 1000; i++) {
      const patterns = Array.from({ length: 1 + Math.floor(r() * 4) }, () => pick(r, PATTERN_ALPHABET, 5));
      const set = compileFnmatchSet(patterns);
      for (let j = 0; j < 4; j++) {
        const name = pick(r, NAME_ALPHABET, 6);
        expect({ patterns, name, got: set?.test(name) }).toEqual({ patterns, name, got: patterns.some((p) => refFn(p, name)) });
      }
    }
    expect(compileFnmatchSet([])).toBeNull();
  });
});

describe("exhaustive small cases reach every fast-path shape", () => {
  function* strings(alphabet: string[], max: number): Generator<string> {
    yield "";
    if (max === 0) return;
    for (const rest of strings(alphabet, max - 1)) if (rest.length < max * 3) for (const a of alphabet) yield rest + a;
  }
  const uniq = (xs: Iterable<string>) => [...new Set(xs)];
  const patterns = uniq(strings(["a", "b", "/", "*", "**", "?"], 4));
  const subjects = uniq(strings(["a", "b", "/"], 5));
  test(`${patterns.length} patterns x ${subjects.length} subjects, both dialects, self and not`, () => {
    let disagreements = 0;
    for (const pattern of patterns) {
      const fn = compileFnmatch(pattern);
      const paths = [compilePathGlob(pattern, false), compilePathGlob(pattern, true)];
      const fnEls = refParse(pattern, false, false);
      const pathEls = [refParse(pattern, true, false), refParse(pattern, true, true)];
      for (const s of subjects) {
        const c = cp(s);
        if (fn.test(s) !== refMatch(fnEls, c, false)) disagreements++;
        for (const k of [0, 1]) if ((paths[k] as { test(x: string): boolean }).test(s) !== refMatch(pathEls[k] as El[], c, true)) disagreements++;
        if (disagreements > 0) throw new Error(`pattern ${JSON.stringify(pattern)} disagrees on ${JSON.stringify(s)}`);
      }
    }
    expect(disagreements).toBe(0);
  });
});

describe("work stays within (pattern + 1) x (name + 1) on the pathological patterns", () => {
  const longName = `${"a".repeat(5000)}b`;
  const longPath = `${"a/".repeat(1000)}${"a".repeat(3000)}`;
  const cases: [string, "fnmatch" | "path", string, boolean][] = [
    ["*?*?*?*?*?*?*?*b", "fnmatch", "a".repeat(6000), false],
    ["*?*?*?*?*?*?*?*[b]", "fnmatch", "a".repeat(6000), false],
    ["a*?*?*?*?*?*?*?[!a]", "fnmatch", "a".repeat(6000), false],
    ["*a*a*a*a*a*a*a*c", "fnmatch", longName, false],
    ["*[a]*[a]*[a]*[a]*[a]*[a]*[a]*c", "fnmatch", longName, false],
    [`${"*?".repeat(512)}`, "fnmatch", "a".repeat(255), false],
    [`${"?".repeat(300)}*[!a]`, "fnmatch", longName, true],
    ["**/*?*?*?*?*?*?*?*b", "path", longPath, false],
    ["**/*?*?*?*?*?*?*?*[b]", "path", longPath, false],
    ["**/**/**/**/**/**/**/x", "path", longPath, false],
    ["*a*a*a*a*a*a*a*c/**", "path", longPath, false],
    ["**/a*?*?*?*?*?*?*/**", "path", longPath, true],
    ["a/**/a/**/a/**/a/**/b", "path", longPath, false],
  ];
  for (const [pattern, dialect, subject, want] of cases) {
    test(`${dialect} ${pattern.length > 40 ? `${pattern.slice(0, 40)}...` : pattern} on ${subject.length} chars`, () => {
      const matchers = dialect === "fnmatch" ? [compileFnmatch(pattern), compileNfaOnly("fnmatch", pattern)] : [compilePathGlob(pattern, true), compileNfaOnly("path", pattern, true)];
      for (const m of matchers) expect(bounded(pattern, subject, () => m.test(subject))).toBe(want);
    });
  }

  test("the NFA counts one visit per live state per code point: (states) x (code points + 1)", () => {
    const pattern = "*?*?*?*?*?*?*?*[b]"; // 16 tokens: 16 states + accept
    const m = compileNfaOnly("fnmatch", pattern);
    const before = globWork.steps;
    expect(m.test("a".repeat(1000))).toBe(false);
    const steps = globWork.steps - before;
    expect(steps).toBeGreaterThan(1000); // the counter observes the work
    expect(steps).toBeLessThanOrEqual(17 * 1001);
    // a literal tail the subject lacks is refused before the NFA runs
    const withTail = compileNfaOnly("fnmatch", "*?*?*?*?*?*?*?*b");
    const at = globWork.steps;
    expect(withTail.test("a".repeat(1000))).toBe(false);
    expect(globWork.steps - at).toBe(1);
  });
});
