// The byte scanner behind search_text: one reusable buffer, raw-byte search with Buffer.indexOf
// (memmem), per-line UTF-8 decoding of candidate lines only, the 64 KiB NUL rule, streamed lines
// longer than the buffer, and a 2 KiB UTF-8-safe cap on each match's text. Regex mode
// (scan-regex.ts) and context lines (scan-context.ts) plug into the same buffer loop.

import { isAscii, isUtf8 } from "node:buffer";
import { scanIo, type OpenFileFacts } from "../../../platform/fs/scan-io.ts";
import { foldAnchors, mayHold, type FoldAnchors } from "./scan-anchor.ts";
import type { ContextLines } from "./scan-context.ts";
import type { RegexLines } from "./scan-regex.ts";
import { asciiLower, capHead, countNewlines, fatalUtf8, fold, matchText, TEXT_CAP, tryDecode, Utf8Pieces, type LineHit } from "./scan-text.ts";
import type { FileMatch, Pace, SearchMatch } from "./scan-types.ts";

const BLOCK = 64 * 1024;
export const BUFFER_BYTES = 1024 * 1024;
const FOLD_SLICE = 64 * 1024;
const GC_HINT_CHARS = 4 * 1024 * 1024;

export class Scanner {
  private readonly needle: Buffer;
  private readonly folded: string;
  /** The folded query as bytes when it is pure ASCII (enables the lowercase fast path). */
  private readonly asciiNeedle: Buffer | null;
  /** Case-insensitive with an ASCII query: the spellings that rule a buffer out (scan-anchor.ts). */
  private readonly anchors: FoldAnchors | null;
  private lowered: Buffer | null = null;
  private countBuf: Buffer | null = null;
  private foldedSinceGc = 0;

  constructor(
    readonly query: string,
    readonly caseSensitive: boolean,
    /** Regex mode: the compiled pattern replaces the literal needle. */
    private readonly regex: RegexLines | null = null,
    /** context_lines > 0: collects each match's before/after lines. */
    private readonly context: ContextLines | null = null,
    /** The read buffer; a thread that runs one scan at a time (the search worker) shares one among its scanners. */
    readonly buf: Buffer = Buffer.allocUnsafe(BUFFER_BYTES),
  ) {
    this.needle = Buffer.from(query, "utf8");
    this.folded = fold(query);
    const foldedBytes = Buffer.from(this.folded, "utf8");
    this.asciiNeedle = isAscii(foldedBytes) ? foldedBytes : null;
    this.anchors = !caseSensitive && regex === null && this.asciiNeedle !== null ? foldAnchors(this.asciiNeedle) : null;
  }

  /** The search is over: what its regex holds for the thread (its DFA budget) goes back. */
  release(): void {
    this.regex?.release();
  }

  /**
   * Scan one open regular file. `want` is how many matches are still useful (limit+1 - found).
   * Returns the file's matches (already NUL-cut): synchronously when one read settles it (the
   * common case, no promise per file), else a promise from the full scan, which checks `pace`
   * after every buffer so a 50 MiB file cannot hold the event loop or outlive the deadline.
   */
  scanFile(fd: number, size: number, path: string, want: number, pace: Pace): FileMatch[] | Promise<FileMatch[]> {
    const B = this.buf;
    // Fast path for the common case: the whole file arrives in one read and holds no candidate
    // (settles()); nothing else needs doing.
    if (this.hasFastPath() && size < B.length) {
      const n = scanIo.readAt(fd, B, 0, B.length, 0);
      if (n >= size && this.settles(B.subarray(0, n))) return [];
      return this.scanAll(fd, size, path, want, pace, n);
    }
    return this.scanAll(fd, size, path, want, pace, -1);
  }

