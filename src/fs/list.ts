// list_directory: one scan of a directory opened beneath the root without following symlinks,
// policy-filtered, sorted by code point, sliced, then lstat of the page's children through the
// held descriptor. The scan keeps only the offset + limit smallest visible names (readDirSmallest),
// so a page costs memory in proportion to how deep it is, never to how large the directory is;
// the depth is bounded by max_walk_entries (deeper: INVALID_ARGUMENT naming offset). The scan
// gives the event loop back every 25 ms so other requests keep being answered (no deadline: a
// listing is bounded by the directory itself).

import { errnoCode, ServerfsError } from "../errors.ts";
import { closeQuietly, type Target, type Workspace } from "./context.ts";
import { fail, faultFailure } from "./fail.ts";
import { openAt } from "./open.ts";
import { isoSeconds, typeOf, type ObjectType } from "./revision.ts";
import { readDirPaced, WalkClock } from "./walk.ts";

export interface ListEntry {
  name: string;
  path: string;
  type: ObjectType;
  size: number | null;
  modified_at: string | null;
}

export interface ListDirectoryOutput {
  workdir: string;
  path: string;
  entries: ListEntry[];
  offset: number;
  limit: number;
  returned: number;
  has_more: boolean;
}

export async function listDirectory(ws: Workspace, t: Target, offset: number, limit: number): Promise<ListDirectoryOutput> {
  // the first page is always reachable, however small max_walk_entries is configured
  const limits = ws.registry.limits;
  const maxDepth = Math.max(limits.max_walk_entries, limits.max_list_entries);
  if (offset + limit > maxDepth) {
    throw fail("INVALID_ARGUMENT", t.alias, t.rel, `offset + limit must be at most ${maxDepth} (max_walk_entries); got offset ${offset} with limit ${limit}`);
  }
  const root = ws.rootFd(t);
  const dirFd = openAt(ws, t, root, t.parts, "dirList", "read");
  const pace = new WalkClock(t, Number.POSITIVE_INFINITY, undefined, "list", 64);
  try {
    const policy = t.wd.policy;
    let page: { name: string }[];
    let visible: number;
    try {
      const sel = await readDirPaced(ws.native.readDirSmallest(dirFd, offset + limit, (name) => policy.entryVisible(t.rel, name)), pace);
      page = sel.entries.slice(offset);
      visible = sel.visible;
    } catch (err) {
      if (err instanceof ServerfsError) throw err;
      const code = errnoCode(err);
      if (code === "EMFILE" || code === "ENFILE") throw fail("RESOURCE_EXHAUSTED", t.alias, t.rel);
      throw faultFailure(err, t.alias, t.rel, false) ?? fail("ACCESS_DENIED", t.alias, t.rel);
    }
    const entries: ListEntry[] = [];
    for (const { name } of page) {
      let st;
      try {
        st = ws.native.lstatChild(dirFd, name);
      } catch {
        continue; // vanished between readdir and lstat
      }
      const type = typeOf(st);
      entries.push({
        name,
        path: t.rel === "" ? name : `${t.rel}/${name}`,
        type,
        size: type === "file" ? Number(st.size) : null,
        modified_at: isoSeconds(st),
      });
    }
    return { workdir: t.alias, path: t.rel, entries, offset, limit, returned: entries.length, has_more: offset + limit < visible };
  } finally {
    closeQuietly(dirFd);
  }
}
