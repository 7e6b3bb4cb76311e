// The unified diff edit_text_file returns (docs/tools.md, `edit_text_file`). The promise is that
// computing it takes at most DIFF_TIMEOUT_MS of the event loop and bounded memory, whatever the
// edit, and never more than DIFF_MAX_BYTES of text:
// - only the window between the texts' common prefix and suffix (whole lines, plus the context
//   lines) is diffed (diff-window.ts): finding it is one pass over the bytes, and the hunks' line
//   numbers are shifted back, so the text is still a unified diff of the whole file;
// - a window over DIFF_MAX_WINDOW_LINES lines or DIFF_MAX_WINDOW_BYTES bytes (old and new sides
//   together) is not diffed at all: jsdiff splits both sides into line strings and builds its
//   result from them before and after its own time check, so that work must be small by size.
//   Inside those bounds it measured at most ~40 ms and ~25 MB in the compiled serve;
// - jsdiff gives up past DIFF_MAX_EDIT_LINES line insertions + deletions (a replaced line is one
//   of each; Myers' loop grows with their square), or once the time left of DIFF_TIMEOUT_MS, less
//   a reserve for building its result, has run out;
// - the text keeps whole hunks while it fits in DIFF_MAX_BYTES; the rest are left out.
// Any of these sets `diff_truncated`; the first three leave only the two header lines. Labels are
// the caller's workdir-relative path (jsdiff quotes a name holding non-ASCII or control
// characters, as git does), never a host path.
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch, type StructuredPatch } from "diff";
import { diffWindow, lineCount } from "./diff-window.ts";

/** Bytes of diff text an answer may carry. */
export const DIFF_MAX_BYTES = 32 * 1024;
export const DIFF_MAX_EDIT_LINES = 1000;
/** Lines of the diffed window, old and new sides together. */
export const DIFF_MAX_WINDOW_LINES = 20_000;
/** Bytes of the diffed window, old and new sides together. */
export const DIFF_MAX_WINDOW_BYTES = 1024 * 1024;
export const DIFF_TIMEOUT_MS = 250;
/**
 * Of DIFF_TIMEOUT_MS, what jsdiff's own time check cannot see: splitting the window into lines
 * before its loop and building the hunks after it (~40 ms measured at the window bounds).
 */
const UNTIMED_RESERVE_MS = 80;
/**
 * The time bound in force. Tests of the byte and line bounds raise it, so that a loaded machine
 * cannot turn them into a test of the time bound.
 */
export const diffTiming = { timeoutMs: DIFF_TIMEOUT_MS };
const CONTEXT_LINES = 3;

export interface EditDiff {
  diff: string;
  diff_truncated: boolean;
}

const utf8 = (t: Uint8Array | string): Buffer => (typeof t === "string" ? Buffer.from(t, "utf8") : Buffer.from(t.buffer, t.byteOffset, t.length));

/**
 * `before` and `after` are the file's text (UTF-8) without its BOM (the BOM is never edited, so
 * never shown). An edit that changes nothing has an empty diff.
 */
export function editDiff(label: string, beforeText: Uint8Array | string, afterText: Uint8Array | string): EditDiff {
  const started = performance.now();
  const before = utf8(beforeText);
  const after = utf8(afterText);
  if (Buffer.compare(before, after) === 0) return { diff: "", diff_truncated: false };
  const headerOnly = formatPatch({ oldFileName: label, newFileName: label, oldHeader: undefined, newHeader: undefined, hunks: [] }, FILE_HEADERS_ONLY);
  const truncated = { diff: headerOnly, diff_truncated: true };
  const w = diffWindow(before, after, CONTEXT_LINES);
  const bytes = w.oldEnd - w.oldStart + (w.newEnd - w.newStart);
  if (bytes > DIFF_MAX_WINDOW_BYTES) return truncated;
  if (lineCount(before, w.oldStart, w.oldEnd) + lineCount(after, w.newStart, w.newEnd) > DIFF_MAX_WINDOW_LINES) return truncated;
  const decode = (t: Buffer, s: number, e: number) => t.toString("utf8", s, e);
  const left = diffTiming.timeoutMs - UNTIMED_RESERVE_MS - (performance.now() - started);
  if (left <= 0) return truncated;
  const patch: StructuredPatch | undefined = structuredPatch(label, label, decode(before, w.oldStart, w.oldEnd), decode(after, w.newStart, w.newEnd), undefined, undefined, {
    context: CONTEXT_LINES,
    maxEditLength: DIFF_MAX_EDIT_LINES,
    timeout: left,
  });
  if (patch === undefined) return truncated;
  const last = patch.hunks.at(-1);
  if (last !== undefined) fillTrailingContext(last, before, w.oldEnd);
  let text = headerOnly;
  let size = Buffer.byteLength(headerOnly, "utf8");
  for (const hunk of patch.hunks) {
    const shifted = { ...hunk, oldStart: hunk.oldStart + w.linesBefore, newStart: hunk.newStart + w.linesBefore };
    const h = formatPatch({ ...patch, hunks: [shifted] }, FILE_HEADERS_ONLY).slice(headerOnly.length);
    const n = Buffer.byteLength(h, "utf8");
    if (size + n > DIFF_MAX_BYTES) return { diff: text, diff_truncated: true };
    text += h;
    size += n;
  }
  return { diff: text, diff_truncated: false };
}

/**
 * Myers may place the last change a few lines later than where the texts stop differing (over
 * repeated lines), eating into the window's trailing context: the hunk then gets the rest of its
 * context lines from the unchanged text after the window, as a diff of the whole file would.
 */
function fillTrailingContext(hunk: StructuredPatch["hunks"][number], before: Buffer, windowEnd: number): void {
  let trailing = 0;
  for (let i = hunk.lines.length - 1; i >= 0 && trailing < CONTEXT_LINES; i--) {
    const line = hunk.lines[i] as string;
    if (line.startsWith("\\")) return; // the window reached the end of the file
    if (!line.startsWith(" ")) break;
    trailing++;
  }
  let at = windowEnd;
  for (; trailing < CONTEXT_LINES && at < before.length; trailing++) {
    const nl = before.indexOf(10, at);
    const end = nl === -1 ? before.length : nl;
    hunk.lines.push(` ${before.toString("utf8", at, end)}`);
    if (nl === -1) hunk.lines.push("\\ No newline at end of file");
    hunk.oldLines++;
    hunk.newLines++;
    at = end + 1;
  }
}

/**
 * editDiff in a turn of the event loop of its own: every request already read when the edit got
 * here is answered first, whatever the diff then costs (at most DIFF_TIMEOUT_MS).
 */
export async function editDiffInOwnTurn(label: string, before: Uint8Array, after: Uint8Array): Promise<EditDiff> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  return editDiff(label, before, after);
}
