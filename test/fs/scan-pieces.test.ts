// The scanner checks and folds long lines in 64 KiB pieces (to bound serve's memory): a match
// straddling a piece boundary is still found, a multi-byte character split by a boundary is
// still valid, and a line with an undecodable byte anywhere — before or after the match, in a
// line longer than the 1 MiB buffer or shorter — still never matches.
import { describe, expect, test } from "bun:test";
import { isUtf8 } from "node:buffer";
import { Utf8Pieces } from "../../src/fs/search/scan-text.ts";
import { single, write } from "./helpers.ts";

const PIECE = 64 * 1024;

/** `len` bytes of 2-byte characters, with `needle` (ASCII) starting at byte `at`. */
function lineWith(len: number, needle: string, at: number): Buffer {
  const b = Buffer.alloc(len);
  for (let i = 0; i + 1 < len; i += 2) b.set([0xc3, 0xa9], i); // é
  if (len % 2 === 1) b[len - 1] = 0x61;
  b.write(needle, at, "latin1");
  return b;
}

async function search(content: Buffer, query: string) {
  const { svc, root } = single();
  write(root, "f.txt", content);
  return svc.searchText({ workdir: "w", query, case_sensitive: false });
}

describe("long lines are folded and validated piece by piece", () => {
  for (const len of [300 * 1024, 3 * 1024 * 1024]) {
    const kind = len > 1024 * 1024 ? "longer than the buffer" : "shorter than the buffer";
    test(`a case-insensitive match across a 64 KiB boundary is found (${kind})`, async () => {
      // Even offset keeps the é pairs aligned; the needle spans bytes PIECE*3-4 .. PIECE*3+2.
      const line = lineWith(len, "NeEdLe", PIECE * 3 - 4);
      const r = await search(Buffer.concat([line, Buffer.from("\n")]), "needle");
      expect(r.matches.map((m) => m.line)).toEqual([1]);
    });

    test(`an undecodable byte after the match still means no match (${kind})`, async () => {
      const line = lineWith(len, "needle", 10);
      line[len - 100] = 0xff;
      const r = await search(Buffer.concat([line, Buffer.from("\nneedle ok\n")]), "needle");
      expect(r.matches.map((m) => m.line)).toEqual([2]);
    });
  }

  test("Utf8Pieces + isUtf8 agree with a fatal decoder on random streams and random cuts", () => {
    const atoms = [[0x41], [0xc3, 0xa9], [0xe6, 0x97, 0xa5], [0xf0, 0x9f, 0x98, 0x80], [0x80], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe6, 0x97], [0xff]];
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return (seed >>> 16) % n;
    };
    let invalid = 0;
    for (let t = 0; t < 5000; t++) {
      const validOnly = rnd(2) === 0;
      const bytes = Buffer.from(Array.from({ length: rnd(12) }, () => atoms[rnd(validOnly ? 4 : atoms.length)] as number[]).flat());
      let want: string | null;
      try {
        want = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
      } catch {
        want = null;
      }
      const pieces = new Utf8Pieces();
      let got: string | null = "";
      for (let off = 0; off < bytes.length || off === 0; ) {
        const end = Math.min(bytes.length, off + 1 + rnd(4));
        const piece = pieces.next(bytes.subarray(off, end), end >= bytes.length);
        if (!isUtf8(piece)) {
          got = null;
          break;
        }
        got += piece.toString("utf8");
        off = end;
        if (bytes.length === 0) break;
      }
      if (want === null) invalid++;
      expect(got).toBe(want);
    }
    expect(invalid).toBeGreaterThan(1000); // the generator really makes bad streams
  });
});
