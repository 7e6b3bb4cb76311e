// Temps whose writer died are removed. A serve killed in the middle of a write (SIGKILL, OOM,
// power loss) leaves its temp file behind: invisible to every tool (a reserved name), but it holds
// disk space, and on a full disk that space is what the next write needs. Each temp's name records
// its owner (./temp-name.ts); a temp is removed only when its owner is definitely gone: in the same
// pid space, no process has that pid, or the process with that pid started at another time. A
// live owner's temp, one whose owner cannot be checked, and a temp of the older unowned layout
// are always kept. Two passes find them:
// - before its first write in a directory, each serve sweeps that directory (sweepBeforeWrite);
// - once `initialize` has been answered, each serve walks every read-write workdir once, bounded
//   in entries read and in depth, yielding between steps so requests are answered meanwhile
//   (sweepWorkdirs). Its removals go through the mutation gate, one directory at a time, so a
//   workdir held by an agent task's writer lease is left alone.
// Only regular files are removed, by name relative to the directory's held descriptor.

import fs from "node:fs";
import type { Workdir } from "../config/types.ts";
import { ownerState } from "../../platform/fs/process-stamp.ts";
import type { DirSmallest } from "../../platform/fs/native.ts";
import { closeQuietly, type Workspace } from "./context.ts";
import type { MutationGate } from "./gate.ts";
import { RESERVED_TEMP_PREFIX } from "./policy.ts";
import { tempOwner } from "./temp-name.ts";

/** Temps looked at per directory and sweep; any more wait for the next sweep there. */
export const TEMPS_PER_DIRECTORY = 256;
/** The start-up pass reads at most this many directory entries per workdir... */
export const SWEEP_MAX_ENTRIES = 20_000;
/** ...in directories at most this deep (the root is depth 0, its sub-directories depth 1). */
export const SWEEP_MAX_DEPTH = 8;
/** Directories remembered as swept by one serve; past this the memory starts over. */
const REMEMBERED_DIRECTORIES = 4096;

export interface DirectorySweep {
  removed: number;
  /** Temps kept: a live owner, one that cannot be checked, or no owner recorded. */
  kept: number;
}

function isOwnedTemp(name: string): boolean {
  return name.startsWith(RESERVED_TEMP_PREFIX) && tempOwner(name) !== null;
}

function isTemp(name: string): boolean {
  return name.startsWith(RESERVED_TEMP_PREFIX);
}

/** Remove the temps among `names` in the directory `dirFd` whose owner is gone. Never throws. */
export function removeOrphans(ws: Workspace, dirFd: number, names: readonly string[]): DirectorySweep {
  const out: DirectorySweep = { removed: 0, kept: 0 };
  for (const name of names) {
    const owner = tempOwner(name);
    if (owner === null || ownerState(owner) !== "gone") {
      out.kept++;
      continue;
    }
    try {
      if (!ws.native.lstatChild(dirFd, name).isFile()) continue;
      ws.native.unlinkAt(dirFd, name, false);
      out.removed++;
    } catch {
      // already removed by another sweeper, or the directory went away
    }
  }
  return out;
}

function drain(sel: DirSmallest): string[] {
  while (sel.step());
  return sel.result().entries.map((e) => e.name);
}

/**
 * Before this serve's first write in the directory held by `parentFd`: remove the temps there
 * whose writer died. Never throws; a directory it cannot list is simply not swept.
 */
export function sweepBeforeWrite(ws: Workspace, parentFd: number): void {
  let key: string;
  try {
    const st = fs.fstatSync(parentFd, { bigint: true });
    key = `${st.dev}:${st.ino}`;
  } catch {
    return;
  }
  const swept = ws.sweptDirectories;
  if (swept.has(key)) return;
  if (swept.size >= REMEMBERED_DIRECTORIES) swept.clear();
  swept.add(key);
  let fd = -1;
  try {
    fd = ws.native.openBeneath(parentFd, [], "dirList");
    removeOrphans(ws, fd, drain(ws.native.readDirSmallest(fd, TEMPS_PER_DIRECTORY, isOwnedTemp, true)));
  } catch {
    // not listable (no read permission, vanished): the next serve tries again
  } finally {
    if (fd !== -1) closeQuietly(fd);
  }
}

