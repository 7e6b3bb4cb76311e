// directory_tree (docs/tools.md, `directory_tree`): a nested view of a directory, level by level
// (breadth first), so a bounded answer shows the top of the tree before any deep corner of it.
// Each directory is re-opened from the workdir root by its relative parts (kernel-checked, no
// symlink followed) and read with the bounded selection every walker uses, keeping only as many
// of its smallest visible names as the answer can still hold: memory stays O(limit) however
// large a directory is. Hidden, denied and reserved names are filtered on the full
// workdir-relative path, exactly as list_directory and find_files do, and .git is a hidden
// directory like any other (as for find_files). Symlinks are listed as symlinks, never followed.
// Every name seen counts toward max_walk_entries, hidden ones included; the walk stops after the
// directory that reaches it. The walk runs under search_timeout_seconds (SEARCH_TIMEOUT) and gives
// the event loop back every 25 ms. Ignore files and `exclude` (./walk-filter.ts) filter names in
// the same bounded read, after the policy, so what they leave out takes no room in the answer;
// an ignored or excluded directory is not shown and never read.

import { ServerfsError } from "../errors.ts";
import type { Target, Workspace } from "./context.ts";
import { fail, faultFailure } from "./fail.ts";
import { typeOf, type ObjectType } from "./revision.ts";
import { exhausted, openWalkDir, readDirPaced, WalkClock } from "./walk.ts";
import type { DirSelection } from "../../platform/fs/native.ts";
import type { IgnoreLevel, WalkIgnore } from "./ignore/index.ts";
import { childSub, compileExclude, walkIgnoreFor, type WalkFilterArgs } from "./walk-filter.ts";

export const DEFAULT_TREE_DEPTH = 3;
/** Deeper requests are clamped: past a few levels a tree is better explored from a sub-directory. */
export const MAX_TREE_DEPTH = 10;

export interface TreeNode {
  name: string;
  type: ObjectType;
  /** Files only: bytes on disk (st_size). */
  size?: number;
  /** Directories that were read: their visible entries in name order. Absent: not read. */
  children?: TreeNode[];
  /** Directories only: the entry limit or the walk cap left some (or all) of its entries out. */
  truncated?: true;
}

export interface DirectoryTreeOutput {
  workdir: string;
  path: string;
  max_depth: number;
  limit: number;
  tree: TreeNode;
  /** Nodes returned below the root. */
  returned: number;
  /** The entry limit or the walk cap left something out; the directories concerned carry `truncated`. */
  truncated: boolean;
  /** Some directory sits at max_depth and was not read. */
  depth_limited: boolean;
  /** Entries ignore files left out (0 with include_ignored or respect_ignore_files = false). */
  ignored: number;
  /** Ignore files that were cut, held too many patterns or could not be read. */
  ignore_warnings?: string[];
}

interface Pending {
  node: TreeNode;
  parts: string[];
  rel: string;
  /** Path below the walk root. */
  sub: string;
  depth: number;
  /** The ignore rules in force in this directory's parent. */
  level: IgnoreLevel | null;
}

export async function directoryTree(
  ws: Workspace,
  t: Target,
  maxDepth: number,
  limit: number,
  signal?: AbortSignal,
  filter: WalkFilterArgs = {},
): Promise<DirectoryTreeOutput> {
  const exclude = compileExclude(t, filter.exclude);
  const clock = new WalkClock(t, ws.registry.limits.search_timeout_seconds, signal, "tree", 16);
  try {
    return await walkTree(ws, t, maxDepth, limit, clock, walkIgnoreFor(ws, t, filter), exclude);
  } finally {
    clock.finished();
  }
}

async function walkTree(
  ws: Workspace,
  t: Target,
  maxDepth: number,
  limit: number,
  clock: WalkClock,
  ignore: WalkIgnore | null,
  exclude: ((sub: string, name: string) => boolean) | null,
): Promise<DirectoryTreeOutput> {
  const limits = ws.registry.limits;
  const root = ws.rootFd(t);
  const policy = t.wd.policy;
  const maxWalk = limits.max_walk_entries;
  const tree: TreeNode = { name: t.parts[t.parts.length - 1] ?? "", type: "directory" };
  const queue: Pending[] = [{ node: tree, parts: t.parts, rel: t.rel, sub: "", depth: 0, level: ignore === null ? null : ignore.start(t.parts).level }];
  let returned = 0;
  let walked = 0;
  let capped = false;
  let truncated = false;
  let depthLimited = false;

  for (let q = 0; q < queue.length; q++) {
    const dir = queue[q] as Pending;
    if (capped) {
      // past the walk cap nothing more is read
      dir.node.truncated = true;
      truncated = true;
      continue;
    }
    const fd = openWalkDir(ws, t, root, dir, q === 0);
    if (fd === null) continue; // vanished or unreadable: listed without children
    try {
      const room = limit - returned;
      let seen = 0;
      const level = ignore === null ? null : ignore.enter(dir.level, fd, dir.rel);
      // Whether an entry is a directory, for the directory-only ignore patterns that alone decide.
      const isDir = (name: string): boolean => {
        try {
          return ws.native.lstatChild(fd, name).isDirectory();
        } catch {
          return false; // vanished: left to the lstat below
        }
      };
      // One name more than the answer can hold tells whether the directory was cut.
      const keep = (name: string): boolean => {
        seen++;
        if (!policy.entryVisible(dir.rel, name)) return false;
        if (ignore !== null) {
          const v = ignore.verdict(level, dir.rel, name);
          if (v === "ignored" || (v === "depends" && ignore.isIgnored(level, dir.rel, name, isDir(name)))) {
            ignore.ignored++;
            return false;
          }
        }
        return exclude === null || !exclude(childSub(dir.sub, name), name);
      };
      let sel: DirSelection;
      try {
        sel = await readDirPaced(ws.native.readDirSmallest(fd, room + 1, keep), clock);
      } catch (err) {
        if (err instanceof ServerfsError) throw err;
        if (exhausted(err)) throw fail("RESOURCE_EXHAUSTED", t.alias, t.rel);
        if (q === 0) throw faultFailure(err, t.alias, t.rel, false) ?? fail("ACCESS_DENIED", t.alias, t.rel);
        continue; // cannot be read any more: listed without children
      }
      walked += seen;
      const children: TreeNode[] = [];
      for (const e of sel.entries.slice(0, room)) {
        if (clock.tick()) await clock.pause();
        let st;
        try {
          st = ws.native.lstatChild(fd, e.name);
        } catch {
          continue; // vanished between readdir and lstat
        }
        const type = typeOf(st);
        const node: TreeNode = { name: e.name, type };
        if (type === "file") node.size = Number(st.size);
        children.push(node);
        returned++;
        if (type !== "directory") continue;
        if (dir.depth + 1 < maxDepth) {
          queue.push({ node, parts: [...dir.parts, e.name], rel: dir.rel === "" ? e.name : `${dir.rel}/${e.name}`, sub: childSub(dir.sub, e.name), depth: dir.depth + 1, level });
        }
        else depthLimited = true;
      }
      dir.node.children = children;
      if (sel.entries.length > room) {
        dir.node.truncated = true;
        truncated = true;
      }
      if (walked > maxWalk) capped = true;
    } finally {
      ws.native.closeFast(fd);
    }
  }
  const out: DirectoryTreeOutput = { workdir: t.alias, path: t.rel, max_depth: maxDepth, limit, tree, returned, truncated, depth_limited: depthLimited, ignored: ignore?.ignored ?? 0 };
  const warnings = ignore?.warnings() ?? [];
  if (warnings.length > 0) out.ignore_warnings = warnings;
  return out;
}
