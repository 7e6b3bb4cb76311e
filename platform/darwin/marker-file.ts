// The macOS task marker the kernel shows for same-uid processes without entitlements: every task's
// leader inherits a read-only descriptor (fd 3) on `<per-user tmp>/serverfs-markers-<uid>/<run id>`,
// and every descendant inherits it in turn unless it closes it. proc_pidinfo(PROC_PIDLISTFDS) and
// proc_pidfdinfo(PROC_PIDFDVNODEPATHINFO) name that file for any process of our uid, including
// SIP-restricted binaries (/bin/sh, /bin/sleep, perl) whose environment KERN_PROCARGS2 hides. The
// SERVERFS_RUN_ID environment marker stays as the second signal (a process that closes all its
// descriptors keeps it, unless it is a restricted binary). Why this marker: docs/platform.md,
// "macOS: verified / written / checks to run on a Mac".
import { constants, lstatSync, mkdirSync, openSync, realpathSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { platformError } from "../errors.ts";
import { MARKER_UNREADABLE } from "../posix/process-table.ts";

/** One signal's answer: the marker found, none (read and absent), or the read failed. */
export type MarkerSignal = string | null | typeof MARKER_UNREADABLE;

/**
 * Combine the descriptor and environment signals. A marker from either wins. "No marker" needs at
 * least one signal read; if neither could be read the process may be ours, and the proof of stop
 * must not count it as gone.
 */
export function markerVerdict(fd: MarkerSignal, env: MarkerSignal): MarkerSignal {
  if (typeof fd === "string") return fd;
  if (typeof env === "string") return env;
  return fd === MARKER_UNREADABLE && env === MARKER_UNREADABLE ? MARKER_UNREADABLE : null;
}

/** Which of `markers` names a file directly in `dir` among a process's open vnode paths. */
export function markerFromPaths(paths: readonly string[], dir: string, markers: readonly string[]): string | null {
  const prefix = `${dir}/`;
  for (const path of paths) {
    if (!path.startsWith(prefix)) continue;
    const name = path.slice(prefix.length);
    if (markers.includes(name)) return name;
  }
  return null;
}

let cachedDir: string | null = null;

/** The per-user marker directory, as the kernel spells it (realpath: /var is /private/var). */
export function markerDirectory(): string {
  cachedDir ??= `${realpathSync(tmpdir())}/serverfs-markers-${process.getuid?.() ?? 0}`;
  return cachedDir;
}

function ensureDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  // Another user's directory (or a symlink) there would let them make our markers point anywhere.
  if (!st.isDirectory() || st.uid !== process.getuid?.() || (st.mode & 0o077) !== 0) {
    throw platformError("SPAWN_FAILED", "the task marker directory is not a private directory of this user");
  }
}

/** Open (creating) the marker file for `runId`; the caller passes the fd to the child and closes it. */
export function openMarker(runId: string): number {
  const dir = markerDirectory();
  try {
    ensureDirectory(dir);
    return openSync(`${dir}/${runId}`, constants.O_RDONLY | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if ((err as { code?: unknown })?.code === "SPAWN_FAILED") throw err;
    throw platformError("SPAWN_FAILED", "the task marker file could not be created");
  }
}

/** Remove a marker once its task is proved gone (a later sweep of the same id then finds nothing). */
export function removeMarker(runId: string): void {
  try {
    unlinkSync(`${markerDirectory()}/${runId}`);
  } catch {
    // already gone
  }
}
