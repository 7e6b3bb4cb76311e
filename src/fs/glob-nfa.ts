// The glob matcher's core: the token list both dialects compile to (src/fs/glob.ts) and the NFA
// that matches it by state-set simulation, one code point at a time, without backtracking. Each
// state is visited at most once per code point, so a test costs at most
// (states) x (code points + 1) visits; states <= pattern code points + 1.

export const SLASH = 47;

/** Observable work counter: NFA state visits, plus one per UTF-16 unit of the subject on the string fast paths (tests bound it). */
export const globWork = { steps: 0 };

export interface GlobMatcher {
  test(subject: string): boolean;
}

export const LIT = 0; // one code point
export const ANY = 1; // `?`
export const STAR = 2; // `*`
export const CLASS = 3; // `[...]`
export const ALL = 4; // `[\s\S]*`: trailing `**`
export const DIRS = 5; // `(?:[^/]*/)*`: `**/`
export const OPT_SUB = 6; // `(?:/[\s\S]*)?`: trailing `/**` of a deny rule (the directory itself too)

export interface Token {
  k: number;
  /** LIT: the code point. */
  c?: number;
  /** ANY/STAR/negated CLASS: refuses `/` (path dialect). */
  noSlash?: boolean;
  /** CLASS: [lo, hi] pairs; an empty list never matches unless negated. */
  ranges?: number[];
  negate?: boolean;
}

/** The literal run tokens[from..to) as a string, or null if any token is not a literal. */
export function literal(tokens: Token[], from: number, to: number): string | null {
  let s = "";
  for (let i = from; i < to; i++) {
    const t = tokens[i] as Token;
    if (t.k !== LIT) return null;
    s += String.fromCodePoint(t.c as number);
  }
  return s;
}

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

export class Nfa implements GlobMatcher {
  private readonly kind: Int32Array;
  private readonly toks: Token[];
  /** Epsilon successor of each state, -1 for none. */
  private readonly eps: Int32Array;
  private readonly accept: number;
  private readonly seen: Int32Array;
  private cur: Int32Array;
  private nxt: Int32Array;
  private stamp = 0;
  /** Literal runs every match starts and ends with: a cheap, sound pre-filter. */
  private readonly head: string;
  private readonly tail: string;

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
    let h = 0;
    while (h < tokens.length && (tokens[h] as Token).k === LIT) h++;
    let t = tokens.length;
    while (t > h && (tokens[t - 1] as Token).k === LIT) t--;
    this.head = literal(tokens, 0, h) as string;
    this.tail = literal(tokens, t, tokens.length) as string;
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
    // UTF-16 encoding is concatenative, so a subject whose code units do not start/end with the
    // literal runs cannot match by code point either.
    if (!subject.startsWith(this.head) || !subject.endsWith(this.tail)) {
      globWork.steps += 1;
      return false;
    }
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

