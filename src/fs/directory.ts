// create_directory (exactly one level, 0777 & ~umask) and delete_directory (never recursive:
// a physical emptiness scan that counts hidden, denied and reserved entries too, and never
// names a child in its error; from its revision check to the rmdir it holds the parent's
// writers' lock, dir-lock.ts).

import fs from "node:fs";
import { errnoCode } from "../errors.ts";
import { closeQuietly, type Target, type Workspace } from "./context.ts";
import { lockDirectories, type HeldLocks } from "./dir-lock.ts";
import { fail, mutationFailure } from "./fail.ts";
import type { MutationGate } from "./gate.ts";
import { openAt } from "./open.ts";
import { assertUnchangedAt, openParent } from "./publish.ts";
import { revisionOf } from "./revision.ts";

export interface CreateDirectoryOutput {
  workdir: string;
  path: string;
  created: true;
  revision: string;
}

export interface DeleteDirectoryOutput {
  workdir: string;
  path: string;
  deleted: true;
  revision_deleted: string;
}

export async function createDirectory(ws: Workspace, gate: MutationGate, t: Target): Promise<CreateDirectoryOutput> {
  return gate.run(t.wd.workdir, async () => {
    const parent = openParent(ws, t, "create");
    try {
      try {
        ws.native.mkdirAt(parent.fd, parent.name, 0o777);
      } catch (err) {
        if (errnoCode(err) === "EEXIST") throw fail("PATH_ALREADY_EXISTS", t.alias, t.rel);
        throw mutationFailure(err, t.alias, t.rel);
      }
      const fd = openAt(ws, t, parent.fd, [parent.name], "object", "mutate");
      try {
        return { workdir: t.alias, path: t.rel, created: true as const, revision: revisionOf(fs.fstatSync(fd, { bigint: true })) };
      } finally {
        closeQuietly(fd);
      }
    } finally {
      closeQuietly(parent.fd);
    }
  });
}

export async function deleteDirectory(ws: Workspace, gate: MutationGate, t: Target, expectedRevision: string): Promise<DeleteDirectoryOutput> {
  return gate.run(t.wd.workdir, async () => {
    const parent = openParent(ws, t, "mutate");
    let locks: HeldLocks | null = null;
    try {
      locks = await lockDirectories(ws, t, [parent.fd]);
      const fd = openAt(ws, t, parent.fd, [parent.name], "dirList", "mutate");
      try {
        const revision = revisionOf(fs.fstatSync(fd, { bigint: true }));
        if (revision !== expectedRevision) throw fail("REVISION_CONFLICT", t.alias, t.rel);
        let entries;
        try {
          entries = ws.native.readDir(fd);
        } catch (err) {
          throw mutationFailure(err, t.alias, t.rel);
        }
        if (entries.length > 0) throw fail("DIRECTORY_NOT_EMPTY", t.alias, t.rel);
        assertUnchangedAt(ws, t, parent, revision, "directory");
        try {
          ws.native.unlinkAt(parent.fd, parent.name, true);
        } catch (err) {
          const code = errnoCode(err);
          if (code === "ENOTEMPTY" || code === "EEXIST") throw fail("DIRECTORY_NOT_EMPTY", t.alias, t.rel);
          throw mutationFailure(err, t.alias, t.rel);
        }
        return { workdir: t.alias, path: t.rel, deleted: true as const, revision_deleted: revision };
      } finally {
        closeQuietly(fd);
      }
    } finally {
      locks?.release();
      closeQuietly(parent.fd);
    }
  });
}
