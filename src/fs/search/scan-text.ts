// Byte and line helpers the search scanners share (scan.ts, scan-regex.ts, scan-context.ts): the
// 2 KiB UTF-8-safe text cap, strict decoding, newline counting over raw bytes, case folding
// (ASCII lowercasing four bytes at a time) and cutting a byte stream at UTF-8 boundaries.

import { isUtf8 } from "node:buffer";

export const TEXT_CAP = 2048;
export const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The first TEXT_CAP bytes of `bytes` cut back to a UTF-8 boundary, decoded (the bytes must be valid UTF-8). */
export function capHead(bytes: Uint8Array): string {
  let end = TEXT_CAP;
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return fatalUtf8.decode(bytes.subarray(0, end));
}

/** Line text for a match: the line without its \n, capped at 2 KiB on a UTF-8 boundary. */
export function matchText(line: Uint8Array): { text: string; truncated: boolean } {
  if (line.length <= TEXT_CAP) return { text: fatalUtf8.decode(line), truncated: false };
  return { text: capHead(line), truncated: true };
}

/** A context line: its capped text, or null when the line is not valid UTF-8. */
export function lineText(line: Uint8Array): { text: string | null; truncated: boolean } {
  if (!isUtf8(line)) return { text: null, truncated: false };
  return matchText(line);
}

export function tryDecode(bytes: Uint8Array): string | null {
  try {
    return fatalUtf8.decode(bytes);
  } catch {
    return null;
  }
}

export function countNewlines(view: Buffer, from: number, to: number): number {
  let n = 0;
  let i = view.indexOf(10, from);
  while (i !== -1 && i < to) {
    n++;
    i = view.indexOf(10, i + 1);
  }
  return n;
}

/** One matching line found in a view of whole lines: offsets are view-relative; lineEnd is after its \n. */
export interface LineHit {
  line: number;
  text: string;
  truncated: boolean;
  lineEnd: number;
  ls: number;
  le: number;
}

/** Simple-case-folding approximation shared by query and text. */
export function fold(s: string): string {
  return s.toUpperCase().toLowerCase();
}

/**
 * ASCII lowercase of `src` into `dst`, four bytes at a time (SWAR: set bit 5 of every byte in
 * 'A'..'Z'). `src` must be pure ASCII; both buffers start 4-byte aligned (dedicated allocations).
 */
export function asciiLower(src: Buffer, dst: Buffer): void {
  const n = src.length;
  const words = n >>> 2;
  if (src.byteOffset % 4 === 0 && dst.byteOffset % 4 === 0) {
    const s = new Uint32Array(src.buffer, src.byteOffset, words);
    const o = new Uint32Array(dst.buffer, dst.byteOffset, words);
    for (let i = 0; i < words; i++) {
      const w = s[i] as number;
      const low7 = w & 0x7f7f7f7f;
      const geA = (low7 + 0x3f3f3f3f) & 0x80808080;
      const gtZ = (low7 + 0x25252525) & 0x80808080;
      o[i] = w | ((geA & ~gtZ & ~w & 0x80808080) >>> 2);
    }
  } else {
    for (let i = 0; i < words * 4; i++) {
      const c = src[i] as number;
      dst[i] = c >= 65 && c <= 90 ? c | 32 : c;
    }
  }
  for (let i = words * 4; i < n; i++) {
    const c = src[i] as number;
    dst[i] = c >= 65 && c <= 90 ? c | 32 : c;
  }
}

/**
 * Cuts a byte stream at UTF-8 sequence boundaries, so each piece can be validated (isUtf8) or
 * decoded on its own. A trailing incomplete sequence is carried into the next piece (copied: the
 * caller's buffer is reused), or left in place at the end of the stream to fail validation.
 */
export class Utf8Pieces {
  private carry: Buffer = Buffer.alloc(0);

  next(part: Buffer, final: boolean): Buffer {
    const buf = this.carry.length === 0 ? part : Buffer.concat([this.carry, part]);
    let cut = buf.length;
    if (!final) {
      let j = buf.length - 1;
      while (j >= 0 && j > buf.length - 4 && ((buf[j] as number) & 0xc0) === 0x80) j--;
      if (j >= 0) {
        const lead = buf[j] as number;
        const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
        if (j + need > buf.length) cut = j;
      }
    }
    this.carry = Buffer.from(buf.subarray(cut));
    return buf.subarray(0, cut);
  }
}
