// find_files: depth-first walk from a validated directory, basename fnmatch (case-sensitive),
// regular files only. Every directory is re-opened from the workdir root by its relative path
// (kernel-checked, no symlink followed), so at most one directory descriptor is open at a time
// however deep or wide the tree. Hidden, denied and reserved entries are skipped and never
// descended; every child seen counts toward max_walk_entries before any filtering, and each
// directory is read keeping only as many of its smallest entries as that budget still allows, so
// one huge directory costs memory in proportion to the budget, not to its size. The walk runs
// under search_timeout_seconds (SEARCH_TIMEOUT) and gives the event loop back every 25 ms, so a
// big tree never holds up other requests. Ignore files and `exclude` (./walk-filter.ts) prune
// after the policy: an ignored or excluded directory is never opened.

import type { Target, Workspace } from "./context.ts";
import { fail } from "./fail.ts";
import { compileFnmatch, MAX_GLOB_CHARS, type GlobMatcher } from "./glob.ts";
import type { DirEntryInfo } from "../../platform/fs/native.ts";
import { entryKind, openWalkDir, WalkClock, WalkDirRead } from "./walk.ts";
import type { IgnoreLevel, WalkIgnore } from "./ignore/index.ts";
import { childSub, compileExclude, walkIgnoreFor, type WalkFilterArgs } from "./walk-filter.ts";

export interface FindOutput {
  matches: { path: string }[];
  returned: number;
  truncated: boolean;
  /** Entries ignore files left out (0 with include_ignored or respect_ignore_files = false). */
  ignored: number;
  /** Ignore files that were cut, held too many patterns or could not be read. */
  ignore_warnings?: string[];
}

interface Pending {
  parts: string[];
  rel: string;
  /** Path below the walk root. */
  sub: string;
  /** The ignore rules in force in this directory's parent. */
  level: IgnoreLevel | null;
}

interface Open {
  dir: Pending;
  fd: number;
  /** The ignore rules in force for this directory's entries (once it is read). */
  level: IgnoreLevel | null;
  /** Entries the read may keep. */
  budget: number;
  /** Until the directory is read: the read in progress (it may pause between chunks). */
  read: WalkDirRead | null;
  entries: DirEntryInfo[];
  next: number;
  subdirs: Pending[];
}

export async function findFiles(ws: Workspace, t: Target, pattern: string, limit: number, signal?: AbortSignal, filter: WalkFilterArgs = {}): Promise<FindOutput> {
  if (pattern.length > MAX_GLOB_CHARS) throw fail("INVALID_ARGUMENT", t.alias, t.rel, `pattern must be at most ${MAX_GLOB_CHARS} characters`);
  const exclude = compileExclude(t, filter.exclude);
  const clock = new WalkClock(t, ws.registry.limits.search_timeout_seconds, signal, "find", 16);
  const walk = new FindWalk(ws, t, compileFnmatch(pattern), limit, clock, walkIgnoreFor(ws, t, filter), exclude);
  try {
    while (!walk.step()) await clock.pause();
  } finally {
    walk.close();
    clock.finished();
  }
  const out: FindOutput = { matches: walk.matches, returned: walk.matches.length, truncated: walk.truncated, ignored: walk.ignore?.ignored ?? 0 };
  const warnings = walk.ignore?.warnings() ?? [];
  if (warnings.length > 0) out.ignore_warnings = warnings;
  return out;
}

/**
 * The walk as a resumable loop: `step()` is synchronous (the hot loop stays out of the async
 * function) and returns false when the clock asks for a pause, keeping its place.
 */
class FindWalk {
  readonly matches: { path: string }[] = [];
  truncated = false;
  private readonly stack: Pending[];
  private readonly root: number;
  private readonly maxWalk: number;
  private cur: Open | null = null;
  private walked = 0;
  private first = true;
  private done = false;

  constructor(
    private readonly ws: Workspace,
    private readonly t: Target,
    private readonly matcher: GlobMatcher,
    private readonly limit: number,
    private readonly clock: WalkClock,
    readonly ignore: WalkIgnore | null,
    private readonly exclude: ((sub: string, name: string) => boolean) | null,
  ) {
    this.stack = [{ parts: t.parts, rel: t.rel, sub: "", level: ignore === null ? null : ignore.start(t.parts).level }];
    this.root = ws.rootFd(t);
    this.maxWalk = ws.registry.limits.max_walk_entries;
  }

  /** True when the walk is over; false when it paused for the event loop. */
  step(): boolean {
    const { ws, t, clock } = this;
    const policy = t.wd.policy;
    for (;;) {
      if (this.done) return true;
      let c = this.cur;
      if (c === null) {
        const dir = this.stack.pop();
        if (dir === undefined) return true;
        const fd = openWalkDir(ws, t, this.root, dir, this.first);
        if (fd === null) continue;
        const isRoot = this.first;
        this.first = false;
        c = this.cur = { dir, fd, level: null, read: null, entries: [], next: 0, subdirs: [], budget: this.maxWalk - this.walked + 1 };
        c.read = new WalkDirRead(ws, t, fd, c.budget, isRoot);
      }
      if (c.read !== null) {
        while (!c.read.step()) if (clock.due()) return false;
        c.entries = c.read.entries;
        c.read = null;
        if (this.ignore !== null) c.level = this.ignore.enterRead(c.dir.level, c.fd, c.dir.rel, c.entries, c.budget);
      }
      const { dir, fd, entries, subdirs, level } = c;
      const { ignore, exclude } = this;
      while (c.next < entries.length) {
        if (clock.tick()) return false;
        const e = entries[c.next++] as DirEntryInfo;
        if (++this.walked > this.maxWalk) return this.stop();
        if (!policy.entryVisible(dir.rel, e.name)) continue;
        const kind = entryKind(ws, fd, e);
        if (kind !== "directory" && kind !== "file") continue;
        if (ignore !== null && ignore.isIgnored(level, dir.rel, e.name, kind === "directory")) {
          ignore.ignored++;
          continue;
        }
        if (exclude !== null && exclude(childSub(dir.sub, e.name), e.name)) continue;
        // the path is built only for what is kept: most entries of a big walk are neither
        if (kind === "directory") subdirs.push({ parts: [...dir.parts, e.name], rel: dir.rel === "" ? e.name : `${dir.rel}/${e.name}`, sub: childSub(dir.sub, e.name), level });
        else if (this.matcher.test(e.name)) {
          if (this.matches.length === this.limit) return this.stop();
          this.matches.push({ path: dir.rel === "" ? e.name : `${dir.rel}/${e.name}` });
        }
      }
      this.close();
      for (let i = subdirs.length - 1; i >= 0; i--) this.stack.push(subdirs[i] as Pending);
    }
  }

  private stop(): true {
    this.truncated = true;
    this.done = true;
    return true;
  }

  close(): void {
    if (this.cur !== null) this.ws.native.closeFast(this.cur.fd);
    this.cur = null;
  }
}
