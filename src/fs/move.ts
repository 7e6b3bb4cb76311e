// move_file: rename a regular file or a directory within ONE workdir, never replacing anything.
// Both names went through the full path policy (prepare), both parents are opened through the
// kernel-checked resolution, and the rename itself goes between those two held descriptors with
// the kernel's no-replace flag (FsNative.renameNoReplace): a destination that appears after every
// check of ours is still refused (EEXIST → PATH_ALREADY_EXISTS), not overwritten.
// The source's revision token is checked on its descriptor and again, by lstat of its name,
// right before the rename, as delete_file and delete_directory do, with the writers' locks of
// both parents held throughout (dir-lock.ts). For a directory that token is the directory's own
// (stat_file's): it changes when a direct entry is added, removed or renamed, or when the
// directory's own metadata changes, not when something deeper below changes.

import fs, { type BigIntStats } from "node:fs";
import { errnoCode } from "../errors.ts";
import { closeQuietly, type Target, type Workspace } from "./context.ts";
import { lockDirectories, type HeldLocks } from "./dir-lock.ts";
import { fail, mutationFailure, openFailure } from "./fail.ts";
import type { MutationGate } from "./gate.ts";
import { openAt } from "./open.ts";
import { assertUnchangedAt, openParent, publishedRevision, syncDirectory } from "./publish.ts";
import { revisionOf } from "./revision.ts";

export interface MoveOutput {
  workdir: string;
  source: string;
  destination: string;
  moved: true;
  type: "file" | "directory";
  revision_before: string;
  revision: string;
}

/** What may move: a regular file or a directory; a symlink and special files are refused. */
function movableType(st: BigIntStats, t: Target): "file" | "directory" {
  if (st.isFile()) {
    if (t.directoryOnly) throw fail("INVALID_PATH", t.alias, t.rel, "source path ends in '/', '.' or '..' but is a file");
    return "file";
  }
  if (st.isDirectory()) return "directory";
  if (st.isSymbolicLink()) throw fail("SYMLINK_NOT_ALLOWED", t.alias, t.rel);
  throw fail("UNSUPPORTED_FILE_TYPE", t.alias, t.rel, "not a regular file or directory (fifo, socket or device)");
}

/**
 * Hidden, reserved and slash-free deny rules judge each name on its own, so a directory's
 * descendants keep their verdict wherever it moves (its old and new names both passed the
 * policy). A deny glob with `/` judges the whole path: moving `build` would turn a denied
 * `build/out/x` into an allowed `b2/out/x`. Where such rules exist, directories do not move; files
 * do, since both of their full paths are checked.
 */
function refusePathRuleEscape(src: Target): void {
  if (src.wd.policy.hasPathRules) {
    throw fail("DENIED_PATH", src.alias, src.rel, "this workdir has deny rules containing '/', which moving a directory could sidestep; move its files instead");
  }
}

/**
 * Refuse moving the directory `source` to a destination whose parent is that directory or lies
 * below it. By identity (dev/ino of every ancestor of the destination), not by spelling, so a
 * case-folded or otherwise different spelling of the same directory is caught too; the kernel's
 * own check (EINVAL) stays the last word under concurrent renames.
 */
function refuseIntoOwnSubtree(ws: Workspace, src: Target, dst: Target, source: BigIntStats): void {
  const parentParts = dst.parts.slice(0, -1);
  for (let depth = 1; depth <= parentParts.length; depth++) {
    const fd = openAt(ws, dst, ws.rootFd(dst), parentParts.slice(0, depth), "object", "create");
    let st: BigIntStats;
    try {
      st = fs.fstatSync(fd, { bigint: true });
    } finally {
      closeQuietly(fd);
    }
    if (st.dev === source.dev && st.ino === source.ino) throw fail("MOVE_INTO_SELF", src.alias, src.rel);
  }
}