export interface SweepReport {
  /** Read-write workdirs walked. */
  workdirs: number;
  directories: number;
  /** Directory entries read, over all workdirs. */
  entries: number;
  removed: number;
  kept: number;
  /** A bound (entries or depth) left part of some workdir unvisited. */
  truncated: boolean;
}

const pause = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

export interface SweepBounds {
  maxEntries: number;
  maxDepth: number;
}

/**
 * The start-up pass: every read-write workdir, breadth first, at most `maxEntries` entries read
 * per workdir (SWEEP_MAX_ENTRIES) in directories at most `maxDepth` deep (SWEEP_MAX_DEPTH).
 * Visible directories are entered (hidden, denied and reserved ones are not, as for every walk;
 * the per-write sweep covers the rest). It gives the event loop back after every step of a
 * directory read. Never throws.
 */
export async function sweepWorkdirs(ws: Workspace, gate: MutationGate, bounds: SweepBounds = { maxEntries: SWEEP_MAX_ENTRIES, maxDepth: SWEEP_MAX_DEPTH }): Promise<SweepReport> {
  const report: SweepReport = { workdirs: 0, directories: 0, entries: 0, removed: 0, kept: 0, truncated: false };
  for (const w of ws.registry.workdirs) {
    if (w.read_only) continue;
    report.workdirs++;
    try {
      await sweepWorkdir(ws, gate, w, bounds, report);
    } catch {
      // an unusable root: its calls answer with their own codes
    }
  }
  return report;
}

async function sweepWorkdir(ws: Workspace, gate: MutationGate, w: Workdir, bounds: SweepBounds, report: SweepReport): Promise<void> {
  const t = ws.prepare(w.alias, "");
  const root = ws.rootFd(t);
  const policy = t.wd.policy;
  let left = bounds.maxEntries;
  const queue: { parts: string[]; rel: string; depth: number }[] = [{ parts: [], rel: "", depth: 0 }];
  for (let q = 0; q < queue.length; q++) {
    if (left <= 0) {
      report.truncated = true;
      return;
    }
    const dir = queue[q]!;
    let fd: number;
    try {
      fd = ws.native.openBeneath(root, dir.parts, "dirList");
    } catch {
      continue;
    }
    try {
      report.directories++;
      let read = 0;
      const keep = (name: string): boolean => {
        read++;
        return isTemp(name) || policy.entryVisible(dir.rel, name);
      };
      let sel: DirSmallest;
      let entries;
      try {
        sel = ws.native.readDirSmallest(fd, left, keep, true);
        // the entry bound holds inside a directory too: a huge one is read only so far
        let more = true;
        while (read < left && (more = sel.step())) await pause();
        if (more) report.truncated = true;
        entries = sel.result();
      } catch {
        continue;
      }
      report.entries += read;
      left -= read;
      if (entries.visible > entries.entries.length) report.truncated = true;
      const temps: string[] = [];
      for (const e of entries.entries) {
        if (isTemp(e.name)) {
          temps.push(e.name);
          continue;
        }
        if (e.kind === "file" || e.kind === "other" || e.kind === "symlink") continue;
        if (e.kind === "unknown") {
          try {
            if (!ws.native.lstatChild(fd, e.name).isDirectory()) continue;
          } catch {
            continue;
          }
        }
        if (dir.depth + 1 > bounds.maxDepth) {
          report.truncated = true;
          continue;
        }
        queue.push({ parts: [...dir.parts, e.name], rel: dir.rel === "" ? e.name : `${dir.rel}/${e.name}`, depth: dir.depth + 1 });
      }
      if (temps.length > 0) {
        try {
          const done = await gate.run(w, async () => removeOrphans(ws, fd, temps));
          report.removed += done.removed;
          report.kept += done.kept;
        } catch {
          // the writer lease is held elsewhere (an agent task): its writes sweep later
          report.kept += temps.length;
        }
      }
    } finally {
      closeQuietly(fd);
    }
    await pause();
  }
}
