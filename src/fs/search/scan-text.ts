// Line helpers the search scanners share (scan.ts, scan-regex.ts, scan-context.ts): the 2 KiB
// UTF-8-safe text cap, strict decoding and newline counting over raw bytes.

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
