// search_text's context_lines (docs/tools.md, `search_text`), ripgrep -C style: each match carries
// the lines just before it (`before`) and just after it (`after`), and every line of a file is
// shown at most once. A match's `before` holds only lines after everything already shown for the
// previous match of the same file; its `after` stops before the next matching line (even one past
// `limit`). Context lines are capped at 2 KiB like match text (then context_truncated: true), and
// a line that is not valid UTF-8 is null (never decoded, never guessed).
//
// Memory and speed: only the lines that are shown are decoded. The scanner's buffer is reused, so
// the last n lines of each buffer are kept decoded (at most n × 2 KiB) for a match at the start of
// the next one; a match's `after` may continue into the next buffer. A NUL cut found later drops
// the context lines past the cut along with the matches past it.

import type { FileMatch } from "./scan-types.ts";
import { lineText, type LineHit } from "./scan-text.ts";

/** Largest context_lines a caller may ask for. */
export const MAX_CONTEXT_LINES = 10;

interface CtxLine {
  line: number;
  text: string | null;
  truncated: boolean;
  /** File offset just past the line's \n: a NUL cut drops the line when this is beyond the cut. */
  endAbs: number;
}

interface Slot {
  before: CtxLine[];
  after: CtxLine[];
}

function ctxLine(bytes: Uint8Array, line: number, endAbs: number): CtxLine {
  const { text, truncated } = lineText(bytes);
  return { line, text, truncated, endAbs };
}

export class ContextLines {
  /** The last n lines of earlier buffers, ascending. */
  private ring: CtxLine[] = [];
  /** Highest line number shown so far (as a match or as context) in this file. */
  private shown = 0;
  private slots = new Map<FileMatch, Slot>();
  /** The previous match's slot while its `after` may still grow. */
  private open: Slot | null = null;

  constructor(readonly n: number) {}

  reset(): void {
    this.ring = [];
    this.shown = 0;
    this.slots.clear();
    this.open = null;
  }

  /**
   * One buffer of whole lines (view[0] starts line `first`, at file offset `base`) and the matches
   * found in it, in order (`made[i]` is the match built from `hits[i]`).
   */
  region(view: Buffer, base: number, first: number, hits: LineHit[], made: FileMatch[]): void {
    let pos = 0;
    let lineNo = first;
    const follow = (upTo: number) => {
      while (this.open !== null && this.open.after.length < this.n && lineNo < upTo && pos < view.length) {
        const nl = view.indexOf(10, pos);
        const le = nl === -1 ? view.length : nl;
        const next = nl === -1 ? view.length : nl + 1;
        this.open.after.push(ctxLine(view.subarray(pos, le), lineNo, base + next));
        this.shown = lineNo;
        pos = next;
        lineNo++;
      }
    };
    hits.forEach((h, i) => {
      follow(h.line);
      const from = Math.max(this.shown + 1, h.line - this.n);
      const before: CtxLine[] = [];
      let s = h.ls;
      let k = h.line - 1;
      for (; k >= from && k >= first; k--) {
        // s > 0 here: view[s - 1] is the \n that ends line k
        const ps = s - 1 === 0 ? 0 : view.lastIndexOf(10, s - 2) + 1;
        before.unshift(ctxLine(view.subarray(ps, s - 1), k, base + s));
        s = ps;
      }
      this.fromRing(before, k, from);
      this.attach(made[i] as FileMatch, before, h.line);
      pos = h.lineEnd;
      lineNo = h.line + 1;
    });
    follow(Number.POSITIVE_INFINITY);
  }

  /**
   * The buffer is about to be reused: keep its last lines (it ends with a \n, its last line is
   * number `last`) for a match at the start of the next buffer.
   */
  carry(view: Buffer, base: number, last: number): void {
    const tail: CtxLine[] = [];
    let e = view.length;
    for (let k = last; tail.length < this.n && e > 0 && k > this.shown; k--) {
      const le = e - 1;
      const ls = le === 0 ? 0 : view.lastIndexOf(10, le - 1) + 1;
      tail.unshift(ctxLine(view.subarray(ls, le), k, base + e));
      e = ls;
    }
    this.ring = this.ring.concat(tail).slice(-this.n);
  }

  /** A line longer than the buffer, streamed: `text` is its capped head (null when undecodable); `made` when it matched. */
  single(lineNo: number, text: string | null, endAbs: number, made: FileMatch | null): void {
    const l: CtxLine = { line: lineNo, text, truncated: text !== null, endAbs };
    if (made !== null) {
      const from = Math.max(this.shown + 1, lineNo - this.n);
      const before: CtxLine[] = [];
      this.fromRing(before, lineNo - 1, from);
      this.attach(made, before, lineNo);
    } else if (this.open !== null && this.open.after.length < this.n) {
      this.open.after.push(l);
      this.shown = lineNo;
    }
    this.ring = this.ring.concat(l).slice(-this.n);
  }

  /** Prepend ring lines k, k-1, ... down to `from` to `before`. */
  private fromRing(before: CtxLine[], k: number, from: number): void {
    for (let j = this.ring.length - 1; j >= 0 && k >= from; j--) {
      const r = this.ring[j] as CtxLine;
      if (r.line !== k) continue;
      before.unshift(r);
      k--;
    }
  }

  private attach(m: FileMatch, before: CtxLine[], line: number): void {
    const slot = { before, after: [] };
    this.slots.set(m, slot);
    this.open = slot;
    this.shown = line;
  }

  /** The file's surviving matches (already NUL-cut at `cut`) with their context as output fields. */
  finish(matches: FileMatch[], cut: number): FileMatch[] {
    return matches.map((m) => {
      const slot = this.slots.get(m) ?? { before: [], after: [] };
      const after = slot.after.filter((l) => l.endAbs <= cut);
      const truncated = slot.before.some((l) => l.truncated) || after.some((l) => l.truncated);
      return { ...m, before: slot.before.map((l) => l.text), after: after.map((l) => l.text), ...(truncated ? { context_truncated: true as const } : {}) };
    });
  }
}