  /**
   * Scan an open file the walk saw as a regular file, without an fstat first: what scanFile does,
   * one syscall fewer per file (statx was ~5% of a search's CPU). One read of up to a buffer less
   * one byte comes first; coming back short, it reached the end of the file, so the file's size is
   * known without asking. Only a file that may hold a match, fills that read, or fails it is
   * fstat'ed into `facts`, and it is scanned only if it is a regular file of at most `maxFile`
   * bytes; otherwise the answer is [] (nothing found, nothing counted), as if it had been
   * fstat'ed first. A file that settles on its one read needs no fstat: whatever it is, it
   * yields no match. (Where the entry was swapped for a FIFO or a directory after the walk saw
   * it, the read fails, ESPIPE or EISDIR, and the fstat says so.)
   */
  scanUnstatted(fd: number, maxFile: number, path: string, want: number, pace: Pace, facts: OpenFileFacts): FileMatch[] | Promise<FileMatch[]> {
    const B = this.buf;
    let n: number;
    try {
      n = scanIo.readAt(fd, B, 0, B.length - 1, 0);
    } catch (err) {
      if (this.notSearchable(fd, facts, maxFile)) return [];
      throw err;
    }
    if (n === B.length - 1) {
      // maybe longer than the read: its size decides
      if (this.notSearchable(fd, facts, maxFile)) return [];
      return this.scanAll(fd, facts.size, path, want, pace, n);
    }
    if (n > maxFile) return [];
    if (this.hasFastPath() && this.settles(B.subarray(0, n))) return [];
    if (this.notSearchable(fd, facts, maxFile)) return [];
    return this.scanAll(fd, n, path, want, pace, n);
  }

  /** fstat `fd` into `facts`: not a regular file, or larger than `maxFile`. */
  private notSearchable(fd: number, facts: OpenFileFacts, maxFile: number): boolean {
    scanIo.facts(fd, facts);
    return !facts.regular || facts.size > maxFile;
  }

  /** A file wholly in the buffer can be settled by one check of it (settles()). */
  private hasFastPath(): boolean {
    return this.caseSensitive || this.regex !== null || this.anchors !== null;
  }

  /**
   * `view` (a whole file) holds no candidate for the needle, or, holding no NUL, none for the
   * regex, or, case-insensitive, is ASCII text with no spelling of the query's anchor
   * (scan-anchor.ts). A NUL only ever cuts matches away, so a fixed string absent from the whole
   * file skips the NUL pass (a second pass over every byte searched).
   */
  private settles(view: Buffer): boolean {
    return this.regex !== null ? view.indexOf(0) === -1 && this.regex.rejects(view) : this.caseSensitive ? view.indexOf(this.needle) === -1 : this.foldedAbsent(view);
  }

