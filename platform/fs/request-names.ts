// How a caller's path splits into components on an OS, and which components that OS cannot name,
// chosen once per platform so the path policy (src/fs/policy.ts) names no OS. POSIX: only '/'
// separates, and every name the kernel takes is allowed (the policy refuses NUL, '..' escapes and
// absolute paths everywhere). Windows: '\' and '/' both separate, drive, UNC and device spellings
// are rooted, and every component must be a portable Windows name (windows-names.ts).
import { PLATFORM_NAME, selectFor } from "../os.ts";
import { isWindowsRooted, windowsNameProblem } from "./windows-names.ts";

export interface RequestNameRules {
  /** The components of `raw` as written ('' and '.' included; the caller drops them). */
  split(raw: string): string[];
  /** Rooted in a way beyond a leading '/' or '~', which the policy refuses on every OS. */
  rooted(raw: string): boolean;
  /** Why `part` (one component, never '.' or '..') cannot name a file here, or null. */
  nameProblem(part: string): string | null;
  /** Where the last separator of `raw` is, or -1. */
  lastSeparator(raw: string): number;
}

const posix: RequestNameRules = {
  split: (raw) => raw.split("/"),
  rooted: () => false,
  nameProblem: () => null,
  lastSeparator: (raw) => raw.lastIndexOf("/"),
};

const windows: RequestNameRules = {
  split: (raw) => raw.split(/[\\/]/),
  rooted: isWindowsRooted,
  nameProblem: windowsNameProblem,
  lastSeparator: (raw) => Math.max(raw.lastIndexOf("/"), raw.lastIndexOf("\\")),
};

/** The rules of `platform` (default: this one); tests ask for another platform's. */
export function requestNameRules(platform: NodeJS.Platform = PLATFORM_NAME): RequestNameRules {
  return selectFor<RequestNameRules>(platform, { windows: () => windows, other: () => posix });
}
