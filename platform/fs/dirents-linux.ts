// Directory entries straight from getdents64 on the held descriptor, one kernel buffer at a time.
// node:fs.readdirSync materialises every name of a directory at once (and Bun builds each string
// lazily, so touching it costs again); here a 300 000-entry directory costs one reused 256 KiB
// buffer plus whatever the caller keeps. Names are decoded exactly as readdirSync decodes them
// (UTF-8 with U+FFFD for invalid sequences; an all-ASCII name takes a Latin-1 fast path, the same
// string), so listings do not change with the reader.

import * as sys from "./linux.ts";
import type { DirEntryInfo } from "./native-types.ts";

type Kind = DirEntryInfo["kind"];

/** d_type → kind; DT_UNKNOWN (0) and anything unlisted (DT_WHT) is "unknown", as with a Dirent. */
const KIND: Kind[] = [];
KIND[1] = "other"; // DT_FIFO
KIND[2] = "other"; // DT_CHR
KIND[4] = "directory"; // DT_DIR
KIND[6] = "other"; // DT_BLK
KIND[8] = "file"; // DT_REG
KIND[10] = "symlink"; // DT_LNK
KIND[12] = "other"; // DT_SOCK

// One buffer for every listing (allocated on first use): each next() fills and parses it
// completely before returning, on the one JS thread, so interleaved listings (paused walks) never
// see each other's bytes.
let shared: NameBuffer | null = null;
/** Bun's Buffer has Node's latin1Slice (one byte, one code unit), which @types/node does not declare. */
type NameBuffer = Buffer & { latin1Slice(start: number, end: number): string };
const DOT = 0x2e;

export class DirentReader {
  private done = false;

  /** `rewind` false: the descriptor was just opened and never read (a walk's), so it is at the start already. */
  constructor(
    private readonly fd: number,
    rewind = true,
  ) {
    if (rewind) sys.rewindDir(fd);
  }

  /**
   * One getdents64 call, each entry (never "." or "..") handed to `each`, which may return false
   * to end the listing there; false once the directory is exhausted (or ended).
   */
  next(each: (name: string, kind: Kind) => boolean | void): boolean {
    if (this.done) return false;
    shared ??= Buffer.allocUnsafe(256 * 1024) as NameBuffer;
    const BUF = shared;
    const n = sys.getdents64(this.fd, BUF);
    if (n === 0) {
      this.done = true;
      return false;
    }
    for (let pos = 0; pos < n; ) {
      const reclen = BUF.readUInt16LE(pos + 16);
      const type = BUF[pos + 18] as number;
      const start = pos + 19;
      const recEnd = pos + reclen;
      pos = recEnd;
      // find the NUL and whether any byte is outside ASCII in one pass
      let end = start;
      let high = 0;
      for (; end < recEnd; end++) {
        const b = BUF[end] as number;
        if (b === 0) break;
        high |= b;
      }
      const len = end - start;
      if (BUF[start] === DOT && (len === 1 || (len === 2 && BUF[start + 1] === DOT))) continue;
      // an ASCII name decodes the same as Latin-1, which skips UTF-8 validation (~a third of the decoding time)
      const name = high < 0x80 ? BUF.latin1Slice(start, end) : BUF.toString("utf8", start, end);
      if (each(name, KIND[type] ?? "unknown") === false) {
        this.done = true;
        return false;
      }
    }
    return true;
  }
}

/** Up to `max` names from the start of a directory, decoding no more than that. */
export function firstNames(fd: number, max: number): string[] {
  const out: string[] = [];
  if (max <= 0) return out;
  const reader = new DirentReader(fd);
  while (reader.next((name) => out.push(name) < max));
  return out;
}