  /** The full scan; `prefilled` is how many bytes the fast path already read into the buffer (-1: none). */
  private async scanAll(fd: number, size: number, path: string, want: number, pace: Pace, prefilledBytes: number): Promise<FileMatch[]> {
    const B = this.buf;
    const out: FileMatch[] = [];
    let filled = 0; // bytes held in B
    let base = 0; // file offset of B[0]
    let filePos = 0;
    let countedPos = 0; // newlines before B[countedPos] are counted in linesBefore
    let linesBefore = 0;
    // Fixed-string search without context: the newlines of bytes dropped from the buffer are
    // counted only once a later match needs its line number (re-read from the file then); a file
    // without a match in its later buffers never pays for a count (~a tenth of a search's CPU).
    const lazy = this.regex === null && this.context === null;
    let countedAbs = 0; // lazy: linesBefore counts the newlines of the file's bytes before this offset
    const catchUp = () => {
      if (countedAbs < base) linesBefore += this.countFileNewlines(fd, countedAbs, base);
      countedAbs = base;
    };
    let cut = Number.POSITIVE_INFINITY;
    let matching = true;
    let prefilled = false;
    const ctx = this.context;
    ctx?.reset();
    if (prefilledBytes >= 0) {
      filled = prefilledBytes;
      filePos = prefilledBytes;
      prefilled = true;
    }
    for (;;) {
      if (pace.tick()) await pace.pause();
      if (filled === B.length) {
        // One line fills the whole buffer: stream it without holding it.
        // (a regex never matches a line this long: see scan-regex.ts)
        if (lazy) catchUp();
        const r = await this.scanLongLine(fd, filePos, base, linesBefore + 1, matching && this.regex === null, pace);
        let made: FileMatch | null = null;
        if (r.match !== null && r.lineEndAbs <= cut) out.push((made = { ...r.match, path, lineEndAbs: r.lineEndAbs }));
        if (r.nulAbs === -1) ctx?.single(linesBefore + 1, r.valid ? capHead(r.head) : null, r.lineEndAbs, made);
        if (r.nulAbs !== -1) {
          cut = Math.min(cut, Math.floor(r.nulAbs / BLOCK) * BLOCK);
          break;
        }
        if (r.eof) break;
        // r.rest holds the bytes after the line's \n, already copied to B[0..]
        filePos = r.filePos;
        base = r.restBase;
        filled = r.restLen;
        countedPos = 0;
        linesBefore += 1;
        countedAbs = base;
        if (out.length >= want) matching = false;
        continue;
      }
      let n: number;
      let newStart = filled;
      if (prefilled) {
        // bytes already read by the fast path above
        prefilled = false;
        n = filled;
        newStart = 0;
        filled = 0;
        filePos = 0;
      } else n = scanIo.readAt(fd, B, filled, B.length - filled, filePos);
      // Reaching the fstat size counts as EOF: it saves a read and the newline bookkeeping that
      // only multi-buffer files need (a file growing meanwhile is searched up to its old size).
      const eof = n === 0 || filePos + n >= size;
      filePos += n;
      filled += n;
      let procEnd: number;
      const nul = n > 0 ? B.subarray(0, filled).indexOf(0, newStart) : -1;
      if (nul !== -1) {
        cut = Math.min(cut, Math.floor((base + nul) / BLOCK) * BLOCK);
        procEnd = Math.max(0, Math.min(filled, cut - base));
        // only whole lines before the cut count
        const lastNl = procEnd > 0 ? B.lastIndexOf(10, procEnd - 1) : -1;
        procEnd = lastNl + 1;
      } else if (eof) {
        procEnd = filled;
      } else {
        const lastNl = B.lastIndexOf(10, filled - 1);
        procEnd = lastNl === -1 ? 0 : lastNl + 1;
        // no complete line yet: read more, or (buffer full) take the long-line path next turn
        if (procEnd === 0) continue;
      }
      if (matching && procEnd > 0) {
        const view = B.subarray(0, procEnd);
        const left = want - out.length;
        const found =
          this.regex !== null ? await this.regex.find(view, left, linesBefore, pace) : this.caseSensitive ? this.matchBytes(view, left, countedPos, linesBefore) : this.matchFolded(view, left, countedPos, linesBefore);
        if (lazy && found.length > 0 && countedAbs < base) {
          // numbered from the stale count: shift by the newlines not counted yet
          const before = linesBefore;
          catchUp();
          for (const m of found) m.line += linesBefore - before;
        }
        const made = found.map((m): FileMatch => ({ path, line: m.line, text: m.text, ...(m.truncated ? { text_truncated: true as const } : {}), lineEndAbs: base + m.lineEnd }));
        out.push(...made);
        ctx?.region(view, base, linesBefore + 1, found, made);
        if (out.length >= want) matching = false;
      }
      if (nul !== -1) break;
      if (eof) break;
      if (!matching) {
        // Enough matches: only a later NUL could still retract some, so look for NUL alone.
        cut = Math.min(cut, this.findNulFrom(fd, base + filled));
        break;
      }
      // Keep the partial last line; count the lines we drop so later line numbers stay right.
      if (!lazy) linesBefore += countNewlines(B.subarray(0, procEnd), countedPos, procEnd);
      ctx?.carry(B.subarray(0, procEnd), base, linesBefore);
      B.copyWithin(0, procEnd, filled);
      base += procEnd;
      filled -= procEnd;
      countedPos = 0;
    }
    const kept = cut === Number.POSITIVE_INFINITY ? out : out.filter((m) => m.lineEndAbs <= cut);
    return ctx === null ? kept : ctx.finish(kept, cut);
  }

