// list_directory: one scan of a directory opened beneath the root without following symlinks,
// policy-filtered, sorted by code point, sliced, then lstat of the page's children through the
// held descriptor. Only names are kept for the whole directory: a huge directory costs one string
// per entry, and the entry objects are built for at most one page.

import { errnoCode } from "../errors.ts";
import { withFd, type Target, type Workspace } from "./context.ts";
import { fail, openFailure } from "./fail.ts";
import { compareNames } from "./order.ts";
import { isoSeconds, typeOf, type ObjectType } from "./revision.ts";

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

export function listDirectory(ws: Workspace, t: Target, offset: number, limit: number): ListDirectoryOutput {
  const root = ws.rootFd(t);
  let dirFd: number;
  try {
    dirFd = ws.native.openBeneath(root, t.parts, "dirList");
  } catch (err) {
    throw openFailure(err, t.alias, t.rel, "read");
  }
  return withFd(dirFd, (fd) => {
    let names: string[];
    try {
      names = ws.native.readDir(fd).map((e) => e.name);
    } catch (err) {
      const code = errnoCode(err);
      if (code === "EMFILE" || code === "ENFILE") throw fail("RESOURCE_EXHAUSTED", t.alias, t.rel);
      throw fail("ACCESS_DENIED", t.alias, t.rel);
    }
    const visible = names.filter((name) => t.wd.policy.entryVisible(t.rel, name));
    names = []; // the unfiltered list is garbage from here on
    visible.sort(compareNames);
    const entries: ListEntry[] = [];
    for (const name of visible.slice(offset, offset + limit)) {
      let st;
      try {
        st = ws.native.lstatChild(fd, name);
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
  });
}
