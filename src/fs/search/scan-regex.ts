// search_text's regex mode (docs/tools.md, `search_text`): RE2 syntax and semantics through re2js
// (linear time, no backtracking), matched line by line like ripgrep: a match never spans lines,
// `^`/`$` anchor at the line's start and end, an undecodable line never matches.
//
// Speed: re2js runs on the raw UTF-8 bytes (no decoding), and a piece of whole lines is tested in
// ONE call before any line of it is: with `(?m)`, a piece of lines can hold a match only if one
// of its lines does (per-line `^`/`$` are `(?m)` `^`/`$` next to the \n; `\b` sees the \n as a
// non-word character, like a line edge). The reverse can fail (a `\s` or `[^a]` may match the \n),
// so a piece that tests positive is halved until pieces of ~1 KiB are tested line by line. Only
// `\A`, `\z` and a `(?-m)` flag group would break that implication; a pattern containing any of
// those texts (even escaped) is tested line by line throughout. re2js's own required-literal
// prefilter (indexOf before the automaton) runs inside each test() call. A pure-ASCII piece or line
// is tested by a flat table over re2js's own DFA instead (ascii-dfa.ts: the same transitions, one
// typed-array load per byte), after the same required literals; anything else, and whatever the
// table cannot hold, goes to re2js.
//
// re2js builds no such prefilter for a case-insensitive pattern, and its (?i) automaton is several
// times slower, so case_sensitive=false (or a leading (?i)) gets one here (literalFilter): the required literals of the
// SAME pattern compiled case-sensitively, searched in an ASCII-lowercased copy of a piece that is
// pure ASCII. Sound because (?i) matches a text exactly when some per-character case variant of it
// matches the case-sensitive pattern, so every (?i) match holds a case variant of each literal
// that pattern requires, and in ASCII text the case variants of an ASCII character are its two
// ASCII cases (the Kelvin sign and long s are not ASCII). Non-ASCII pieces and non-ASCII literals
// are not filtered.
//
// The event loop: one test() call cannot be interrupted. Its worst case is re2js's NFA, whose
// cost per byte grows with the program (each byte can step every instruction), so the bytes one
// call may see are bounded by a WORK budget of bytes x instructions: a line longer than
// lineCap = min(MAX_REGEX_LINE_BYTES, MAX_REGEX_CALL_WORK / programSize) is never a regex match,
// and pieces never grow past it. The per-instruction cost also depends on the instruction: a
// large class such as \p{L} is a binary search per byte (~25 ns per byte-instruction for
// `\p{L}{999}\d` on the 2-core bench machine under load, ~8 ns for `a[ab]{900}[^ab]`), so
// MAX_REGEX_CALL_WORK is sized for the costly kind: ~50 ms per call at worst, which no call holds
// the thread it runs on (the main thread included, and everywhere: the bound does not depend on
// the search worker) for longer than. Between calls pieces are sized so that one call takes about
// TARGET_MS (halved after a slow call, doubled after a fast one) and the walk's clock is checked.
//
// Memory: re2js's lazy DFA caches states up to a budget of its own reckoning (8 MiB by default,
// ~3x that in JS heap), then throws them away and starts again, or gives up for the NFA when it
// makes too little progress. A pattern whose states explode (`a[ab]{20}[^ab]` over two-letter
// text) filled and refilled that cache, and the thrown-away states piled up in the old
// generation: one search of half a MiB of such lines took serve's RSS to 160 MB, two at once to
// 300 MB. Each search now gives its DFA at most DFA_SEARCH_BYTES, out of DFA_THREAD_BYTES for all
// the searches of one thread (the main thread and the search worker each have theirs): a search
// that finds the rest taken runs without the DFA, on the NFA (slower, and bounded by the program
// size). A small cache is also faster on such patterns: the DFA gives up for the NFA sooner.

import { isAscii, isUtf8 } from "node:buffer";
import { RE2JS } from "re2js";
import { escapeControls } from "../../common/escape.ts";
import { AsciiDfa, ROW_BYTES as ASCII_ROW_BYTES } from "./ascii-dfa.ts";
import { asciiLower, countNewlines, matchText, type LineHit } from "./scan-text.ts";

/** Longest regex, in UTF-16 code units (the same bound as globs). */
export const MAX_REGEX_CHARS = 1024;
/** Largest compiled program (re2js programSize): bounds the per-byte cost of the NFA fallback. */
export const MAX_REGEX_PROGRAM = 2000;
/** Longest line a regex is matched against; longer lines are never regex matches. */
export const MAX_REGEX_LINE_BYTES = 64 * 1024;
/** Bytes x program instructions one engine call may see (see the header): 2 Mi. */
export const MAX_REGEX_CALL_WORK = 2 * 1024 * 1024;
/** re2js's DFA state budget (its own cost estimate) for one search, and for all of one thread's searches. */
export const DFA_SEARCH_BYTES = 256 * 1024;
export const DFA_THREAD_BYTES = 1024 * 1024;

