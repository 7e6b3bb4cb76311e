// What find_files, search_text and directory_tree leave out beyond the policy: ignore files
// (./ignore/, on unless the workdir sets respect_ignore_files = false or the call passes
// include_ignored: true) and the call's own `exclude` globs. Both only ever hide more: the policy
// has already removed hidden, denied and reserved entries before either is asked.

import type { Target, Workspace } from "./context.ts";
import { fail } from "./fail.ts";
import { compileSearchGlob, MAX_GLOB_CHARS } from "./glob.ts";
import { WalkIgnore } from "./ignore/index.ts";

/** Globs one `exclude` list may hold. */
export const MAX_EXCLUDE_GLOBS = 64;

export interface WalkFilterArgs {
  /** true: ignore files are not read (everything the policy allows is walked). */
  includeIgnored?: boolean;
  /** search_text.glob syntax, relative to the walk root; a matched directory is pruned whole. */
  exclude?: readonly string[];
}

/** The walk's ignore rules, or null when they are off for this workdir or this call. */
export function walkIgnoreFor(ws: Workspace, t: Target, args: WalkFilterArgs): WalkIgnore | null {
  if (args.includeIgnored === true || !t.wd.workdir.respect_ignore_files) return null;
  return new WalkIgnore(ws.native, ws.rootFd(t), t.wd.policy, () => fail("RESOURCE_EXHAUSTED", t.alias, t.rel));
}

/** One test for every `exclude` glob: (path relative to the walk root, name) -> excluded; null for none. */
export function compileExclude(t: Pick<Target, "alias" | "rel">, exclude: readonly string[] | undefined): ((sub: string, name: string) => boolean) | null {
  if (exclude === undefined || exclude.length === 0) return null;
  if (exclude.length > MAX_EXCLUDE_GLOBS) throw fail("INVALID_ARGUMENT", t.alias, t.rel, `exclude may hold at most ${MAX_EXCLUDE_GLOBS} globs`);
  const tests = exclude.map((g, i) => {
    if (typeof g !== "string" || g === "") throw fail("INVALID_ARGUMENT", t.alias, t.rel, `exclude[${i}] must be a non-empty string`);
    if (g.length > MAX_GLOB_CHARS) throw fail("INVALID_ARGUMENT", t.alias, t.rel, `exclude[${i}] must be at most ${MAX_GLOB_CHARS} characters`);
    return compileSearchGlob(g);
  });
  return (sub, name) => {
    for (const m of tests) if (m(sub, name)) return true;
    return false;
  };
}

/** The child's path relative to the walk root, from its parent's ("" for the root itself). */
export function childSub(parentSub: string, name: string): string {
  return parentSub === "" ? name : `${parentSub}/${name}`;
}