/** The destination name must be free: anything there (a symlink or a dangling one included) is never replaced. */
function refuseExisting(ws: Workspace, dst: Target, parent: { fd: number; name: string }): void {
  try {
    ws.native.lstatChild(parent.fd, parent.name);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return;
    throw openFailure(err, dst.alias, dst.rel, "create");
  }
  throw fail("PATH_ALREADY_EXISTS", dst.alias, dst.rel);
}

export async function moveFile(ws: Workspace, gate: MutationGate, src: Target, dst: Target, expectedRevision: string): Promise<MoveOutput> {
  return gate.run(src.wd.workdir, async () => {
    const sp = openParent(ws, src, "mutate");
    try {
      const dp = openParent(ws, dst, "create");
      let locks: HeldLocks | null = null;
      try {
        // both directories change (an entry leaves one, arrives in the other): both locks, in the global order
        locks = await lockDirectories(ws, src, [sp.fd, dp.fd]);
        const obj = openAt(ws, src, sp.fd, [sp.name], "object", "mutate");
        try {
          const st = fs.fstatSync(obj, { bigint: true });
          const type = movableType(st, src);
          if (type === "file" && dst.directoryOnly) throw fail("INVALID_PATH", dst.alias, dst.rel, "destination path ends in '/', '.' or '..' but the source is a file");
          const revision = revisionOf(st);
          if (revision !== expectedRevision) throw fail("REVISION_CONFLICT", src.alias, src.rel);
          if (type === "directory") {
            refusePathRuleEscape(src);
            refuseIntoOwnSubtree(ws, src, dst, st);
          }
          refuseExisting(ws, dst, dp);
          assertUnchangedAt(ws, src, sp, revision, type);
          try {
            ws.native.renameNoReplace(sp.fd, sp.name, dp.fd, dp.name);
          } catch (err) {
            throw renameFailure(ws, err, src, dst, sp, type, st);
          }
          syncDirectory(ws, dp.fd);
          syncDirectory(ws, sp.fd);
          return {
            workdir: src.alias,
            source: src.rel,
            destination: dst.rel,
            moved: true as const,
            type,
            revision_before: revision,
            revision: movedRevision(ws, dst, dp, obj),
          };
        } finally {
          closeQuietly(obj);
        }
      } finally {
        locks?.release();
        closeQuietly(dp.fd);
      }
    } finally {
      closeQuietly(sp.fd);
    }
  });
}

/**
 * The moved object's revision, as the next stat_file of the destination will report it (rename
 * moves ctime, and a moved directory's `..` changes): from lstat of the new name, or from the
 * still-held descriptor if that name is already gone again.
 */
function movedRevision(ws: Workspace, dst: Target, dp: { fd: number; name: string }, obj: number): string {
  try {
    return revisionOf(ws.native.lstatChild(dp.fd, dp.name));
  } catch {
    return publishedRevision(dst, obj);
  }
}

function renameFailure(
  ws: Workspace,
  err: unknown,
  src: Target,
  dst: Target,
  sp: { fd: number; name: string },
  type: "file" | "directory",
  st: BigIntStats,
): Error {
  const code = errnoCode(err);
  // the kernel's answer to a destination that appeared after our checks: nothing was replaced
  if (code === "EEXIST" || code === "ENOTEMPTY") return fail("PATH_ALREADY_EXISTS", dst.alias, dst.rel);
  if (code === "EXDEV") return fail("CROSS_DEVICE_MOVE", src.alias, src.rel);
  if (code === "ENOENT") {
    try {
      ws.native.lstatChild(sp.fd, sp.name);
    } catch {
      return fail("REVISION_CONFLICT", src.alias, src.rel, `${type} was removed meanwhile`);
    }
    return fail("PARENT_NOT_FOUND", dst.alias, dst.rel);
  }
  if (code === "EINVAL" && type === "directory") {
    // a concurrent rename may have put the destination below the source since our check
    try {
      refuseIntoOwnSubtree(ws, src, dst, st);
    } catch (again) {
      return again as Error;
    }
  }
  return mutationFailure(err, src.alias, src.rel);
}