  /** Newlines in the file's bytes [from, to), read again through a small buffer of its own (B holds the scan's bytes). */
  private countFileNewlines(fd: number, from: number, to: number): number {
    this.countBuf ??= Buffer.allocUnsafe(64 * 1024);
    const C = this.countBuf;
    let n = 0;
    for (let p = from; p < to; ) {
      const got = scanIo.readAt(fd, C, 0, Math.min(C.length, to - p), p);
      if (got === 0) break;
      n += countNewlines(C, 0, got);
      p += got;
    }
    return n;
  }

  private findNulFrom(fd: number, pos: number): number {
    const B = this.buf;
    let p = pos;
    for (;;) {
      const n = scanIo.readAt(fd, B, 0, B.length, p);
      if (n === 0) return Number.POSITIVE_INFINITY;
      const i = B.subarray(0, n).indexOf(0);
      if (i !== -1) return Math.floor((p + i) / BLOCK) * BLOCK;
      p += n;
    }
  }

  /** Exact search of `needle` in `hay`; line text comes from `view` (same offsets, original bytes). */
  private matchBytes(view: Buffer, want: number, countedFrom: number, linesBefore: number, hay: Buffer = view, needle: Buffer = this.needle) {
    const found: LineHit[] = [];
    let counted = countedFrom;
    let lines = linesBefore;
    let from = 0;
    while (found.length < want) {
      const i = hay.indexOf(needle, from);
      if (i === -1) break;
      const ls = i === 0 ? 0 : view.lastIndexOf(10, i - 1) + 1;
      let le = view.indexOf(10, i);
      const next = le === -1 ? view.length : le + 1;
      if (le === -1) le = view.length;
      lines += countNewlines(view, counted, ls);
      counted = ls;
      const line = view.subarray(ls, le);
      if (tryDecode(line) !== null) {
        const { text, truncated } = matchText(line);
        found.push({ line: lines + 1, text, truncated, lineEnd: next, ls, le });
      }
      from = next;
    }
    return found;
  }

  /**
   * Unicode folding makes three short-lived strings per character searched. The collector runs
   * by allocation volume relative to the heap, so a search through megabytes of non-ASCII text
   * let serve's RSS climb ~50 MB above idle before it did; a collection hint every
   * GC_HINT_CHARS folded characters keeps that garbage from piling up. (Not on the ASCII paths.)
   */
  private noteFolded(chars: number): void {
    this.foldedSinceGc += chars;
    if (this.foldedSinceGc < GC_HINT_CHARS) return;
    this.foldedSinceGc = 0;
    Bun.gc(true);
  }

  /**
   * Whether a line is valid UTF-8 and contains the folded query. A long line is decoded and folded
   * FOLD_SLICE bytes at a time (with an overlap for a match across slices): folding a ~1 MB line
   * whole makes several MB of short-lived strings per line, and serve's RSS spiked with them.
   */
  private lineMatchesFolded(line: Buffer): boolean {
    if (!isUtf8(line)) return false;
    const pieces = new Utf8Pieces();
    let tail = "";
    for (let off = 0; off < line.length; off += FOLD_SLICE) {
      const window = tail + fatalUtf8.decode(pieces.next(line.subarray(off, off + FOLD_SLICE), off + FOLD_SLICE >= line.length));
      this.noteFolded(window.length);
      if (fold(window).includes(this.folded)) return true;
      tail = window.slice(-Math.max(1, this.query.length * 2));
    }
    return false;
  }

  /** Case-insensitive, ASCII query: the buffer holds no spelling of the query's anchor, so no match. */
  private foldedAbsent(view: Buffer): boolean {
    const a = this.anchors;
    return a !== null && (a.anyText || isAscii(view)) && !mayHold(view, a.spellings);
  }

