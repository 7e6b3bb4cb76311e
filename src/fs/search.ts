// search_text, in process (docs/tools.md, `search_text`). ripgrep's observable contract, kept on purpose:
// fixed-string matching (or RE2 regex mode, scan-regex.ts; context lines, scan-context.ts);
// files larger than search_max_file_bytes skipped; a file holding a NUL is cut at the start of the 64 KiB block containing the first NUL (earlier matches survive); lines
// split on \n with \r kept; an undecodable line never matches while other lines of the file still
// can; .git/.hg/.svn never searched; hidden/denied/reserved filtered on the FULL workdir-relative
// path; `glob` relative to the search root; early stop once limit+1 matches exist; the walk
// visits at most max_walk_entries entries (then truncated: true), each directory read keeping
// only as many of its smallest entries as that budget still allows; a wall-clock
// deadline, checked on every directory entry and inside large files, with the event loop given
// back every 25 ms. A match's text is capped at 2 KiB (UTF-8 safe) with text_truncated: true.
//
// Speed and memory: raw bytes are scanned (scan.ts) with Buffer.indexOf (memmem) in ONE reusable
// buffer; only candidate lines are decoded. One thread: a worker-pool variant measured ~1.8x the
// CPU time for the same scan (batch messaging, longer per-file lookups), so it was dropped. Directories are re-opened from the root (kernel-checked), one
// at a time; files are opened relative to the held directory descriptor with no follow.

import fs from "node:fs";
import { errnoCode, ServerfsError } from "../errors.ts";
import type { Target, Workspace } from "./context.ts";
import { fail } from "./fail.ts";
import { compileSearchGlob, MAX_GLOB_CHARS } from "./glob.ts";
import { Scanner, type SearchMatch } from "./scan.ts";
import { ContextLines } from "./scan-context.ts";
import { compileLineRegex } from "./scan-regex.ts";
import { entryKind, openWalkDir, WalkClock, WalkDirRead } from "./walk.ts";

export type { SearchMatch } from "./scan.ts";

export interface SearchOutput {
  matches: SearchMatch[];
  returned: number;
  truncated: boolean;
}

export interface SearchArgs {
  query: string;
  glob: string | null;
  caseSensitive: boolean;
  limit: number;
  /** `query` is an RE2 pattern (scan-regex.ts). */
  regex?: boolean;
  /** Lines of context around each match, 0..MAX_CONTEXT_LINES (scan-context.ts). */
  contextLines?: number;
}

const VCS_DIRS = new Set([".git", ".hg", ".svn"]);

export async function searchText(ws: Workspace, t: Target, args: SearchArgs, signal?: AbortSignal): Promise<SearchOutput> {
  if (args.query === "") throw fail("INVALID_ARGUMENT", t.alias, t.rel, "query must not be empty");
  if (args.query.includes("\n")) throw fail("INVALID_ARGUMENT", t.alias, t.rel, "query must be a single line");
  if (!args.query.isWellFormed()) throw fail("INVALID_ARGUMENT", t.alias, t.rel, "query contains unpaired surrogates");
  if (args.glob !== null && args.glob.length > MAX_GLOB_CHARS) throw fail("INVALID_ARGUMENT", t.alias, t.rel, `glob must be at most ${MAX_GLOB_CHARS} characters`);
  const regex = args.regex === true ? compileLineRegex(args.query, args.caseSensitive) : null;
  if (typeof regex === "string") throw fail("INVALID_ARGUMENT", t.alias, t.rel, regex);
  const limits = ws.registry.limits;
  const clock = new WalkClock(t, limits.search_timeout_seconds, signal, "search", 1);
  const globMatch = args.glob === null || args.glob === "" ? null : compileSearchGlob(args.glob);
  const root = ws.rootFd(t);
  const policy = t.wd.policy;
  const maxFile = limits.search_max_file_bytes;
  const refuseHardlinked = t.wd.workdir.refuse_hardlinked_reads; // such files are skipped, like unreadable ones
  const context = args.contextLines ? new ContextLines(args.contextLines) : null;
  const scanner = new Scanner(args.query, args.caseSensitive, regex, context);
  const want = args.limit + 1;
  const matches: SearchMatch[] = [];
  const stack: { parts: string[]; rel: string; sub: string }[] = [{ parts: t.parts, rel: t.rel, sub: "" }];
  let first = true;
  // Like find_files: every child seen counts toward max_walk_entries before any filtering.
  const maxWalk = limits.max_walk_entries;
  let walked = 0;
  let capped = false;

  // A search root inside a VCS directory is validated like any other, then holds nothing to search.
  const insideVcs = t.parts.some((p) => VCS_DIRS.has(p));

  // The search root itself must be a directory (validated before any walking).
  walk: while (stack.length > 0) {
    const dir = stack.pop() as { parts: string[]; rel: string; sub: string };
    const dirFd = openWalkDir(ws, t, root, dir, first);
    if (dirFd === null) continue;
    first = false;
    if (insideVcs) {
      ws.native.closeFast(dirFd);
      break;
    }
    const subdirs: { parts: string[]; rel: string; sub: string }[] = [];
    try {
      const read = new WalkDirRead(ws, t, dirFd, maxWalk - walked + 1);
      while (!read.step()) if (clock.due()) await clock.pause();
      for (const e of read.entries) {
        if (clock.tick()) await clock.pause();
        if (++walked > maxWalk) {
          capped = true;
          break walk;
        }
        if (VCS_DIRS.has(e.name)) continue;
        if (!policy.entryVisible(dir.rel, e.name)) continue;
        const kind = entryKind(ws, dirFd, e);
        const rel = dir.rel === "" ? e.name : `${dir.rel}/${e.name}`;
        const sub = dir.sub === "" ? e.name : `${dir.sub}/${e.name}`;
        if (kind === "directory") {
          subdirs.push({ parts: [...dir.parts, e.name], rel, sub });
          continue;
        }
        if (kind !== "file") continue;
        if (globMatch !== null && !globMatch(sub, e.name)) continue;
        let fd: number;
        try {
          fd = ws.native.openBeneath(dirFd, [e.name], "read");
        } catch (err) {
          const code = errnoCode(err);
          if (code === "EMFILE" || code === "ENFILE") throw fail("RESOURCE_EXHAUSTED", t.alias, t.rel);
          continue; // vanished, became a symlink, unreadable: not searchable
        }
        try {
          const st = fs.fstatSync(fd);
          if (!st.isFile() || st.size > maxFile || (refuseHardlinked && st.nlink > 1)) continue;
          const scanned = scanner.scanFile(fd, st.size, rel, want - matches.length, clock);
          const found = Array.isArray(scanned) ? scanned : await scanned;
          for (const m of found) {
            const { lineEndAbs: _drop, ...match } = m;
            matches.push(match);
          }
        } catch (err) {
          if (err instanceof ServerfsError) throw err;
          continue; // a read error on one file does not fail the search
        } finally {
          ws.native.closeFast(fd);
        }
        if (matches.length >= want) break walk;
      }
    } finally {
      ws.native.closeFast(dirFd);
    }
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i] as { parts: string[]; rel: string; sub: string });
  }
  const truncated = capped || matches.length > args.limit;
  const returned = truncated ? matches.slice(0, args.limit) : matches;
  return { matches: returned, returned: returned.length, truncated };
}
