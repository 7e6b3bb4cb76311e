// find_files: depth-first walk from a validated directory, basename fnmatch (case-sensitive),
// regular files only. Every directory is re-opened from the workdir root by its relative path
// (kernel-checked, no symlink followed), so at most one directory descriptor is open at a time
// however deep or wide the tree. Hidden, denied and reserved entries are skipped and never
// descended; every child seen counts toward max_walk_entries before any filtering. The walk runs
// under search_timeout_seconds (SEARCH_TIMEOUT) and gives the event loop back every 25 ms, so a
// big tree never holds up other requests.

import type { Target, Workspace } from "./context.ts";
import { fail } from "./fail.ts";
import { compileFnmatch, MAX_GLOB_CHARS } from "./glob.ts";
import { entryKind, openWalkDir, readWalkDir, WalkClock } from "./walk.ts";

export interface FindOutput {
  matches: { path: string }[];
  returned: number;
  truncated: boolean;
}

interface Pending {
  parts: string[];
  rel: string;
}

export async function findFiles(ws: Workspace, t: Target, pattern: string, limit: number, signal?: AbortSignal): Promise<FindOutput> {
  if (pattern.length > MAX_GLOB_CHARS) throw fail("INVALID_ARGUMENT", t.alias, t.rel, `pattern must be at most ${MAX_GLOB_CHARS} characters`);
  const clock = new WalkClock(t, ws.registry.limits.search_timeout_seconds, signal, "find");
  const matcher = compileFnmatch(pattern);
  const maxWalk = ws.registry.limits.max_walk_entries;
  const root = ws.rootFd(t);
  const policy = t.wd.policy;
  const matches: { path: string }[] = [];
  const stack: Pending[] = [{ parts: t.parts, rel: t.rel }];
  let walked = 0;
  let truncated = false;
  let first = true;

  outer: while (stack.length > 0) {
    const dir = stack.pop() as Pending;
    const fd = openWalkDir(ws, t, root, dir, first);
    if (fd === null) continue;
    first = false;
    const subdirs: Pending[] = [];
    try {
      const entries = readWalkDir(ws, t, fd);
      if (entries === null) continue;
      for (const e of entries) {
        if (clock.tick()) await clock.pause();
        walked++;
        if (walked > maxWalk) {
          truncated = true;
          break outer;
        }
        if (!policy.entryVisible(dir.rel, e.name)) continue;
        const kind = entryKind(ws, fd, e);
        const rel = dir.rel === "" ? e.name : `${dir.rel}/${e.name}`;
        if (kind === "directory") subdirs.push({ parts: [...dir.parts, e.name], rel });
        else if (kind === "file" && matcher.test(e.name)) {
          if (matches.length === limit) {
            truncated = true;
            break outer;
          }
          matches.push({ path: rel });
        }
      }
    } finally {
      ws.native.closeFast(fd);
    }
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i] as Pending);
  }
  return { matches, returned: matches.length, truncated };
}
