// list_directory: one scan of a directory opened beneath the root without following symlinks,
// policy-filtered, sorted by code point, sliced, then lstat of the page's children through the
// held descriptor. Only names are kept for the whole directory: a huge directory costs one string
// per entry, and the entry objects are built for at most one page. The policy filter, which runs
// on every name, gives the event loop back every 25 ms so other requests keep being answered (no
// deadline: a listing is bounded by the directory itself).

import { errnoCode } from "../errors.ts";
import { closeQuietly, type Target, type Workspace } from "./context.ts";
import { fail } from "./fail.ts";
import { openAt } from "./open.ts";
import { compareNames } from "./order.ts";
import { isoSeconds, typeOf, type ObjectType } from "./revision.ts";
import { WalkClock } from "./walk.ts";

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
  const root = ws.rootFd(t);
  const dirFd = openAt(ws, t, root, t.parts, "dirList", "read");
  const pace = new WalkClock(t, Number.POSITIVE_INFINITY, undefined, "list", 64);
  try {
    let names: string[];
    try {
      names = ws.native.readDirNames(dirFd);
    } catch (err) {
      const code = errnoCode(err);
      if (code === "EMFILE" || code === "ENFILE") throw fail("RESOURCE_EXHAUSTED", t.alias, t.rel);
      throw fail("ACCESS_DENIED", t.alias, t.rel);
    }
    const visible: string[] = [];
    for (const name of names) {
      if (pace.tick()) await pace.pause();
      if (t.wd.policy.entryVisible(t.rel, name)) visible.push(name);
    }
    names = []; // the unfiltered list is garbage from here on
    visible.sort(compareNames);
    const entries: ListEntry[] = [];
    for (const name of visible.slice(offset, offset + limit)) {
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
    return { workdir: t.alias, path: t.rel, entries, offset, limit, returned: entries.length, has_more: offset + limit < visible.length };
  } finally {
    closeQuietly(dirFd);
  }
}
