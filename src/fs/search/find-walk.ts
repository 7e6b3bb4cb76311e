// find_files's walk, as either thread runs it. The main thread walks the call's tree and answers
// (./find.ts); the search worker walks sub-trees the main thread hands it and logs what it saw
// (./find-units.ts says how the two are stitched). Both run this one loop, so a sub-tree gives the
// same matches, the same counts and the same stops on either thread.
//
// The loop: depth-first from a validated directory, entries in name order, basename fnmatch
// (case-sensitive), regular files only. Every directory is re-opened from the workdir root by its
// relative path (kernel-checked, no symlink followed), so at most one directory descriptor is
// open at a time however deep or wide the tree. Hidden, denied and reserved entries are skipped
// and never descended; every child seen counts toward max_walk_entries before any filtering, and
// each directory is read keeping only as many of its smallest entries as that budget still
// allows, so one huge directory costs memory in proportion to the budget, not to its size. Ignore
// files and `exclude` (../walk-filter.ts) prune after the policy: an ignored or excluded
// directory is never opened.

import type { DirEntryInfo } from "../../../platform/fs/native.ts";
import type { GlobMatcher } from "../glob.ts";
import type { IgnoreLevel, WalkIgnore } from "../ignore/index.ts";
import type { LevelDecoder, LevelEncoder } from "../ignore/level-wire.ts";
import type { PathPolicy } from "../policy.ts";
import { childSub } from "../walk-filter.ts";
import { entryKind, openWalkDir, type WalkCaller, type WalkClock, WalkDirRead, type WalkNative } from "../walk.ts";
import type { WireDir } from "./search-protocol.ts";

/** What the walk needs of its workdir, on whichever thread it runs. */
export interface FindScope extends WalkNative, WalkCaller {
  readonly rootFd: number;
  readonly policy: PathPolicy;
  /** max_walk_entries. */
  readonly maxWalk: number;
}

/** A directory the walk has still to open. */
export interface FindDir {
  parts: string[];
  rel: string;
  /** Path below the walk root. */
  sub: string;
  /** The ignore rules in force in this directory's parent. */
  level: IgnoreLevel | null;
}

/** A directory as it crosses to the other thread (its ignore level as patterns). */
export function dirToWire(d: FindDir, levels: LevelEncoder): WireDir {
  return { parts: d.parts, rel: d.rel, sub: d.sub, level: levels.chain(d.level) };
}

/** A directory from the other thread, its ignore level compiled for this one. */
export function dirFromWire(w: WireDir, levels: LevelDecoder): FindDir {
  return { parts: w.parts, rel: w.rel, sub: w.sub, level: levels.chain(w.level) };
}

interface Open {
  dir: FindDir;
  fd: number;
  /** The ignore rules in force for this directory's entries (once it is read). */
  level: IgnoreLevel | null;
  /** Entries the read may keep. */
  budget: number;
  /** Until the directory is read: the read in progress (it may pause between chunks). */
  read: WalkDirRead | null;
  entries: DirEntryInfo[];
  next: number;
  subdirs: FindDir[];
}

/**
 * The walk as a resumable loop: `step()` is synchronous (the hot loop stays out of async code)
 * and returns true when the walk is over, false when the clock asks for a pause (it keeps its
 * place), or a promise to await before stepping again (the main thread waiting for the worker).
 * Subclasses say where the next directory comes from and what a match does; `Item` is what else
 * their stack may hold (the main thread's units).
 */
export abstract class FindWalkLoop<Item = never> {
  /** Entries seen, toward max_walk_entries. */
  walked = 0;
  truncated = false;
  /** What is left to walk, the next on top. */
  protected readonly stack: (FindDir | Item)[];
  protected cur: Open | null = null;
  private done = false;

  constructor(
    protected readonly scope: FindScope,
    private readonly matcher: GlobMatcher,
    protected readonly clock: WalkClock,
    readonly ignore: WalkIgnore | null,
    private readonly exclude: ((sub: string, name: string) => boolean) | null,
    start: FindDir,
    /** `start` is the call's walk root: failing to read it is the call's error, not a skip. */
    private first: boolean,
  ) {
    this.stack = [start];
  }

  /** The next directory to walk; null when there is none; a promise when one is not known yet. */
  protected abstract nextDir(): FindDir | null | Promise<void>;
  /** A matching file; false: the walk stops at it, truncated, without it. */
  protected abstract take(path: string): boolean;
  /** An entry the ignore rules left out (the worker's log marks where). */
  protected onIgnored(): void {}
  /** Ignore-file warnings raised by the directory just entered (`before`: the count before it). */
  protected onWarned(_before: number): void {}

  step(): boolean | Promise<void> {
    const { scope, clock } = this;
    const policy = scope.policy;
    for (;;) {
      if (this.done) return true;
      let c = this.cur;
      if (c === null) {
        const dir = this.nextDir();
        if (dir === null) return true;
        if (dir instanceof Promise) return dir;
        if (this.done) return true;
        const fd = openWalkDir(scope, scope, scope.rootFd, dir, this.first);
        if (fd === null) continue;
        const isRoot = this.first;
        this.first = false;
        c = this.cur = { dir, fd, level: null, read: null, entries: [], next: 0, subdirs: [], budget: scope.maxWalk - this.walked + 1 };
        c.read = new WalkDirRead(scope, scope, fd, c.budget, isRoot);
      }
      if (c.read !== null) {
        while (!c.read.step()) if (clock.due()) return false;
        c.entries = c.read.entries;
        c.read = null;
        const ignore = this.ignore;
        if (ignore !== null) {
          const before = ignore.warned;
          c.level = ignore.enterRead(c.dir.level, c.fd, c.dir.rel, c.entries, c.budget);
          if (ignore.warned !== before) this.onWarned(before);
        }
      }
      const { dir, fd, entries, subdirs, level } = c;
      const { ignore, exclude } = this;
      const maxWalk = scope.maxWalk;
      while (c.next < entries.length) {
        if (clock.tick()) return false;
        const e = entries[c.next++] as DirEntryInfo;
        if (++this.walked > maxWalk) return this.stop();
        if (!policy.entryVisible(dir.rel, e.name)) continue;
        const kind = entryKind(scope, fd, e);
        if (kind !== "directory" && kind !== "file") continue;
        if (ignore !== null && ignore.isIgnored(level, dir.rel, e.name, kind === "directory")) {
          ignore.ignored++;
          this.onIgnored();
          continue;
        }
        if (exclude !== null && exclude(childSub(dir.sub, e.name), e.name)) continue;
        // the path is built only for what is kept: most entries of a big walk are neither
        if (kind === "directory") subdirs.push({ parts: [...dir.parts, e.name], rel: dir.rel === "" ? e.name : `${dir.rel}/${e.name}`, sub: childSub(dir.sub, e.name), level });
        else if (this.matcher.test(e.name) && !this.take(dir.rel === "" ? e.name : `${dir.rel}/${e.name}`)) return this.stop();
      }
      this.close();
      this.pushInWalkOrder(subdirs);
    }
  }

  /** Directories to walk next, in walk order: the first ends on top. */
  protected pushInWalkOrder(dirs: readonly FindDir[]): void {
    for (let i = dirs.length - 1; i >= 0; i--) this.stack.push(dirs[i] as FindDir);
  }

  protected stop(): true {
    this.truncated = true;
    this.done = true;
    return true;
  }

  close(): void {
    if (this.cur !== null) this.scope.native.closeFast(this.cur.fd);
    this.cur = null;
  }
}
