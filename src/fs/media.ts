// read_media_file: one image or audio file, whole, with its type sniffed from the content.
// Anything else, text included, is UNSUPPORTED_MEDIA_TYPE before the size is even looked at, so
// the answer for a non-media file does not depend on how large it is.

import type { Target, Workspace } from "./context.ts";
import { fail } from "./fail.ts";
import { readWholeFile } from "./binary.ts";
import { readFully } from "./open.ts";
import { SNIFF_BYTES, sniffMedia, type MediaType } from "./sniff.ts";

export interface MediaOutput {
  workdir: string;
  path: string;
  kind: MediaType["kind"];
  mime_type: string;
  size: number;
  revision: string;
}

export async function readMediaFile(ws: Workspace, t: Target, max: number): Promise<{ meta: MediaOutput; bytes: Buffer }> {
  const { bytes, revision } = await readWholeFile(ws, t, max, "MEDIA_FILE_TOO_LARGE", (fd) => {
    const head = Buffer.allocUnsafe(SNIFF_BYTES);
    const got = readFully(fd, head, 0);
    if (sniffMedia(head.subarray(0, got), got < SNIFF_BYTES) === null) throw fail("UNSUPPORTED_MEDIA_TYPE", t.alias, t.rel);
  });
  // The verdict on the bytes returned, which the revision check proved are the ones sniffed.
  const type = sniffMedia(bytes.subarray(0, SNIFF_BYTES), bytes.length < SNIFF_BYTES);
  if (type === null) throw fail("FILE_CHANGED_DURING_READ", t.alias, t.rel);
  return { meta: { workdir: t.alias, path: t.rel, kind: type.kind, mime_type: type.mime_type, size: bytes.length, revision }, bytes };
}
