// The walk's share of keeping search_text's hot path below FTL: the code that runs once per
// directory entry. Why, and what stays eligible: scan-tiers.ts. find_files and directory_tree
// walk with the same code, so it holds for them too (a warm find_files over 202,040 entries took
// the same time either way).
import { walkSyscalls } from "../../../platform/fs/search-port.ts";
import { PathPolicy } from "../policy.ts";
import { belowFtl } from "./scan-tiers.ts";
import { entryKind, WalkClock, WalkDirRead } from "../walk.ts";

/** The per-entry functions kept below FTL (exported for the test that checks each is still a function). */
export function walkHotPath(): unknown[] {
  return [
    // the directory reads, as the platform lists them
    ...walkSyscalls(),
    WalkDirRead.prototype.step,
    PathPolicy.prototype.entryVisible,
    entryKind,
    WalkClock.prototype.tick,
    WalkClock.prototype.due,
  ];
}

/** Called once per thread, by the module that loads first (noFTL marks are idempotent anyway). */
export function keepWalkBelowFtl(): void {
  belowFtl(walkHotPath());
}
