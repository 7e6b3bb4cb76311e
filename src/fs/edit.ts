// edit_text_file: ordered exact-count replacements on the evolving text, all or nothing, published
// by atomic replace with metadata preserved. BOM hidden from the edits and re-added; CRLF and a
// missing final newline survive because the text is never normalised.

import fs from "node:fs";
import { closeQuietly, type Target, type Workspace } from "./context.ts";
import { fail } from "./fail.ts";
import type { MutationGate } from "./gate.ts";
import { openExistingFile, openParent, publishReplace } from "./publish.ts";
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
  edited: true;
  edits_applied: number;
  bytes_before: number;
  bytes_after: number;
  revision_before: string;
  revision: string;
}

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function countOccurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

export function applyEdits(t: Target, original: string, edits: readonly TextEdit[]): string {
  let text = original;
  edits.forEach((e, index) => {
    const expected = e.expected_count ?? 1;
    if (e.old_text === "") {
      if (text !== "" || expected !== 1) throw fail("EDIT_CONFLICT", t.alias, t.rel, `edit ${index + 1}: empty old_text only fills an empty file`);
      text = e.new_text;
      return;
    }
    const found = countOccurrences(text, e.old_text);
    if (found !== expected) throw fail("EDIT_CONFLICT", t.alias, t.rel, `edit ${index + 1}: expected ${expected} occurrence(s), found ${found}`);
    text = text.split(e.old_text).join(e.new_text);
  });
  return text;
}

export async function editTextFile(
  ws: Workspace,
  gate: MutationGate,
  t: Target,
  expectedRevision: string,
  edits: readonly TextEdit[],
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

  return gate.run(w, async () => {
    const parent = openParent(ws, t, "mutate");
    try {
      const source = openExistingFile(ws, t, parent.fd);
      try {
        const revisionBefore = revisionOf(source.st);
        if (revisionBefore !== expectedRevision) throw fail("REVISION_CONFLICT", t.alias, t.rel);
        if (source.st.nlink > 1n) throw fail("MULTIPLE_HARDLINKS_NOT_SUPPORTED", t.alias, t.rel);
        const size = Number(source.st.size);
        if (size > w.max_write_bytes) throw fail("WRITE_TOO_LARGE", t.alias, t.rel);
        const raw = Buffer.allocUnsafe(size + 1);
        let got = 0;
        for (;;) {
          const n = fs.readSync(source.fd, raw, got, raw.length - got, got);
          if (n === 0) break;
          got += n;
          if (got === raw.length) break; // grew beyond the fstat size
        }
        if (got !== size || revisionOf(fs.fstatSync(source.fd, { bigint: true })) !== revisionBefore) {
          throw fail("FILE_CHANGED_DURING_READ", t.alias, t.rel);
        }
        const bytes = raw.subarray(0, size);
        const hasBom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
        const body = hasBom ? bytes.subarray(3) : bytes;
        if (body.indexOf(0) !== -1) throw fail("BINARY_FILE", t.alias, t.rel);
        let text: string;
        try {
          text = fatalUtf8.decode(body);
        } catch {
          throw fail("UNSUPPORTED_TEXT_ENCODING", t.alias, t.rel);
        }
        const edited = applyEdits(t, text, edits);
        const encoded = Buffer.from(edited, "utf8");
        const out = hasBom ? Buffer.concat([UTF8_BOM, encoded]) : encoded;
        if (out.length > w.max_write_bytes) throw fail("WRITE_TOO_LARGE", t.alias, t.rel);
        const { revision } = publishReplace(ws, t, parent, source, revisionBefore, out);
        return {
          workdir: t.alias,
          path: t.rel,
          edited: true as const,
          edits_applied: edits.length,
          bytes_before: size,
          bytes_after: out.length,
          revision_before: revisionBefore,
          revision,
        };
      } finally {
        closeQuietly(source.fd);
      }
    } finally {
      closeQuietly(parent.fd);
    }
  });
}
