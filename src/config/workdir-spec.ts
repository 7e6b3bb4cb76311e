// One `--workdir ALIAS=PATH[:MODE]` value, split into its parts. `serve` builds workdirs from
// these (load.ts) and `connect` writes them back into a host's entry (src/commands/connect-entry.ts),
// so both read the same grammar.
//
// The mode suffix is a final `:` followed only by ASCII letters. `rw` and `ro` are the modes, in
// any case; other letters (`:rx`, `:RWX`) are refused rather than taken as part of PATH, because
// a mistyped mode must not silently serve a different directory read-only. A `:` followed by
// anything else stays in PATH: `C:\x`, `/data/x:2024`. A PATH that really ends in `:letters` is
// given with a mode after it (`/data/x:rx:ro`).
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
  /** The mode suffix, lower-cased: ":rw", ":ro" or "" when none was given. */
  suffix: "" | ":rw" | ":ro";
}

/**
 * Why a spec cannot be used, keyed as the `--workdir` problems are (`#1`, `#1.path`). A `usage`
 * problem is a mistyped command line rather than a workdir the configuration rules refuse.
 */
export interface WorkdirSpecProblem {
  key: string;
  reason: string;
  usage?: boolean;
}

const MODE_SUFFIX = /:([A-Za-z]+)$/;

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
  const mode = MODE_SUFFIX.exec(givenPath);
  if (mode) {
    const word = mode[1]!.toLowerCase();
    if (word !== "rw" && word !== "ro") return { ok: false, problem: unknownMode(text, eq, mode[0]) };
    suffix = word === "rw" ? ":rw" : ":ro";
    givenPath = givenPath.slice(0, -mode[0].length);
  }
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

function unknownMode(text: string, eq: number, given: string): WorkdirSpecProblem {
  return {
    key: "",
    usage: true,
    reason:
      `--workdir '${text}': '${given}' is not a mode; give ALIAS=PATH, ALIAS=PATH:rw or ALIAS=PATH:ro (rw and ro in any case), ` +
      `or, for a path that ends in '${given}', add the mode after it: '${text.slice(0, eq)}=${text.slice(eq + 1)}:ro'`,
  };
}

/** Whether serve expands this PATH itself at start-up (so a host entry may keep it as given). */
export function startsAtHome(givenPath: string, home: HomeFacts = currentHomeFacts()): boolean {
  return hasHomePrefix(givenPath, home.windows);
}
