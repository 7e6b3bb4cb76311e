// list_directory: one scan of a directory opened beneath the root without following symlinks,
// policy-filtered, sorted by code point, sliced, then lstat of the page's children through the
// held descriptor. The scan keeps only the offset + limit smallest visible names (readDirSmallest),
// so a page costs memory in proportion to how deep it is, never to how large the directory is;
// the depth is bounded by max_walk_entries (deeper: INVALID_ARGUMENT naming offset). The scan
// gives the event loop back every 25 ms so other requests keep being answered (no deadline: a
// listing is bounded by the directory itself). Ignore files never hide an entry here: unless the
// workdir sets respect_ignore_files = false, an entry they ignore (or every entry, when the
// directory itself lies in an ignored one) is marked `ignored: true`.

import { errnoCode, ServerfsError } from "../errors.ts";
import { closeQuietly, type Target, type Workspace } from "./context.ts";
import { fail, faultFailure } from "./fail.ts";
import { openAt } from "./open.ts";
import { isoSeconds, typeOf, type ObjectType } from "./revision.ts";
import { readDirPaced, WalkClock } from "./walk.ts";
import { walkIgnoreFor } from "./walk-filter.ts";

export interface ListEntry {
  name: string;
  path: string;
  type: ObjectType;
  size: number | null;
  modified_at: string | null;
  /** Present (true) when ignore files ignore this entry. */
  ignored?: true;
}

export interface ListDirectoryOutput {
  workdir: string;
  path: string;
  entries: ListEntry[];
  offset: number;
  limit: number;
  returned: number;
  has_more: boolean;
  /** Ignore files that were cut, held too many patterns or could not be read. */
  ignore_warnings?: string[];
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
    const ignore = walkIgnoreFor(ws, t, {});
    const above = ignore === null ? null : ignore.start(t.parts);
    const level = ignore === null || above === null ? null : ignore.enter(above.level, dirFd, t.rel);
    const entries: ListEntry[] = [];
    for (const { name } of page) {
      let st;
      try {
        st = ws.native.lstatChild(dirFd, name);
      } catch {
        continue; // vanished between readdir and lstat
      }
      const type = typeOf(st);
      const entry: ListEntry = {
        name,
        path: t.rel === "" ? name : `${t.rel}/${name}`,
        type,
        size: type === "file" ? Number(st.size) : null,
        modified_at: isoSeconds(st),
      };
      if (ignore !== null && (above?.insideIgnored === true || ignore.isIgnored(level, t.rel, name, type === "directory"))) entry.ignored = true;
      entries.push(entry);
    }
    const out: ListDirectoryOutput = { workdir: t.alias, path: t.rel, entries, offset, limit, returned: entries.length, has_more: offset + limit < visible };
    const warnings = ignore?.warnings() ?? [];
    if (warnings.length > 0) out.ignore_warnings = warnings;
    return out;
  } finally {
    closeQuietly(dirFd);
  }
}
