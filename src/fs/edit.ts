// edit_text_file: ordered exact-count replacements on the evolving text, all or nothing, published
// by atomic replace with metadata preserved (setuid/setgid cleared, see publish.ts). BOM hidden
// from the edits and re-added; CRLF and a missing final newline survive because the text is never
// normalised. The result's size is computed from the request before anything is built. A dry run
// makes every check and builds the same bytes, then writes nothing; both return the diff.

import { isUtf8 } from "node:buffer";
import fs, { type BigIntStats } from "node:fs";
import type { Target, Workspace } from "./context.ts";
import { editDiffSoon } from "./edit-diff.ts";
import { fail } from "./fail.ts";
import type { MutationGate } from "./gate.ts";
import { readFully } from "./open.ts";
import { publishReplace, withExistingFile } from "./publish.ts";
import { revisionOf } from "./revision.ts";
import { refuseBinaryText, UTF8_BOM } from "./text.ts";

export interface TextEdit {
  old_text: string;
  new_text: string;
  expected_count?: number;
}

export interface EditTextOutput {
  workdir: string;
  path: string;
  /** false for a dry run: nothing was written. */
  edited: boolean;
  dry_run: boolean;
  edits_applied: number;
  bytes_before: number;
  bytes_after: number;
  revision_before: string;
  /** After the edit; for a dry run the unchanged revision_before. */
  revision: string;
  /** Unified diff of the text (BOM excluded), bounded: see edit-diff.ts. */
  diff: string;
  diff_truncated: boolean;
}

/**
 * The edits work on UTF-8 bytes, never on a decoded string: for well-formed text and needles (NUL
 * and lone surrogates are refused up front) a byte match is exactly a character match, because
 * UTF-8 is self-synchronising. That keeps every step at two buffers of at most max_write_bytes.
 */
interface EncodedEdit {
  from: Buffer;
  to: Buffer;
  count: number;
}

/**
 * The size of the text after each edit is known from the request alone: start + Σ count ×
 * (bytes(new) − bytes(old)), because the counts are exact or the edit fails. So a request whose
 * text would at any step outgrow max_write_bytes is refused before one byte of it is built,
 * however the edits multiply each other.
 */
export function plannedSizes(startBytes: number, edits: readonly EncodedEdit[]): number[] {
  const sizes: number[] = [];
  let size = startBytes;
  for (const e of edits) {
    size += e.count * (e.to.length - e.from.length);
    sizes.push(size);
  }
  return sizes;
}

function refuseOversize(t: Target, sizes: readonly number[], max: number): void {
  for (const s of sizes) if (s > max) throw fail("WRITE_TOO_LARGE", t.alias, t.rel, "the edited text would be larger than the write limit");
}

/** Long replacement runs give the event loop back so other requests are answered meanwhile. */
const YIELD_EVERY_MS = 20;

class Yielder {
  private last = performance.now();
  async maybe(): Promise<void> {
    if (performance.now() - this.last < YIELD_EVERY_MS) return;
    await new Promise<void>((r) => setImmediate(r));
    this.last = performance.now();
  }
}

/** Occurrences of `needle`, non-overlapping left to right, counting no further than `stopAfter` + 1. */
async function countOccurrences(text: Buffer, needle: Buffer, stopAfter: number, y: Yielder): Promise<number> {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1 && n <= stopAfter; i = text.indexOf(needle, i + needle.length)) {
    n++;
    if ((n & 0xfff) === 0) await y.maybe();
  }
  return n;
}

/** `text` with every `from` replaced by `to`, written straight into one buffer of exactly `size` bytes. */
async function replaceAll(text: Buffer, from: Buffer, to: Buffer, size: number, y: Yielder): Promise<Buffer> {
  const out = Buffer.allocUnsafe(size);
  let src = 0;
  let dst = 0;
  let n = 0;
  for (let i = text.indexOf(from); i !== -1; i = text.indexOf(from, src)) {
    dst += text.copy(out, dst, src, i);
    dst += to.copy(out, dst);
    src = i + from.length;
    if ((++n & 0xfff) === 0) await y.maybe();
  }
  text.copy(out, dst, src);
  return out;
}

/** Apply the edits in order to `body` (BOM excluded); `sizes` are the planned body sizes after each. */
export async function applyEdits(t: Target, body: Buffer, edits: readonly EncodedEdit[], sizes: readonly number[]): Promise<Buffer> {
  const y = new Yielder();
  let text = body;
  for (const [index, e] of edits.entries()) {
    if (e.from.length === 0) {
      if (text.length !== 0 || e.count !== 1) throw fail("EDIT_CONFLICT", t.alias, t.rel, `edit ${index + 1}: empty old_text only fills an empty file`);
      text = e.to;
      continue;
    }
    const found = await countOccurrences(text, e.from, e.count, y);
    if (found !== e.count) {
      const shown = found > e.count ? `more than ${e.count}` : String(found);
      throw fail("EDIT_CONFLICT", t.alias, t.rel, `edit ${index + 1}: expected ${e.count} occurrence(s), found ${shown}`);
    }
    text = await replaceAll(text, e.from, e.to, sizes[index] as number, y);
  }
  return text;
}

