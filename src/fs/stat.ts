// stat_file: lstat semantics through descriptors. The final component is opened as an object
// (O_PATH|O_NOFOLLOW on Linux) from the verified parent, so a final symlink reports itself with
// its own revision while a symlink in a parent component is SYMLINK_NOT_ALLOWED. A backend whose
// object opens cannot reach every file type (macOS: no O_PATH) answers through statBeneath,
// an fstatat on the verified parent, instead.

import fs, { type BigIntStats } from "node:fs";
import { withFd, type Target, type Workspace } from "./context.ts";
import { fail, openFailure } from "./fail.ts";
import { openAt } from "./open.ts";
import { mimeTypeFor } from "./mime.ts";
import { isoSeconds, revisionOf, typeOf, type ObjectType } from "./revision.ts";

export interface StatOutput {
  workdir: string;
  path: string;
  type: ObjectType;
  size: number | null;
  modified_at: string | null;
  mime_type: string | null;
  revision: string;
}

export function statFile(ws: Workspace, t: Target): StatOutput {
  const root = ws.rootFd(t);
  let st: BigIntStats;
  if (ws.native.statBeneath) {
    try {
      st = ws.native.statBeneath(root, t.parts);
    } catch (err) {
      throw openFailure(err, t.alias, t.rel, "read");
    }
  } else {
    st = withFd(openAt(ws, t, root, t.parts, "object", "read"), (f) => fs.fstatSync(f, { bigint: true }));
  }
  const type = typeOf(st);
  // `f.txt/` names a directory, as it does for the kernel (ENOTDIR): never the file itself.
  if (t.directoryOnly && type !== "directory") throw fail("NOT_A_DIRECTORY", t.alias, t.rel, "the path ends in '/' but does not name a directory");
  const name = t.parts[t.parts.length - 1] ?? "";
  return {
    workdir: t.alias,
    path: t.rel,
    type,
    size: type === "file" ? Number(st.size) : null,
    modified_at: isoSeconds(st),
    mime_type: type === "file" ? mimeTypeFor(name) : null,
    revision: revisionOf(st),
  };
}
