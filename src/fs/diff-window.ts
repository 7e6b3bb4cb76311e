// The part of an edit worth diffing: the common prefix and suffix of the two texts, trimmed to
// whole lines, are unchanged, so only the middle between them (plus the context lines a unified
// diff shows) is handed to the line diff. Finding it is one pass over the bytes with no
// allocation, so a one-line edit of a 1 MiB file costs the diff a few lines, not the file.
// Lines end at "\n" (a "\r" before it stays part of the line, as jsdiff and diff(1) see it); every
// cut is at a line start or an end, so each side of the window is whole UTF-8 text.

export interface DiffWindow {
  /** Lines of the file before the window (the diff's line numbers are shifted by this). */
  linesBefore: number;
  /** The window of each text: its changed lines with up to `context` unchanged lines each side. */
  oldStart: number;
  oldEnd: number;
  newStart: number;
  newEnd: number;
}

const NL = 10;

/** Start of the line `lines` lines above the line starting at `pos` (or 0). */
function linesUp(text: Uint8Array, pos: number, lines: number): number {
  let p = pos;
  for (let k = 0; k < lines && p > 0; k++) {
    // text[p - 1] is the "\n" ending the line above; find the one before it
    let i = p - 2;
    while (i >= 0 && text[i] !== NL) i--;
    p = i + 1;
  }
  return p;
}

/** End of the line `lines` lines below the line starting at `pos` (or the text's end). */
function linesDown(text: Uint8Array, pos: number, lines: number): number {
  let p = pos;
  for (let k = 0; k < lines && p < text.length; k++) {
    let i = p;
    while (i < text.length && text[i] !== NL) i++;
    p = Math.min(i + 1, text.length);
  }
  return p;
}

/** `before` and `after` must differ. */
export function diffWindow(before: Uint8Array, after: Uint8Array, context: number): DiffWindow {
  const shorter = Math.min(before.length, after.length);
  // The first differing byte, and the start of its line (the common prefix is whole lines).
  let lineStart = 0;
  let first = 0;
  while (first < shorter && before[first] === after[first]) {
    if (before[first] === NL) lineStart = first + 1;
    first++;
  }
  // The common suffix, not reaching into the prefix.
  const room = shorter - lineStart;
  let common = 0;
  while (common < room && before[before.length - 1 - common] === after[after.length - 1 - common]) common++;
  // Trimmed to whole lines: it must start right after a "\n" in both texts (or where the prefix ends).
  const startsLine = (text: Uint8Array, at: number) => at === lineStart || text[at - 1] === NL;
  let suffix = common;
  if (!(startsLine(before, before.length - suffix) && startsLine(after, after.length - suffix))) {
    // The first "\n" inside the common suffix is common to both: the suffix starts after it.
    let i = before.length - common;
    while (i < before.length && before[i] !== NL) i++;
    suffix = before.length - Math.min(i + 1, before.length);
  }
  const start = linesUp(before, lineStart, context);
  let linesBefore = 0;
  for (let i = 0; i < start; i++) if (before[i] === NL) linesBefore++;
  const tailContext = linesDown(before, before.length - suffix, context) - (before.length - suffix);
  return {
    linesBefore,
    oldStart: start,
    oldEnd: before.length - suffix + tailContext,
    newStart: start,
    newEnd: after.length - suffix + tailContext,
  };
}

/** Lines in `text[start, end)`, a last line without "\n" included. */
export function lineCount(text: Uint8Array, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) if (text[i] === NL) n++;
  return end > start && text[end - 1] !== NL ? n + 1 : n;
}
