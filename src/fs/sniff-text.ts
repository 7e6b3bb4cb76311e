// What read_media_file never takes for media, however its first bytes look: text. A UTF-16LE file
// opens with FF FE, which is also the start of an MPEG audio frame header; a Latin-1 file may open
// with "ÿØÿ", which is JPEG's. Every supported media format has bytes in its first few KiB that no
// text has (NULs in sizes, control characters, binary data), so a head that reads as printable
// text in a common encoding is text, and so is anything that opens with a byte order mark.

const BOMS: readonly (readonly number[])[] = [
  [0xef, 0xbb, 0xbf], // UTF-8
  [0xff, 0xfe], // UTF-16LE (and UTF-32LE, FF FE 00 00)
  [0xfe, 0xff], // UTF-16BE
  [0x00, 0x00, 0xfe, 0xff], // UTF-32BE
];

/** Whether `b` opens with a Unicode byte order mark (UTF-8, UTF-16LE/BE, UTF-32LE/BE). */
export function hasByteOrderMark(b: Uint8Array): boolean {
  return BOMS.some((bom) => b.length >= bom.length && bom.every((v, i) => b[i] === v));
}

/**
 * A character text may hold: anything but the C0 controls (tab, line feed, vertical tab, form feed,
 * carriage return and escape excepted), DEL, the C1 controls and the noncharacters U+FFFE/U+FFFF.
 */
function printable(cp: number): boolean {
  if (cp < 0x20) return (cp >= 0x09 && cp <= 0x0d) || cp === 0x1b;
  if (cp >= 0x7f && cp <= 0x9f) return false;
  return cp !== 0xfffe && cp !== 0xffff;
}

/** Windows-1252 (and so Latin-1's printable range): every byte but C0 controls, DEL and its five unassigned ones. */
function isSingleByteText(b: Uint8Array): boolean {
  for (const c of b) {
    if (c < 0x20 ? !printable(c) : c === 0x7f || c === 0x81 || c === 0x8d || c === 0x8f || c === 0x90 || c === 0x9d) return false;
  }
  return true;
}

/** Strict UTF-8 of printable characters; when the head is cut (`complete` false) its last sequence may be too. */
function isUtf8Text(b: Uint8Array, complete: boolean): boolean {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      if (!printable(c)) return false;
      i++;
      continue;
    }
    const n = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    if (n < 0) return false;
    let cp = c & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      if (i + k >= b.length) return !complete; // a sequence cut by the end of the head
      const cc = b[i + k]!;
      if ((cc & 0xc0) !== 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // overlong forms, surrogates and values above U+10FFFF are not UTF-8
    if ((n === 2 && cp < 0x800) || (n === 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    if (!printable(cp)) return false;
    i += n + 1;
  }
  return true;
}

/** UTF-16 of printable characters, surrogates paired (`little`: LE). */
function isUtf16Text(b: Uint8Array, little: boolean, complete: boolean): boolean {
  if (complete && b.length % 2 !== 0) return false;
  const units = b.length >> 1;
  const unit = (k: number) => (little ? b[2 * k]! | (b[2 * k + 1]! << 8) : (b[2 * k]! << 8) | b[2 * k + 1]!);
  for (let k = 0; k < units; k++) {
    const u = unit(k);
    if (u >= 0xd800 && u <= 0xdbff) {
      if (k + 1 >= units) return !complete;
      const low = unit(k + 1);
      if (low < 0xdc00 || low > 0xdfff) return false;
      k++;
      continue;
    }
    if (u >= 0xdc00 && u <= 0xdfff) return false;
    if (!printable(u)) return false;
  }
  return true;
}

/** UTF-32 of printable characters (`little`: LE). */
function isUtf32Text(b: Uint8Array, little: boolean, complete: boolean): boolean {
  if (complete && b.length % 4 !== 0) return false;
  for (let i = 0; i + 4 <= b.length; i += 4) {
    const cp = little ? (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16)) + b[i + 3]! * 0x1000000 : b[i]! * 0x1000000 + ((b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!);
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || !printable(cp)) return false;
  }
  return true;
}

/**
 * Whether the head of a file is text: it opens with a byte order mark, or all of it is printable
 * text in UTF-8, Windows-1252/Latin-1, UTF-16LE/BE or UTF-32LE/BE. `complete`: `b` is the whole
 * file (otherwise its last character may be cut).
 */
export function looksLikeText(b: Uint8Array, complete: boolean): boolean {
  if (hasByteOrderMark(b)) return true;
  return (
    isSingleByteText(b) ||
    isUtf8Text(b, complete) ||
    isUtf16Text(b, true, complete) ||
    isUtf16Text(b, false, complete) ||
    isUtf32Text(b, true, complete) ||
    isUtf32Text(b, false, complete)
  );
}
