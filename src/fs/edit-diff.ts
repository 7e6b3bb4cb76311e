// The unified diff edit_text_file returns (docs/tools.md, `edit_text_file`). Computing it holds
// the event loop for a bounded time (at most ~0.13 s of CPU measured in the compiled serve on a
// 2-core machine, the first diff after start included: inside the documented 0.25 s; see
// bench/fs/edit-diff.ts) and bounded memory (+~13 MB peak: bench/fs/peak-rss.ts), whatever the
// edit, and its text is at most DIFF_MAX_BYTES. Every bound is on sizes and counts, never on the clock, so the same edit always
// gets the same diff (a real edit returns exactly what its dry run did):
// - only the window between the texts' common prefix and suffix (whole lines, plus the context
//   lines) is diffed (diff-window.ts): finding it is one pass over the bytes, and the hunks' line
//   numbers are shifted back, so the text is still a unified diff of the whole file;
// - a window over DIFF_MAX_WINDOW_LINES lines or DIFF_MAX_WINDOW_BYTES bytes (old and new sides
//   together) is not diffed at all: jsdiff splits both sides into line strings and builds its
//   result from them, work that grows with the window, not with the change;
// - jsdiff gives up past DIFF_MAX_EDIT_LINES line insertions + deletions (a replaced line is one
//   of each), and past DIFF_MAX_COMPARISONS line comparisons: Myers' loop grows with the edit
//   length squared and with how far each step slides over equal lines, which the count measures
//   whatever the lines are (many changes among many similar lines cost the most). jsdiff's own
//   `timeout` is not used: it is a wall-clock check, so a busy machine would change the answer;
// - the text keeps whole hunks while it fits in DIFF_MAX_BYTES; the rest are left out.
// Any of these sets `diff_truncated`; all but the last leave only the two header lines. Unless
// the texts are tiny, the diff runs after the event loop was given back (editDiffSoon), so the
// requests read with the edit are answered before it. Labels
// are the caller's workdir-relative path (jsdiff quotes a name holding non-ASCII or control
// characters, as git does), never a host path.
import { edenGC } from "bun:jsc";
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch, type StructuredPatch } from "diff";
import { HeapCollector } from "../common/heap-collector.ts";
import { type DiffWindow, diffWindow, lineCount } from "./diff-window.ts";

/** Bytes of diff text an answer may carry. */
export const DIFF_MAX_BYTES = 32 * 1024;
export const DIFF_MAX_EDIT_LINES = 1000;
/** Lines of the diffed window, old and new sides together. */
export const DIFF_MAX_WINDOW_LINES = 20_000;
/** Bytes of the diffed window, old and new sides together. */
export const DIFF_MAX_WINDOW_BYTES = 1024 * 1024;
/**
 * Line comparisons jsdiff may make. Each step of Myers' loop allocates, so this bounds memory as
 * well as time. In the compiled serve on a loaded 2-core machine, ~135 000 at the window bounds
 * took ~50 ms once warm but up to ~0.2 s of CPU for the first diff after start (jsdiff not yet
 * compiled), and 400 000 reached +45 MB of peak RSS (over the 120 MB): 100 000 keeps the cold
 * worst case inside the documented 0.25 s.
 */
export const DIFF_MAX_COMPARISONS = 100_000;
const CONTEXT_LINES = 3;
/**
 * Units of diff work (window lines + comparisons) between collections. A diff's garbage (line
 * strings, Myers' paths) waits for the collector, which paces itself by allocation: in one serve,
 * a few diffs near the bounds in a row lifted peak RSS from ~80 MB to ~122 MB (each alone: at
 * most ~98 MB). So once diffs have done this much work, serve collects the young generation
 * (where that garbage is) after the answer went out, and fully once none has run for a second. A
 * full collection there held the event loop for tens of ms on top of the diff.
 */
const WORK_PER_COLLECTION = 50_000;
const diffHeap = new HeapCollector(
  () => 0,
  (kind) => (kind === "busy" ? edenGC() : Bun.gc(true)),
  WORK_PER_COLLECTION,
);
/** Thrown by the counting comparator to stop jsdiff; caught right there. */
const OVER_BUDGET = new Error("diff comparison budget spent");

