// delete_file: a regular file only, opened read-only first (a file this process cannot read is
// refused), revision checked on the descriptor, re-checked by lstat of the name, then unlinked by
// name relative to the verified parent while the descriptor is still held.

import { errnoCode } from "../errors.ts";
import { closeQuietly, type Target, type Workspace } from "./context.ts";
import { fail, mutationFailure } from "./fail.ts";
import type { MutationGate } from "./gate.ts";
import { openExistingFile, openParent } from "./publish.ts";
import { revisionOf } from "./revision.ts";

export interface DeleteFileOutput {
  workdir: string;
  path: string;
  deleted: true;
  bytes_deleted: number;
  revision_deleted: string;
}

export async function deleteFile(ws: Workspace, gate: MutationGate, t: Target, expectedRevision: string): Promise<DeleteFileOutput> {
  return gate.run(t.wd.workdir, async () => {
    const parent = openParent(ws, t, "mutate");
    try {
      const file = openExistingFile(ws, t, parent.fd);
      try {
        const revision = revisionOf(file.st);
        if (revision !== expectedRevision) throw fail("REVISION_CONFLICT", t.alias, t.rel);
        let now: string;
        try {
          now = revisionOf(ws.native.lstatChild(parent.fd, parent.name));
        } catch (err) {
          if (errnoCode(err) === "ENOENT") throw fail("REVISION_CONFLICT", t.alias, t.rel, "file was removed meanwhile");
          throw mutationFailure(err, t.alias, t.rel);
        }
        if (now !== revision) throw fail("REVISION_CONFLICT", t.alias, t.rel);
        try {
          ws.native.unlinkAt(parent.fd, parent.name, false);
        } catch (err) {
          throw mutationFailure(err, t.alias, t.rel);
        }
        return { workdir: t.alias, path: t.rel, deleted: true as const, bytes_deleted: Number(file.st.size), revision_deleted: revision };
      } finally {
        closeQuietly(file.fd);
      }
    } finally {
      closeQuietly(parent.fd);
    }
  });
}
