// One ignore file's text to its rules, line by line as git's dir.c reads it: a UTF-8 BOM is
// skipped; `\r\n` ends a line like `\n`; empty lines and lines starting with `#` are skipped;
// trailing spaces are trimmed unless escaped with `\`; a leading `!` negates (`\!` and `\#` are
// literal); one trailing `/` makes the pattern match directories only; a pattern with no other
// `/` matches the name at any depth below the file's directory, any other `/` (leading or in the
// middle) anchors it to that directory. Git reads bytes, so the text here is the file's bytes one
// code unit each (latin1 decoding; see gitBytes in ./wildmatch.ts), never decoded UTF-8.

import { plainLiteral } from "./wildmatch.ts";

/** Bytes of one ignore file that are read; past them the file is used up to its last whole line. */
export const MAX_IGNORE_FILE_BYTES = 1024 * 1024;
/** Patterns used from one ignore file; later ones are dropped. */
export const MAX_IGNORE_PATTERNS = 10_000;

export interface IgnorePattern {
  /** The pattern body as bytes: no `!`, no trailing `/`, no leading `/`. */
  body: string;
  negate: boolean;
  dirOnly: boolean;
  /** No `/` in the body as written: matched against the entry's name alone. */
  basename: boolean;
  /** The body holds no wildcard or escape: compared as a string. */
  literal: string | null;
}

export interface ParsedIgnore {
  patterns: IgnorePattern[];
  /** Patterns past MAX_IGNORE_PATTERNS that were dropped. */
  dropped: number;
}

/** git's trim_trailing_spaces: unescaped trailing spaces go; a line ending in a lone `\` is kept whole. */
function trimTrailingSpaces(line: string): string {
  let lastSpace = -1;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 32) {
      if (lastSpace === -1) lastSpace = i;
    } else if (c === 92) {
      i++;
      if (i >= line.length) return line;
      lastSpace = -1;
    } else lastSpace = -1;
  }
  return lastSpace === -1 ? line : line.slice(0, lastSpace);
}

export function parsePattern(raw: string): IgnorePattern | null {
  let p = raw;
  let negate = false;
  if (p.startsWith("!")) {
    negate = true;
    p = p.slice(1);
  }
  let dirOnly = false;
  if (p.endsWith("/")) {
    dirOnly = true;
    p = p.slice(0, -1);
  }
  const basename = !p.includes("/");
  if (!basename && p.startsWith("/")) p = p.slice(1);
  if (p === "") return null; // `/`, `!` or `!/`: git's empty pattern matches nothing
  const body = p;
  return { body, negate, dirOnly, basename, literal: plainLiteral(body) };
}

/** `bytes`: the file read as latin1 (one code unit per byte). */
export function parseIgnoreText(bytes: string): ParsedIgnore {
  const patterns: IgnorePattern[] = [];
  let dropped = 0;
  const start = bytes.startsWith("\xEF\xBB\xBF") ? 3 : 0;
  let from = start;
  while (from <= bytes.length) {
    let end = bytes.indexOf("\n", from);
    const last = end === -1;
    if (last) end = bytes.length;
    let line = bytes.slice(from, end);
    from = end + 1;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line === "" || line.startsWith("#")) {
      if (last) break;
      continue;
    }
    const pattern = parsePattern(trimTrailingSpaces(line));
    if (pattern !== null) {
      if (patterns.length < MAX_IGNORE_PATTERNS) patterns.push(pattern);
      else dropped++;
    }
    if (last) break;
  }
  return { patterns, dropped };
}