export interface EditDiff {
  diff: string;
  diff_truncated: boolean;
}

const utf8 = (t: Uint8Array | string): Buffer => (typeof t === "string" ? Buffer.from(t, "utf8") : Buffer.from(t.buffer, t.byteOffset, t.length));

/** How much of a diff may be computed; past any bound the diff is not computed. */
interface DiffLimits {
  windowLines: number;
  windowBytes: number;
  comparisons: number;
}
const FULL: DiffLimits = { windowLines: DIFF_MAX_WINDOW_LINES, windowBytes: DIFF_MAX_WINDOW_BYTES, comparisons: DIFF_MAX_COMPARISONS };
/** What a diff may cost without giving the event loop back first: ~1 ms or less measured. */
const INLINE: DiffLimits = { windowLines: 1000, windowBytes: 64 * 1024, comparisons: 10_000 };
const OVER = "over the limits";

/**
 * `before` and `after` are the file's text (UTF-8) without its BOM (the BOM is never edited, so
 * never shown). An edit that changes nothing has an empty diff.
 */
export function editDiff(label: string, before: Uint8Array | string, after: Uint8Array | string): EditDiff {
  const d = new PendingDiff(label, utf8(before), utf8(after));
  return d.run(FULL) as EditDiff;
}

/**
 * editDiff, giving the event loop back first unless the diff is tiny (INLINE, judged first from
 * the texts' sizes, since even finding the window reads them): every request already read when
 * the edit got here is answered before a diff that costs anything runs.
 */
export async function editDiffSoon(label: string, before: Uint8Array, after: Uint8Array): Promise<EditDiff> {
  const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  if (before.length + after.length > INLINE.windowBytes) {
    await yieldTurn();
    return editDiff(label, before, after);
  }
  const d = new PendingDiff(label, utf8(before), utf8(after));
  const quick = d.run(INLINE);
  if (quick !== OVER) return quick;
  await yieldTurn();
  return d.run(FULL) as EditDiff;
}

/** The two texts and their changed window (found once), diffed within given limits. */
class PendingDiff {
  private readonly headerOnly: string;
  private readonly window: DiffWindow | undefined;

  constructor(
    private readonly label: string,
    private readonly before: Buffer,
    private readonly after: Buffer,
  ) {
    this.headerOnly = formatPatch({ oldFileName: label, newFileName: label, oldHeader: undefined, newHeader: undefined, hunks: [] }, FILE_HEADERS_ONLY);
    this.window = Buffer.compare(before, after) === 0 ? undefined : diffWindow(before, after, CONTEXT_LINES);
  }

  /** The diff, or OVER when `limits` are not FULL and the diff would pass them. */
  run(limits: DiffLimits): EditDiff | typeof OVER {
    const { before, after, label, headerOnly } = this;
    const w = this.window;
    if (w === undefined) return { diff: "", diff_truncated: false };
    const over = limits === FULL ? { diff: headerOnly, diff_truncated: true } : OVER;
    if (w.oldEnd - w.oldStart + (w.newEnd - w.newStart) > limits.windowBytes) return over;
    const lines = lineCount(before, w.oldStart, w.oldEnd) + lineCount(after, w.newStart, w.newEnd);
    if (lines > limits.windowLines) return over;
    let comparisons = 0;
    // jsdiff's comparator option (documented for its diff functions) reaches the line diff that
    // structuredPatch runs; counting there is the only hook inside Myers' loop.
    const options = {
      context: CONTEXT_LINES,
      maxEditLength: DIFF_MAX_EDIT_LINES,
      comparator: (a: string, b: string) => {
        if (++comparisons > limits.comparisons) throw OVER_BUDGET;
        return a === b;
      },
    };
    let patch: StructuredPatch | undefined;
    try {
      patch = structuredPatch(label, label, before.toString("utf8", w.oldStart, w.oldEnd), after.toString("utf8", w.newStart, w.newEnd), undefined, undefined, options);
    } catch (err) {
      if (err !== OVER_BUDGET) throw err;
      return over;
    } finally {
      diffHeap.done(lines + comparisons);
    }
    if (patch === undefined) return { diff: headerOnly, diff_truncated: true };
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
