// create_text_file: verbatim UTF-8 (no BOM added, no newline normalisation), never overwrites.

import type { Target, Workspace } from "./context.ts";
import { fail } from "./fail.ts";
import type { MutationGate } from "./gate.ts";
import { publishNew } from "./publish.ts";
import { refuseBinaryText } from "./text.ts";

export interface CreateTextOutput {
  workdir: string;
  path: string;
  created: true;
  bytes_written: number;
  revision: string;
}

export async function createTextFile(ws: Workspace, gate: MutationGate, t: Target, content: string): Promise<CreateTextOutput> {
  refuseBinaryText(t, content);
  // Measured before it is encoded: an oversized request is refused without a copy of it.
  if (Buffer.byteLength(content, "utf8") > t.wd.workdir.max_write_bytes) throw fail("WRITE_TOO_LARGE", t.alias, t.rel);
  const bytes = Buffer.from(content, "utf8");
  return gate.run(t.wd.workdir, async () => {
    const { revision } = publishNew(ws, t, bytes);
    return { workdir: t.alias, path: t.rel, created: true as const, bytes_written: bytes.length, revision };
  });
}
