// Child-subreaper support. With PR_SET_CHILD_SUBREAPER set, an orphaned descendant (a tool that
// daemonized, a grandchild whose parent died) is re-parented to the Bridge instead of PID 1, so it
// stays visible to the descendant walk. Bun does not reap such adopted processes, so the
// containment engine reaps them itself, one specific pid at a time: waitpid(-1) would steal the
// exit statuses of Bun's own children.
import { ptr } from "bun:ffi";
import { linuxLibc } from "./libc.ts";

const PR_SET_CHILD_SUBREAPER = 36;
const PR_GET_CHILD_SUBREAPER = 37;
const WNOHANG = 1;

let subreaper = false;

/** Make this process a child subreaper. Idempotent; false when the kernel refused. */
export function becomeLinuxSubreaper(): boolean {
  if (subreaper) return true;
  subreaper = linuxLibc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) === 0;
  return subreaper;
}

/**
 * Stop being a subreaper. The Bridge never needs this; a test runner does, so that orphans of
 * unrelated tests that run later in the same process go back to PID 1 and get reaped.
 */
export function leaveLinuxSubreaper(): boolean {
  const ok = linuxLibc().prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) === 0;
  if (ok) subreaper = false;
  return ok;
}

export function isLinuxSubreaper(): boolean {
  const flag = new Int32Array(1);
  if (linuxLibc().prctl(PR_GET_CHILD_SUBREAPER, BigInt(ptr(flag)), 0, 0, 0) !== 0) return false;
  return flag[0] !== 0;
}

/** Reap one adopted zombie. Returns true when it was collected. */
export function reapAdopted(pid: number): boolean {
  const status = new Int32Array(1);
  return linuxLibc().waitpid(pid, ptr(status), WNOHANG) === pid;
}
