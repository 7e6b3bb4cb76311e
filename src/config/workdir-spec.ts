// One `--workdir ALIAS=PATH[:rw|:ro]` value, split into its parts. `serve` builds workdirs from
// these (load.ts) and `connect` writes them back into a host's entry (src/commands/connect-entry.ts),
// so both read the same grammar.
import * as path from "node:path";
import { currentHomeFacts, expandHome, hasHomePrefix, HomeUnavailableError, type HomeFacts } from "./home-path.ts";
import { isAbsoluteHostPath } from "./host-path.ts";

export interface WorkdirSpec {
  alias: string;
  /** PATH exactly as given, without the `:rw`/`:ro` suffix. */
  givenPath: string;
  /** The path serve uses: `~` expanded, a relative path resolved against the current directory. */
  path: string;
  read_only: boolean;
  /** The suffix as given: ":rw", ":ro" or "". */
  suffix: "" | ":rw" | ":ro";
}

/** Why a spec cannot be used, keyed as the `--workdir` problems are (`#1`, `#1.path`). */
export interface WorkdirSpecProblem {
  key: string;
  reason: string;
}

export type WorkdirSpecResult = { ok: true; spec: WorkdirSpec } | { ok: false; problem: WorkdirSpecProblem };

/**
 * Split the `index`th (0-based) `--workdir` value. A relative PATH resolves against `cwd`; a
 * leading `~` or `~/` is the home directory; a `..` component is refused before either, exactly
 * as in a config file.
 */
export function parseWorkdirSpec(
  text: string,
  index: number,
  cwd: string,
  home: HomeFacts = currentHomeFacts(),
): WorkdirSpecResult {
  const n = `#${index + 1}`;
  const eq = text.indexOf("=");
  if (eq <= 0) return { ok: false, problem: { key: n, reason: "expected ALIAS=PATH, ALIAS=PATH:rw or ALIAS=PATH:ro" } };
  let givenPath = text.slice(eq + 1);
  let suffix: WorkdirSpec["suffix"] = "";
  if (givenPath.endsWith(":rw")) suffix = ":rw";
  else if (givenPath.endsWith(":ro")) suffix = ":ro";
  if (suffix !== "") givenPath = givenPath.slice(0, -3);
  if (givenPath.split(/[\\/]/).includes("..")) {
    return { ok: false, problem: { key: `${n}.path`, reason: "must not contain a '..' component" } };
  }
  let expanded: string;
  try {
    expanded = expandHome(givenPath, home);
  } catch (err) {
    if (err instanceof HomeUnavailableError) return { ok: false, problem: { key: `${n}.path`, reason: err.message } };
    throw err;
  }
  const absolute = expanded === "" || isAbsoluteHostPath(expanded) ? expanded : path.resolve(cwd, expanded);
  return { ok: true, spec: { alias: text.slice(0, eq), givenPath, path: absolute, read_only: suffix !== ":rw", suffix } };
}

/** Whether serve expands this PATH itself at start-up (so a host entry may keep it as given). */
export function startsAtHome(givenPath: string, home: HomeFacts = currentHomeFacts()): boolean {
  return hasHomePrefix(givenPath, home.windows);
}
