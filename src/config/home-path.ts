// A leading `~` in a path given on the command line. MCP hosts start `serverfs serve` without a
// shell, so nothing expands `--workdir docs=~/docs` before serverfs sees it; serverfs does it
// itself, the way a POSIX shell would for the current user only:
//
//   `~` alone, and `~/…`, become the home directory (`~\…` too on Windows);
//   `~name/…` is never expanded (no other user's home is looked up) and stays a literal name;
//   a `~` anywhere but at the very start is an ordinary character.
import os from "node:os";
import { IS_WINDOWS } from "../../platform/os.ts";
import { isAbsoluteHostPath } from "./host-path.ts";

export interface HomeFacts {
  /** The current user's home directory. */
  home: string;
  /** Whether `~\` also counts (Windows). */
  windows: boolean;
}

export function currentHomeFacts(): HomeFacts {
  return { home: os.homedir(), windows: IS_WINDOWS };
}

/** Whether `text` starts with a `~` that expansion replaces. */
export function hasHomePrefix(text: string, windows: boolean): boolean {
  if (!text.startsWith("~")) return false;
  const next = text[1];
  return next === undefined || next === "/" || (windows && next === "\\");
}

export class HomeUnavailableError extends Error {
  override readonly name = "HomeUnavailableError";
  constructor() {
    super("the home directory is unknown or not an absolute path, so '~' cannot be expanded");
  }
}

/**
 * `text` with a leading `~` (alone, or before `/`, or `\` on Windows) replaced by the home
 * directory; anything else unchanged. Throws HomeUnavailableError when there is a `~` to expand
 * and no absolute home directory to expand it to (callers turn that into their own coded error).
 */
export function expandHome(text: string, facts: HomeFacts = currentHomeFacts()): string {
  if (!hasHomePrefix(text, facts.windows)) return text;
  if (facts.home === "" || !isAbsoluteHostPath(facts.home)) throw new HomeUnavailableError();
  const rest = text.slice(1);
  if (rest === "") return facts.home;
  // One separator between the two, whatever the home directory ends with (`/` for root's `/`).
  const trimmed = facts.home.replace(/[\\/]+$/, "");
  return `${trimmed}${rest}`;
}