/** The longest line a pattern of `programSize` instructions is matched against. */
export function regexLineCap(programSize: number): number {
  return Math.min(MAX_REGEX_LINE_BYTES, Math.floor(MAX_REGEX_CALL_WORK / Math.max(1, programSize)));
}

/** This thread's DFA budget not yet given to a search. */
let dfaBytesLeft = DFA_THREAD_BYTES;

/** The DFA budget still free on this thread (tests). */
export function dfaBudgetLeft(): number {
  return dfaBytesLeft;
}

/**
 * Give `re`'s lazy DFA a state budget of `bytes` (0: no DFA, the NFA runs). Reaches into re2js
 * (pinned 2.10.0: RE2JS.re2Input.dfa with maxMem, stateBudget and memBudget, and `failed` for "do
 * not use"); false when those fields are not there, which a unit test turns into a failure.
 */
export function limitDfa(re: RE2JS, bytes: number): boolean {
  const dfa = (re as unknown as { re2Input?: { dfa?: Record<string, unknown> } }).re2Input?.dfa;
  if (dfa === undefined || typeof dfa.maxMem !== "number" || typeof dfa.stateBudget !== "number" || typeof dfa.memBudget !== "number" || typeof dfa.failed !== "boolean") return false;
  dfa.maxMem = bytes;
  dfa.stateBudget = bytes;
  dfa.memBudget = bytes;
  if (bytes === 0) dfa.failed = true;
  return true;
}

const MIN_PIECE = 1024;
const LEAF = 1024;
const TARGET_MS = 8;
const SHOWN_DETAIL = 200;

interface Pace {
  tick(): boolean;
  pause(): Promise<void>;
}

function clip(s: string): string {
  const shown = escapeControls(s);
  return shown.length > SHOWN_DETAIL ? `${shown.slice(0, SHOWN_DETAIL)}…` : shown;
}

