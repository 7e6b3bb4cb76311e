// The ignore wing's one door: git-style ignore files as the walkers see them.
export { WalkIgnore, IGNORE_FILE_NAMES, type IgnoreLevel, type NameVerdict } from "./walk-ignore.ts";
export { MAX_IGNORE_FILE_BYTES, MAX_IGNORE_PATTERNS } from "./parse.ts";
