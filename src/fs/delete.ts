// delete_file: a regular file only, opened read-only first (a file this process cannot read is
// refused), revision checked on the descriptor, re-checked by lstat of the name, then unlinked by
// name relative to the verified parent while the descriptor is still held, all under the parent's
// writers' lock (dir-lock.ts).

import { errnoCode } from "../errors.ts";
import type { Target, Workspace } from "./context.ts";
import { fail, mutationFailure } from "./fail.ts";
import type { MutationGate } from "./gate.ts";
import { assertUnchangedAt, withExistingFile } from "./publish.ts";

export interface DeleteFileOutput {
  workdir: string;
  path: string;
  deleted: true;
  bytes_deleted: number;
  revision_deleted: string;
}

export async function deleteFile(ws: Workspace, gate: MutationGate, t: Target, expectedRevision: string): Promise<DeleteFileOutput> {
  return gate.run(t.wd.workdir, () =>
    withExistingFile(ws, t, expectedRevision, false, (parent, file, revision) => {
      assertUnchangedAt(ws, t, parent, revision, "file");
      try {
        ws.native.unlinkAt(parent.fd, parent.name, false);
      } catch (err) {
        // only a writer outside serverfs can get in between (serverfs writers wait for the lock)
        if (errnoCode(err) === "ENOENT") throw fail("REVISION_CONFLICT", t.alias, t.rel, "file was removed meanwhile");
        throw mutationFailure(err, t.alias, t.rel);
      }
      return { workdir: t.alias, path: t.rel, deleted: true as const, bytes_deleted: Number(file.st.size), revision_deleted: revision };
    }, { lock: true }),
  );
}