/** Why re2js refused `pattern`, in the caller's terms. */
function refusal(pattern: string, err: unknown): string {
  const raw = (err instanceof Error ? err.message : String(err)).replace(/^error parsing regexp: /, "");
  const detail = clip(raw);
  const unsupported = (what: string) => `regex uses ${what}, which RE2 syntax does not support (regex mode is linear-time: no lookaround, no backreferences): ${detail}`;
  if (/\(\?<[=!]/.test(pattern)) return unsupported("lookbehind ((?<= or (?<!)");
  if (/`\(\?[=!]/.test(raw)) return unsupported("lookahead ((?= or (?!)");
  if (/invalid escape sequence: `\\[1-9k]/.test(raw)) return unsupported("a backreference (\\1 or \\k<name>)");
  if (/`\(\?>/.test(raw) || /repetition operator: `[*+?]\+`/.test(raw)) return unsupported("an atomic group or a possessive quantifier");
  return `regex does not compile: ${detail}`;
}

/**
 * Compile the caller's pattern for line matching, or say why not (a sentence for INVALID_ARGUMENT).
 * case_sensitive=false is RE2's (?i): Unicode simple case folding.
 */
export function compileLineRegex(pattern: string, caseSensitive: boolean): RegexLines | string {
  if (pattern.length > MAX_REGEX_CHARS) return `query must be at most ${MAX_REGEX_CHARS} characters with regex: true`;
  const flags = RE2JS.MULTILINE | (caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE);
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern, flags);
  } catch (err) {
    // The flags are prepended to the pattern as text ("(?m)..."), so re-compile without them
    // for a message that quotes only what the caller wrote.
    try {
      RE2JS.compile(pattern, 0);
    } catch (plain) {
      return refusal(pattern, plain);
    }
    return refusal(pattern, err);
  }
  const size = re.programSize();
  if (size > MAX_REGEX_PROGRAM) return `regex is too large once compiled (${size} instructions, at most ${MAX_REGEX_PROGRAM}); use smaller counted repetitions such as {1,100}`;
  const pieceSafe = !/\\[Az]/.test(pattern) && !/\(\?[A-Za-z]*-/.test(pattern);
  // A leading (?i) is the same as case_sensitive=false (it reaches to the pattern's end).
  const inlineI = pattern.startsWith("(?i)");
  return new RegexLines(re, pieceSafe, caseSensitive && !inlineI ? null : literalFilter(inlineI ? pattern.slice(4) : pattern));
}

/** Literals every match must hold (lowercase ASCII bytes), as an and/or tree; null: no filter. */
type Literals = { all: Literals[] } | { any: Literals[] } | Buffer | null;

/**
 * The required-literal tree of a case-sensitive compile, read from re2js's prefilter (pinned
 * 2.10.0: {type: 0 none | 1 exact | 2 and | 3 or, bytes, subs}); anything else is "no filter".
 */
function literalFilter(pattern: string): Literals {
  let sensitive: RE2JS;
  try {
    sensitive = RE2JS.compile(pattern, RE2JS.MULTILINE);
  } catch {
    return null;
  }
  return literalsOf(sensitive, true);
}

/**
 * `re`'s required-literal tree as re2js built it (null: none, or not in the pinned shape); with
 * `lowered`, ASCII-lowercased, and a non-ASCII literal counts as unknown (see the header).
 */
function literalsOf(re: RE2JS, lowered: boolean): Literals {
  const walk = (p: unknown): Literals => {
    if (typeof p !== "object" || p === null) return null;
    const { type, bytes, subs } = p as { type?: unknown; bytes?: unknown; subs?: unknown };
    if (type === 1 && bytes instanceof Uint8Array && bytes.length > 0) {
      const b = Buffer.from(bytes);
      if (!lowered) return b;
      if (!isAscii(b)) return null;
      asciiLower(b, b);
      return b;
    }
    if ((type !== 2 && type !== 3) || !Array.isArray(subs) || subs.length === 0) return null;
    const parts = subs.map(walk);
    if (type === 2) {
      const known = parts.filter((x) => x !== null);
      return known.length === 0 ? null : { all: known };
    }
    return parts.includes(null) ? null : { any: parts };
  };
  return walk((re as unknown as { re2Input?: { prefilter?: unknown } }).re2Input?.prefilter);
}

/** Whether re2js answers `re` by a plain indexOf (the pattern is one literal): faster than any table. */
function isPlainLiteral(re: RE2JS): boolean {
  return (re as unknown as { re2Input?: { prefixComplete?: unknown } }).re2Input?.prefixComplete === true;
}

/** Table rows one search's ASCII table may hold (ascii-dfa.ts); its bytes come out of the search's DFA budget. */
const ASCII_TABLE_STATES = 128;

function holds(l: Literals, lowered: Buffer): boolean {
  if (l === null) return true;
  if (Buffer.isBuffer(l)) return lowered.indexOf(l) !== -1;
  if ("all" in l) return l.all.every((x) => holds(x, lowered));
  return l.any.some((x) => holds(x, lowered));
}

export class RegexLines {
  /** Lines longer than this are never matches; no piece is longer either (see the header). */
  readonly lineCap: number;
  private piece: number;
  /** The DFA budget this search took from its thread (null: not yet, taken at the first call). */
  private dfaBytes: number | null = null;

  constructor(
    private readonly re: RE2JS,
    /** Whether "a piece of lines tests positive" is implied by "one of its lines matches". */
    private readonly pieceSafe: boolean,
    /** case_sensitive=false: literals a piece must hold (see the header). */
    private readonly literals: Literals = null,
  ) {
    this.lineCap = regexLineCap(re.programSize());
    this.piece = Math.max(MIN_PIECE, Math.min(16 * 1024, this.lineCap));
    this.required = literals === null ? literalsOf(re, false) : null;
  }

  /** Case-sensitive: the literals re2js itself requires, checked before the ASCII table runs (re2js checks them inside test()). */
  private readonly required: Literals;
  /** The ASCII table over this pattern's DFA (ascii-dfa.ts); null until the first test, or when there is none. */
  private ascii: AsciiDfa | null = null;

  /** Instructions of the compiled program (what lineCap is computed from). */
  programSize(): number {
    return this.re.programSize();
  }

  /** The search is over: its DFA budget goes back to the thread (and its DFA may be collected). */
  release(): void {
    if (this.dfaBytes === null) return;
    dfaBytesLeft += this.dfaBytes;
    this.dfaBytes = 0;
    limitDfa(this.re, 0);
    this.ascii = null;
  }

  private budgeted(): RE2JS {
    if (this.dfaBytes === null) {
      this.dfaBytes = Math.min(DFA_SEARCH_BYTES, dfaBytesLeft);
      dfaBytesLeft -= this.dfaBytes;
      // the ASCII table's rows are paid for out of the same budget as re2js's states
      const rows = isPlainLiteral(this.re) ? 0 : Math.min(ASCII_TABLE_STATES, Math.floor(this.dfaBytes / 2 / ASCII_ROW_BYTES));
      this.ascii = rows > 0 ? AsciiDfa.over(this.re, rows) : null;
      limitDfa(this.re, this.dfaBytes - (this.ascii === null ? 0 : rows * ASCII_ROW_BYTES));
    }
    return this.re;
  }

  /** re2js's test() of `bytes`, answered by the ASCII table where it can be. */
  private matches(bytes: Buffer): boolean {
    const re = this.budgeted();
    const table = this.ascii;
    if (table !== null && isAscii(bytes)) {
      if (this.required !== null && !holds(this.required, bytes)) return false;
      const hit = table.test(bytes);
      if (hit !== null) return hit;
    }
    return re.test(bytes);
  }

  /** Tests the ASCII table answered, for tests and benchmarks. */
  asciiAnswered(): number {
    return this.ascii?.answered ?? 0;
  }

  private scratch: Buffer | null = null;

  /** False when the piece cannot hold a match by the case-insensitive literal filter. */
  private mayHold(piece: Buffer): boolean {
    if (this.literals === null || !isAscii(piece)) return true;
    if (this.scratch === null || this.scratch.length < piece.length) this.scratch = Buffer.allocUnsafe(Math.max(piece.length, MAX_REGEX_LINE_BYTES + 1));
    const low = this.scratch.subarray(0, piece.length);
    piece.copy(low);
    asciiLower(low, low);
    return holds(this.literals, low);
  }

  /** For a whole small file in `view` (no NUL): true when no line of it can match (one call). */
  rejects(view: Buffer): boolean {
    if (view.length > this.piece) return false;
    if (!this.mayHold(view)) return true;
    return this.pieceSafe && !this.test(view, true);
  }

  private test(bytes: Buffer, adapt: boolean): boolean {
    const t0 = performance.now();
    const hit = this.matches(bytes);
    if (adapt) this.adapt(bytes.length, performance.now() - t0);
    return hit;
  }

  private adapt(bytes: number, ms: number): void {
    if (ms > TARGET_MS) this.piece = Math.max(MIN_PIECE, this.piece >> 1);
    else if (ms < TARGET_MS / 8 && bytes >= this.piece) this.piece = Math.max(MIN_PIECE, Math.min(this.lineCap, this.piece << 1));
  }

  /**
   * The matching lines of `view` (whole lines; the first is line linesBefore+1), at most `want`,
   * in order. `pace` is checked between engine calls.
   */
  async find(view: Buffer, want: number, linesBefore: number, pace: Pace): Promise<LineHit[]> {
    const hits: LineHit[] = [];
    const count = { at: 0, lines: linesBefore };
    let s = 0;
    while (s < view.length && hits.length < want) {
      if (pace.tick()) await pace.pause();
      let e = s + this.piece >= view.length ? view.length : view.lastIndexOf(10, s + this.piece - 1) + 1;
      if (e <= s) {
        // the line at s is longer than a piece: it is a piece of its own, if short enough to match
        const nl = view.indexOf(10, s);
        e = nl === -1 ? view.length : nl + 1;
        if ((nl === -1 ? e : nl) - s > this.lineCap) {
          s = e;
          continue;
        }
      }
      await this.range(view, s, e, want, hits, count, pace, true);
      s = e;
    }
    return hits;
  }

  private async range(view: Buffer, s: number, e: number, want: number, hits: LineHit[], count: { at: number; lines: number }, pace: Pace, top: boolean): Promise<void> {
    if (top && !this.mayHold(view.subarray(s, e))) return;
    // one line (its \n, if any, last): tested once, as the line, rather than once with its \n first
    const nl = view.indexOf(10, s);
    const oneLine = nl === -1 || nl >= e - 1;
    if (this.pieceSafe && !oneLine) {
      if (!this.test(view.subarray(s, e), top)) return;
      if (e - s > LEAF) {
        const half = (s + e) >>> 1;
        let mid = view.lastIndexOf(10, half - 1) + 1;
        if (mid <= s) mid = view.indexOf(10, half) + 1;
        if (mid > s && mid < e) {
          if (pace.tick()) await pace.pause();
          await this.range(view, s, mid, want, hits, count, pace, false);
          if (hits.length >= want) return;
          if (pace.tick()) await pace.pause();
          await this.range(view, mid, e, want, hits, count, pace, false);
          return;
        }
      }
    }
    const t0 = performance.now();
    let ls = s;
    while (ls < e && hits.length < want) {
      let le = view.indexOf(10, ls);
      let next = le + 1;
      if (le === -1 || le >= e) {
        le = e;
        next = e;
      }
      const line = view.subarray(ls, le);
      if (line.length <= this.lineCap && this.matches(line) && isUtf8(line)) {
        count.lines += countNewlines(view, count.at, ls);
        count.at = ls;
        const { text, truncated } = matchText(line);
        hits.push({ line: count.lines + 1, text, truncated, lineEnd: next, ls, le });
      }
      ls = next;
    }
    if ((!this.pieceSafe || oneLine) && top) this.adapt(e - s, performance.now() - t0);
  }
}