  private matchFolded(view: Buffer, want: number, countedFrom: number, linesBefore: number) {
    if (this.foldedAbsent(view)) return [];
    // Pure-ASCII text and an ASCII folded query: case folding is ASCII lowercasing, so lowercase
    // the bytes once (SWAR) and search them raw. Anything else takes the per-line Unicode path.
    if (this.asciiNeedle !== null && isAscii(view)) {
      if (this.lowered === null) this.lowered = Buffer.allocUnsafe(this.buf.length);
      asciiLower(view, this.lowered);
      return this.matchBytes(view, want, countedFrom, linesBefore, this.lowered.subarray(0, view.length), this.asciiNeedle);
    }
    const found: LineHit[] = [];
    let lines = linesBefore + countNewlines(view, countedFrom, 0);
    let ls = 0;
    // Line by line: each line is decoded on its own so one bad line cannot hide the others.
    while (ls < view.length && found.length < want) {
      let le = view.indexOf(10, ls);
      const next = le === -1 ? view.length : le + 1;
      if (le === -1) le = view.length;
      const line = view.subarray(ls, le);
      if (this.lineMatchesFolded(line)) {
        const { text, truncated } = matchText(line);
        found.push({ line: lines + 1, text, truncated, lineEnd: next, ls, le });
      }
      lines++;
      ls = next;
    }
    return found;
  }

  /**
   * A line longer than the buffer: stream it, tracking UTF-8 validity and the needle across chunk
   * boundaries, keeping only its first 2 KiB for the match (or context) text.
   */
  private async scanLongLine(fd: number, filePos: number, base: number, lineNo: number, matching: boolean, pace: Pace) {
    const B = this.buf;
    const head = Buffer.from(B.subarray(0, TEXT_CAP + 4));
    const pieces = new Utf8Pieces();
    let valid = true;
    let hit = false;
    let tail = Buffer.alloc(0);
    let tailText = "";
    let pos = filePos;
    let chunkBase = base;
    let chunkLen = B.length;
    const overlap = Math.max(0, this.needle.length - 1);
    const consume = (part: Buffer, final: boolean) => {
      // Checked (and, case-insensitively, folded) FOLD_SLICE bytes at a time, validity with
      // isUtf8 rather than by decoding: decoding and folding whole 1 MiB chunks made several MB
      // of short-lived strings per chunk and let serve's RSS spike far past the buffer's cost.
      for (let off = 0; valid && (off < part.length || (final && off === 0)); off += FOLD_SLICE) {
        const piece = pieces.next(part.subarray(off, off + FOLD_SLICE), final && off + FOLD_SLICE >= part.length);
        if (!isUtf8(piece)) {
          valid = false;
          break;
        }
        if (matching && !this.caseSensitive && !hit) {
          const window = tailText + fatalUtf8.decode(piece);
          this.noteFolded(window.length);
          if (fold(window).includes(this.folded)) hit = true;
          tailText = window.slice(-Math.max(1, this.query.length * 2));
        }
      }
      if (matching && this.caseSensitive && !hit) {
        const window = Buffer.concat([tail, part]);
        if (window.indexOf(this.needle) !== -1) hit = true;
        tail = Buffer.from(window.subarray(Math.max(0, window.length - overlap)));
      }
    };
    const matchOf = (): SearchMatch | null => (valid && hit ? { path: "", line: lineNo, text: capHead(head), text_truncated: true } : null);
    for (;;) {
      if (pace.tick()) await pace.pause();
      const chunk = B.subarray(0, chunkLen);
      const nul = chunk.indexOf(0);
      const nl = chunk.indexOf(10);
      if (nul !== -1 && (nl === -1 || nul < nl)) return { match: null, valid: false, head, lineEndAbs: 0, nulAbs: chunkBase + nul, eof: false, filePos: pos, restBase: 0, restLen: 0 };
      if (nl !== -1) {
        consume(chunk.subarray(0, nl), true);
        const lineEndAbs = chunkBase + nl + 1;
        const restLen = chunkLen - nl - 1;
        B.copyWithin(0, nl + 1, chunkLen);
        return { match: matchOf(), valid, head, lineEndAbs, nulAbs: -1, eof: false, filePos: pos, restBase: lineEndAbs, restLen };
      }
      consume(chunk, false);
      chunkBase += chunkLen;
      const n = scanIo.readAt(fd, B, 0, B.length, pos);
      if (n === 0) {
        consume(Buffer.alloc(0), true);
        return { match: matchOf(), valid, head, lineEndAbs: chunkBase, nulAbs: -1, eof: true, filePos: pos, restBase: 0, restLen: 0 };
      }
      pos += n;
      chunkLen = n;
    }
  }
}

