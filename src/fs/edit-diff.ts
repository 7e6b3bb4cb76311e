// The unified diff edit_text_file returns (docs/tools.md, `edit_text_file`), computed by jsdiff
// with two bounds so that no edit, however scattered, makes the answer slow or huge:
// - the diff computation gives up past DIFF_MAX_EDIT_LINES line insertions + deletions (a
//   replaced line is one of each) or DIFF_TIMEOUT_MS, leaving only the two header lines. Myers'
//   algorithm grows with (changed lines)², ~60 ms for 800 on 4 000 lines here; it runs
//   synchronously, so the time bound is also how long it may hold the event loop. Past ~1000 the
//   hunks could not fit in DIFF_MAX_BYTES anyway;
// - the text keeps whole hunks while it fits in DIFF_MAX_BYTES; the rest are left out.
// Either way `diff_truncated` is true. Labels are the caller's workdir-relative path (jsdiff
// quotes a name holding non-ASCII or control characters, as git does), never a host path.
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch, type StructuredPatch } from "diff";

/** Bytes of diff text an answer may carry. */
export const DIFF_MAX_BYTES = 32 * 1024;
export const DIFF_MAX_EDIT_LINES = 1000;
export const DIFF_TIMEOUT_MS = 250;
/**
 * The time bound in force. Tests of the byte and line bounds raise it, so that a loaded machine
 * cannot turn them into a test of the time bound (which has tests of its own).
 */
export const diffTiming = { timeoutMs: DIFF_TIMEOUT_MS };
const CONTEXT_LINES = 3;

export interface EditDiff {
  diff: string;
  diff_truncated: boolean;
}

/**
 * `before` and `after` are the file's text without its BOM (the BOM is never edited, so never
 * shown). An edit that changes nothing has an empty diff.
 */
export function editDiff(label: string, before: string, after: string): EditDiff {
  if (before === after) return { diff: "", diff_truncated: false };
  const patch: StructuredPatch | undefined = structuredPatch(label, label, before, after, undefined, undefined, {
    context: CONTEXT_LINES,
    maxEditLength: DIFF_MAX_EDIT_LINES,
    timeout: diffTiming.timeoutMs,
  });
  const headerOnly = (p: StructuredPatch | undefined) => formatPatch({ oldFileName: label, newFileName: label, oldHeader: undefined, newHeader: undefined, ...p, hunks: [] }, FILE_HEADERS_ONLY);
  if (patch === undefined) return { diff: headerOnly(undefined), diff_truncated: true };
  const header = headerOnly(patch);
  let text = header;
  let bytes = Buffer.byteLength(header, "utf8");
  for (const hunk of patch.hunks) {
    const h = formatPatch({ ...patch, hunks: [hunk] }, FILE_HEADERS_ONLY).slice(header.length);
    const n = Buffer.byteLength(h, "utf8");
    if (bytes + n > DIFF_MAX_BYTES) return { diff: text, diff_truncated: true };
    text += h;
    bytes += n;
  }
  return { diff: text, diff_truncated: false };
}
