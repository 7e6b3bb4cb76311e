// The steps find_files and search_text share while walking a tree depth-first from a validated
// directory. Each directory is re-opened from the workdir root by its relative parts (kernel-
// checked, no symlink followed). The error rules are the walk's contract: the walk root's own
// failure is the caller's error, descriptor exhaustion anywhere is RESOURCE_EXHAUSTED, and a
// sub-directory that vanished or changed type mid-walk is skipped.
import { errnoCode } from "../errors.ts";
import type { Target, Workspace } from "./context.ts";
import { fail, openFailure } from "./fail.ts";
import { globWork } from "./glob.ts";
import type { DirEntryInfo } from "../../platform/fs/native.ts";
import { sortByName } from "./order.ts";

function exhausted(err: unknown): boolean {
  const code = errnoCode(err);
  return code === "EMFILE" || code === "ENFILE";
}

/** Open one directory of the walk; null when a sub-directory is to be skipped. */
export function openWalkDir(ws: Workspace, t: Target, root: number, dir: { parts: string[]; rel: string }, isRoot: boolean): number | null {
  try {
    return ws.native.openBeneath(root, dir.parts, "dirList");
  } catch (err) {
    if (isRoot || exhausted(err)) throw openFailure(err, t.alias, isRoot ? t.rel : dir.rel, "read");
    return null;
  }
}

/** The directory's entries in name order; null when it can no longer be read (skipped). */
export function readWalkDir(ws: Workspace, t: Target, dirFd: number): DirEntryInfo[] | null {
  try {
    return sortByName(ws.native.readDirFast(dirFd));
  } catch (err) {
    if (exhausted(err)) throw fail("RESOURCE_EXHAUSTED", t.alias, t.rel);
    return null;
  }
}

/** An entry's kind, asking the filesystem only when readdir could not tell; null if it vanished. */
export function entryKind(ws: Workspace, dirFd: number, e: DirEntryInfo): "file" | "directory" | "other" | null {
  if (e.kind !== "unknown") return e.kind === "file" || e.kind === "directory" ? e.kind : "other";
  try {
    const st = ws.native.lstatChild(dirFd, e.name);
    return st.isFile() ? "file" : st.isDirectory() ? "directory" : "other";
  } catch {
    return null;
  }
}

const YIELD_EVERY_MS = 25;
/** Matcher work (glob steps) after which the clock is read whatever the entry count. */
const STEP_BUDGET = 100_000;

/**
 * A walk's wall-clock budget and its share of the event loop. `tick()` runs once per directory
 * entry (and search's scanner calls it after every buffer of a large file): it reads the clock every `sampleEvery` entries, or sooner once the glob matchers have
 * done STEP_BUDGET steps (a clock read per entry costs find_files ~20 %). Past the deadline it
 * throws SEARCH_TIMEOUT; it returns true when the walk has held the thread for YIELD_EVERY_MS,
 * and the caller then awaits `pause()`, which lets other requests run and ends the walk if its
 * request was cancelled.
 */
export class WalkClock {
  private readonly deadlineAt: number;
  private lastYield: number;
  private countdown = 0;
  private stepsAt = 0;

  constructor(
    private readonly t: Target,
    timeoutSeconds: number,
    private readonly signal: AbortSignal | undefined,
    private readonly what: string,
    private readonly sampleEvery: number,
  ) {
    this.lastYield = performance.now();
    this.deadlineAt = this.lastYield + timeoutSeconds * 1000;
    this.cancelled();
  }

  private cancelled(): void {
    if (this.signal?.aborted) throw fail("SEARCH_FAILED", this.t.alias, this.t.rel, `${this.what} was cancelled`);
  }

  tick(): boolean {
    if (--this.countdown > 0 && globWork.steps - this.stepsAt < STEP_BUDGET) return false;
    this.countdown = this.sampleEvery;
    this.stepsAt = globWork.steps;
    const now = performance.now();
    if (now > this.deadlineAt) throw fail("SEARCH_TIMEOUT", this.t.alias, this.t.rel);
    return now - this.lastYield > YIELD_EVERY_MS;
  }

  async pause(): Promise<void> {
    await new Promise<void>((r) => setImmediate(r));
    this.lastYield = performance.now();
    this.countdown = 0;
    this.cancelled();
  }
}
