// download_binary_file and upload_binary_file (data_base64 only; URL/file ingress is out of scope).

import { createHash } from "node:crypto";
import fs from "node:fs";
import { closeQuietly, type Target, type Workspace } from "./context.ts";
import { fail } from "./fail.ts";
import type { MutationGate } from "./gate.ts";
import { mimeTypeFor } from "./mime.ts";
import { openRegularForRead } from "./open.ts";
import { decodeStrictBase64, maxEncodedLength } from "./base64.ts";
import { publishNew, publishReplace, withExistingFile } from "./publish.ts";
import { revisionOf } from "./revision.ts";

export interface BinaryMeta {
  workdir: string;
  path: string;
  size: number;
  mime_type: string;
  sha256: string;
  revision: string;
}

export interface UploadOutput {
  workdir: string;
  path: string;
  created: boolean;
  replaced: boolean;
  bytes_written: number;
  sha256: string;
  revision_before: string | null;
  revision: string;
}

const CHUNK = 64 * 1024;
/** Bytes read between two returns to the event loop (a 5 MiB media read takes five steps). */
export const YIELD_BYTES = 1024 * 1024;

/**
 * Test seam: called after each chunk of a download is read, so a test can make a real writer act
 * at a known point of the read. Always null outside tests.
 */
export const downloadReadHooks: { afterChunk: ((bytesRead: number) => void) | null } = { afterChunk: null };

export async function downloadBinaryFile(ws: Workspace, t: Target): Promise<{ meta: BinaryMeta; bytes: Uint8Array }> {
  const { bytes, revision } = await readWholeFile(ws, t, t.wd.workdir.max_binary_transfer_bytes, "BINARY_FILE_TOO_LARGE");
  const name = t.parts[t.parts.length - 1] ?? "";
  return {
    meta: {
      workdir: t.alias,
      path: t.rel,
      size: bytes.length,
      mime_type: mimeTypeFor(name),
      sha256: createHash("sha256").update(bytes).digest("hex"),
      revision,
    },
    bytes,
  };
}

/**
 * Every byte of the regular file at `t`, at most `max` of them (`tooLarge` above it, judged on
 * the size at open), with the revision they belong to. Shared by download_binary_file and
 * read_media_file. The file is read in steps of YIELD_BYTES with the event loop given back
 * between them, so a large read never holds up the other requests of the connection; the
 * revision check at the end still proves every byte belongs to one version.
 */
export async function readWholeFile(
  ws: Workspace,
  t: Target,
  max: number,
  tooLarge: "BINARY_FILE_TOO_LARGE" | "MEDIA_FILE_TOO_LARGE",
  /** Runs on the held descriptor before the size check (read_media_file refuses non-media first). */
  inspect?: (fd: number) => void,
): Promise<{ bytes: Buffer; revision: string }> {
  const opened = openRegularForRead(ws, t, "read");
  const fd = opened.fd;
  try {
    const revision = revisionOf(opened.st);
    inspect?.(fd);
    if (Number(opened.st.size) > max) throw fail(tooLarge, t.alias, t.rel);
    // One spare byte: filling it means the file grew after fstat. That is a change during the
    // read, whatever the new size, never "too large" (the size checked was in bounds).
    const out = Buffer.allocUnsafe(Number(opened.st.size) + 1);
    let got = 0;
    let sinceYield = 0;
    for (;;) {
      const want = Math.min(CHUNK, out.length - got);
      if (want === 0) throw fail("FILE_CHANGED_DURING_READ", t.alias, t.rel);
      const n = fs.readSync(fd, out, got, want, got);
      if (n === 0) break;
      got += n;
      downloadReadHooks.afterChunk?.(got);
      sinceYield += n;
      if (sinceYield >= YIELD_BYTES) {
        sinceYield = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    if (revisionOf(fs.fstatSync(fd, { bigint: true })) !== revision || got !== Number(opened.st.size)) {
      throw fail("FILE_CHANGED_DURING_READ", t.alias, t.rel);
    }
    return { bytes: out.subarray(0, got), revision };
  } finally {
    closeQuietly(fd);
  }
}

export async function uploadBinaryFile(
  ws: Workspace,
  gate: MutationGate,
  t: Target,
  dataBase64: string | null | undefined,
  overwrite: boolean,
  expectedRevision: string | null | undefined,
): Promise<UploadOutput> {
  const expected = expectedRevision ?? null;
  if (overwrite && expected === null) throw fail("EXPECTED_REVISION_REQUIRED", t.alias, t.rel);
  if (!overwrite && expected !== null) throw fail("EXPECTED_REVISION_NOT_ALLOWED", t.alias, t.rel);
  if (dataBase64 === null || dataBase64 === undefined) throw fail("BINARY_SOURCE_REQUIRED", t.alias, t.rel);
  if (typeof dataBase64 !== "string") throw fail("INVALID_BASE64", t.alias, t.rel);
  const max = t.wd.workdir.max_binary_transfer_bytes;
  if (dataBase64.length > maxEncodedLength(max)) throw fail("BINARY_PAYLOAD_TOO_LARGE", t.alias, t.rel);
  const bytes = decodeStrictBase64(dataBase64);
  if (bytes === null) throw fail("INVALID_BASE64", t.alias, t.rel);
  if (bytes.length > max) throw fail("BINARY_PAYLOAD_TOO_LARGE", t.alias, t.rel);
  const sha256 = createHash("sha256").update(bytes).digest("hex");

  return gate.run(t.wd.workdir, async () => {
    if (!overwrite || expected === null) {
      const { revision } = publishNew(ws, t, bytes);
      return { workdir: t.alias, path: t.rel, created: true, replaced: false, bytes_written: bytes.length, sha256, revision_before: null, revision };
    }
    return withExistingFile(ws, t, expected, true, (parent, source, before) => {
      const { revision } = publishReplace(ws, t, parent, source, before, bytes);
      return { workdir: t.alias, path: t.rel, created: false, replaced: true, bytes_written: bytes.length, sha256, revision_before: before, revision };
    }, { lock: true });
  });
}