export interface EditOptions {
  /** Verify and compute everything, return the diff, write nothing and take no writer lease. */
  dryRun?: boolean;
}

export async function editTextFile(
  ws: Workspace,
  gate: MutationGate,
  t: Target,
  expectedRevision: string,
  edits: readonly TextEdit[],
  options: EditOptions = {},
): Promise<EditTextOutput> {
  const w = t.wd.workdir;
  if (!Array.isArray(edits) || edits.length === 0) throw fail("EDIT_CONFLICT", t.alias, t.rel, "at least one edit is required");
  if (edits.length > ws.registry.limits.max_edits_per_call) throw fail("TOO_MANY_EDITS", t.alias, t.rel);
  let total = 0;
  for (const e of edits) {
    refuseBinaryText(t, e.old_text);
    refuseBinaryText(t, e.new_text);
    const c = e.expected_count ?? 1;
    if (!Number.isInteger(c) || c < 1) throw fail("INVALID_ARGUMENT", t.alias, t.rel, "expected_count must be an integer >= 1");
    total += Buffer.byteLength(e.old_text, "utf8") + Buffer.byteLength(e.new_text, "utf8");
  }
  if (total > w.max_write_bytes) throw fail("WRITE_TOO_LARGE", t.alias, t.rel);
  const encoded: EncodedEdit[] = edits.map((e) => ({ from: Buffer.from(e.old_text, "utf8"), to: Buffer.from(e.new_text, "utf8"), count: e.expected_count ?? 1 }));
  // Every intermediate text is at least this large whatever the file holds: refused before any I/O.
  refuseOversize(t, plannedSizes(0, encoded), w.max_write_bytes);

  const run = (publish: boolean) =>
    withExistingFile(ws, t, expectedRevision, true, async (parent, source, revisionBefore) => {
      const r = await editedBytes(t, source, revisionBefore, encoded);
      const revision = publish ? publishReplace(ws, t, parent, source, revisionBefore, r.out).revision : revisionBefore;
      return { ...r, revisionBefore, revision };
    }, { lock: publish });
  // A dry run changes nothing, so like every read it neither waits for nor takes the writer lease
  // or the directory lock; every check the edit would make (policy, type, hard links, revision,
  // the edits themselves) runs.
  const dryRun = options.dryRun === true;
  const r = dryRun ? await run(false) : await gate.run(w, () => run(true));
  // After publication (and outside the lease): the diff is only a report of what was written.
  // Unless it is tiny, it runs after the requests already read are answered.
  const { diff, diff_truncated } = await editDiffSoon(t.rel, r.before, r.after);
  return {
    workdir: t.alias,
    path: t.rel,
    edited: !dryRun,
    dry_run: dryRun,
    edits_applied: edits.length,
    bytes_before: r.size,
    bytes_after: r.out.length,
    revision_before: r.revisionBefore,
    revision: r.revision,
    diff,
    diff_truncated,
  };
}

/** Read the verified source and apply the edits: the whole new file, and the texts to diff (BOM excluded). */
async function editedBytes(
  t: Target,
  source: { fd: number; st: BigIntStats },
  revisionBefore: string,
  encoded: readonly EncodedEdit[],
): Promise<{ size: number; out: Buffer; before: Buffer; after: Buffer }> {
  const max = t.wd.workdir.max_write_bytes;
  const size = Number(source.st.size);
  if (size > max) throw fail("WRITE_TOO_LARGE", t.alias, t.rel);
  // Exact once the file size is known (the BOM is part of `size` and survives every edit).
  const sizes = plannedSizes(size, encoded);
  refuseOversize(t, sizes, max);
  // One spare byte: filling it means the file grew beyond the fstat size.
  const raw = Buffer.allocUnsafe(size + 1);
  const got = readFully(source.fd, raw, 0);
  if (got !== size || revisionOf(fs.fstatSync(source.fd, { bigint: true })) !== revisionBefore) {
    throw fail("FILE_CHANGED_DURING_READ", t.alias, t.rel);
  }
  const bytes = raw.subarray(0, size);
  const hasBom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const bom = hasBom ? UTF8_BOM.length : 0;
  const body = bytes.subarray(bom);
  if (body.indexOf(0) !== -1) throw fail("BINARY_FILE", t.alias, t.rel);
  if (!isUtf8(body)) throw fail("UNSUPPORTED_TEXT_ENCODING", t.alias, t.rel);
  const edited = await applyEdits(
    t,
    body,
    encoded,
    sizes.map((s) => s - bom),
  );
  const out = hasBom ? Buffer.concat([UTF8_BOM, edited]) : edited;
  if (out.length > max) throw fail("WRITE_TOO_LARGE", t.alias, t.rel);
  return { size, out, before: body, after: edited };
}
