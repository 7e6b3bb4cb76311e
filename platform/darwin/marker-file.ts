// The macOS task marker the kernel shows for same-uid processes without entitlements: every task's
// leader inherits a read-only descriptor (fd 3) on `<per-user tmp>/serverfs-markers-<uid>/<run id>`,
// and every descendant inherits it in turn unless it closes it. proc_pidinfo(PROC_PIDLISTFDS) and
// proc_pidfdinfo(PROC_PIDFDVNODEPATHINFO) name that file for any process of our uid, including
// SIP-restricted binaries (/bin/sh, /bin/sleep, perl) whose environment KERN_PROCARGS2 hides. The
// SERVERFS_RUN_ID environment marker stays as the second signal (a process that closes all its
// descriptors keeps it, unless it is a restricted binary). Why this marker: docs/platform.md,
// "macOS: verified / written / checks to run on a Mac".
import { closeSync, constants, lstatSync, mkdirSync, openSync, readSync, realpathSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { platformError } from "../errors.ts";
import { MARKER_UNREADABLE } from "../posix/process-table.ts";
import type { ProcIds } from "./lineage.ts";

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

/**
 * Write the leader's lineage ids into its marker file, so a sweep after a Bridge crash can still
 * tell the leader's orphans (platform/docs: "macOS: the stop proof"). Best effort: without them the
 * sweep finds by marker and descendants only.
 */
export function recordLeaderIds(runId: string, ids: ProcIds): void {
  try {
    const fd = openSync(`${markerDirectory()}/${runId}`, constants.O_WRONLY | constants.O_TRUNC | constants.O_NOFOLLOW);
    try {
      writeSync(fd, `${ids.unique} ${ids.parentUnique} ${ids.version} ${ids.parentVersion}\n`);
    } finally {
      closeSync(fd);
    }
  } catch {
    // the marker file is gone (a task that already ended) or not ours to write
  }
}

/** The leader ids a marker file holds, or null. Pure over the file's text; exported for tests. */
export function parseLeaderIds(text: string): ProcIds | null {
  const m = /^(\d{1,20}) (\d{1,20}) (-?\d{1,10}) (-?\d{1,10})\n$/.exec(text);
  if (!m) return null;
  const unique = BigInt(m[1]!);
  const parentUnique = BigInt(m[2]!);
  if (unique >= 2n ** 64n || parentUnique >= 2n ** 64n) return null;
  return { unique, parentUnique, version: Number(m[3]) | 0, parentVersion: Number(m[4]) | 0 };
}

/** The leader ids recorded for `runId`, or null (none recorded, or not a record). Reads 128 bytes at most. */
export function leaderIdsOf(runId: string): ProcIds | null {
  try {
    const fd = openSync(`${markerDirectory()}/${runId}`, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const buffer = Buffer.alloc(128);
      const got = readSync(fd, buffer, 0, buffer.length, 0);
      return parseLeaderIds(buffer.toString("latin1", 0, got));
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}
