// The writers' directory lock: every revision-guarded mutation (edit_text_file, upload_binary_file
// with overwrite, delete_file, delete_directory, move_file) holds it on each directory whose
// entries it replaces, removes or adds, from its revision check through its rename or unlink, so
// two serverfs writers can never both pass the check and then both publish (the second would
// silently undo the first). The lock is the directory's own, not the file's: a rename replaces
// the file's inode, so a waiter on the file would end up holding the replaced one.
// - Order: taken inside the mutation gate (with the Agent Bridge, after the workdir's writer
//   lease), and a move takes its two directories in ascending (dev, ino) order, so no two
//   writers can each hold what the other waits for.
// - Bounded: non-blocking attempts with a doubling pause (1 ms up to 50 ms) until
//   [limits] file_lock_wait_ms has passed, then FILE_BUSY and nothing changed; the caller retries.
// - Readers never take it. Writers outside serverfs ignore it (it is advisory): for them the
//   revision is re-checked right before the rename or unlink, which narrows the window to that gap.
import type { BigIntStats } from "node:fs";
import fs from "node:fs";
import path from "node:path";
import { deploymentPaths } from "../config/paths.ts";
import type { DirectoryLock } from "../../platform/fs/native.ts";
import type { Target, Workspace } from "./context.ts";
import { fail, mutationFailure } from "./fail.ts";

const FIRST_PAUSE_MS = 1;
const LONGEST_PAUSE_MS = 50;

/** Where a backend that cannot lock a directory itself (Windows) keeps lock files: never inside a workdir. */
const lockFilesDirs = new WeakMap<Workspace, string>();

function lockFilesDir(ws: Workspace): string {
  let dir = lockFilesDirs.get(ws);
  if (dir === undefined) {
    dir = path.join(deploymentPaths(ws.registry).locksDir, "dirs");
    lockFilesDirs.set(ws, dir);
  }
  return dir;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Ascending (dev, ino): the one order in which every writer takes several directories' locks. */
function compareIds(a: BigIntStats, b: BigIntStats): number {
  if (a.dev !== b.dev) return a.dev < b.dev ? -1 : 1;
  return a.ino < b.ino ? -1 : a.ino > b.ino ? 1 : 0;
}

/** `dirFds` without repeats of one directory, in the one global order every writer uses. */
function lockOrder(t: Target, dirFds: readonly number[]): number[] {
  const seen = new Map<string, { fd: number; st: BigIntStats }>();
  for (const fd of dirFds) {
    let st: BigIntStats;
    try {
      st = fs.fstatSync(fd, { bigint: true });
    } catch (err) {
      throw mutationFailure(err, t.alias, t.rel);
    }
    const key = `${st.dev}:${st.ino}`;
    if (!seen.has(key)) seen.set(key, { fd, st });
  }
  return [...seen.values()].sort((a, b) => compareIds(a.st, b.st)).map((d) => d.fd);
}

async function acquire(ws: Workspace, t: Target, dirFd: number, deadline: number): Promise<DirectoryLock> {
  for (let wait = FIRST_PAUSE_MS; ; wait = Math.min(wait * 2, LONGEST_PAUSE_MS)) {
    let lock: DirectoryLock | null;
    try {
      lock = ws.native.tryLockDirectory(dirFd, lockFilesDir(ws));
    } catch (err) {
      throw mutationFailure(err, t.alias, t.rel);
    }
    if (lock !== null) return lock;
    const left = deadline - performance.now();
    if (left <= 0) throw fail("FILE_BUSY", t.alias, t.rel);
    await pause(Math.min(wait, left));
  }
}

/** Every lock a mutation holds; release (idempotent) lets them go in reverse order. */
export interface HeldLocks {
  release(): void;
}

/**
 * Take the writers' lock of every directory in `dirFds` (descriptors the caller holds open until
 * it releases). FILE_BUSY, holding nothing, when one stays held by another writer for
 * file_lock_wait_ms; `t` is what that error, or a failure to lock, names.
 */
export async function lockDirectories(ws: Workspace, t: Target, dirFds: readonly number[]): Promise<HeldLocks> {
  const deadline = performance.now() + ws.registry.limits.file_lock_wait_ms;
  const held: DirectoryLock[] = [];
  const release = () => {
    for (let lock = held.pop(); lock !== undefined; lock = held.pop()) lock.release();
  };
  try {
    for (const fd of lockOrder(t, dirFds)) held.push(await acquire(ws, t, fd, deadline));
  } catch (err) {
    release();
    throw err;
  }
  return { release };
}
