// The steps find_files and search_text share while walking a tree depth-first from a validated
// directory. Each directory is re-opened from the workdir root by its relative parts (kernel-
// checked, no symlink followed). The error rules are the walk's contract: the walk root's own
// failure is the caller's error, descriptor exhaustion anywhere is RESOURCE_EXHAUSTED, and a
// sub-directory that vanished or changed type mid-walk is skipped.
import { edenGC } from "bun:jsc";
import { HeapCollector } from "../common/heap-collector.ts";
import { errnoCode } from "../errors.ts";
import { fail, faultFailure, openFailure } from "./fail.ts";
import { globWork } from "./glob.ts";
import type { DirEntryInfo, DirSelection, DirSmallest, FsNative } from "../../platform/fs/native.ts";

/** What a walk step needs of its workspace: the filesystem port (either thread has one). */
export interface WalkNative {
  readonly native: FsNative;
}

/** What a walk's errors name: the call's workdir alias and walk root. */
export interface WalkCaller {
  readonly alias: string;
  readonly rel: string;
}

/** Out of file descriptors (process or system): RESOURCE_EXHAUSTED, never "skip this one". */
export function exhausted(err: unknown): boolean {
  const code = errnoCode(err);
  return code === "EMFILE" || code === "ENFILE";
}

/** Open one directory of the walk; null when a sub-directory is to be skipped. */
export function openWalkDir(ws: WalkNative, t: WalkCaller, root: number, dir: { parts: string[]; rel: string }, isRoot: boolean): number | null {
  try {
    return ws.native.openBeneath(root, dir.parts, "dirList");
  } catch (err) {
    if (isRoot || exhausted(err)) throw openFailure(err, t.alias, isRoot ? t.rel : dir.rel, "read");
    return null;
  }
}

/**
 * One directory of a walk, read in bounded steps: only its `budget` smallest entries (name order)
 * are kept, so one huge directory costs memory in proportion to what the walk may still visit.
 * `budget` is the walk's remaining max_walk_entries plus one: the walk then reaches the entry
 * that exceeds its cap, exactly as if it had read the whole directory.
 */
export class WalkDirRead {
  /** The selection, once step() has returned true; empty when the directory could not be read (skipped). */
  entries: DirEntryInfo[] = [];
  private sel: DirSmallest | null = null;

  constructor(
    ws: WalkNative,
    private readonly t: WalkCaller,
    dirFd: number,
    budget: number,
    /** The walk's root: a filesystem fault reading it is the caller's answer (IO_ERROR), not a skip. */
    private readonly isRoot = false,
  ) {
    try {
      // the walk's descriptors are opened just before and never read: no rewind needed
      this.sel = ws.native.readDirSmallest(dirFd, budget, undefined, true);
    } catch (err) {
      this.failed(err);
    }
  }

  /** One step of the read (a few hundred entries); true once the directory is read. */
  step(): boolean {
    if (this.sel === null) return true;
    try {
      if (this.sel.step()) return false;
      this.entries = this.sel.result().entries;
    } catch (err) {
      this.failed(err);
    }
    this.sel = null;
    return true;
  }

  private failed(err: unknown): void {
    if (exhausted(err)) throw fail("RESOURCE_EXHAUSTED", this.t.alias, this.t.rel);
    const fault = this.isRoot ? faultFailure(err, this.t.alias, this.t.rel, false) : null;
    if (fault !== null) throw fault;
    // otherwise it can no longer be read: skipped
  }
}

/** Drive a bounded directory read to its end, checking the clock (deadline, yield) between steps. */
export async function readDirPaced(sel: DirSmallest, clock: WalkClock): Promise<DirSelection> {
  while (sel.step()) if (clock.due()) await clock.pause();
  return sel.result();
}

/** An entry's kind, asking the filesystem only when readdir could not tell; null if it vanished. */
export function entryKind(ws: WalkNative, dirFd: number, e: DirEntryInfo): "file" | "directory" | "other" | null {
  if (e.kind !== "unknown") return e.kind === "file" || e.kind === "directory" ? e.kind : "other";
  try {
    const st = ws.native.lstatChild(dirFd, e.name);
    return st.isFile() ? "file" : st.isDirectory() ? "directory" : "other";
  } catch {
    return null;
  }
}

const YIELD_EVERY_MS = 25;
/**
 * Ticks between young-generation collections. Each entry walked leaves short-lived garbage (names,
 * paths, entry records), and the collector, which runs by allocation volume relative to the heap,
 * let a walk of 200 000 entries lift serve's RSS by ~30 MB before it ran. A full collection
 * (Bun.gc(true)) here cost find_files about half its time in serve, whose heap is large (it
 * marks everything live each time); an eden collection only visits what was allocated since the
 * last one, which is what a walk produces: peak RSS after ten 200 000-entry walks stayed at ~82 MiB
 * (none: ~107 MiB) whether it ran every 8 192 or every 32 768 entries (every 65 536: ~88 MiB),
 * so it runs at 32 768.
 */
const GC_HINT_TICKS = 32_768;

/**
 * Full collections between walks. The young collections during a walk free its short-lived
 * garbage, but what survives a few of them (its batches, results, directory records) is only freed
 * by a full collection, which the engine paces by allocation: back-to-back searches in one serve
 * let it pile up (RSS climbed from ~90 MB to ~160 MB over 150 searches of 20,000 files before it
 * levelled off). So once walks have visited WALK_ENTRIES_PER_COLLECTION entries, and once none
 * has run for a second, serve collects fully after the walk's answer has gone out (~6 ms; no
 * shrink, which would drop the compiled code every later walk needs again).
 */
const WALK_ENTRIES_PER_COLLECTION = 400_000;
/** How recently a walk must have read its clock to count as running (walks read it every few ms). */
const WALK_ACTIVE_MS = 100;
let lastWalkActivity = 0;
const walkHeap = new HeapCollector(
  () => (performance.now() - lastWalkActivity < WALK_ACTIVE_MS ? 1 : 0),
  () => Bun.gc(true),
  WALK_ENTRIES_PER_COLLECTION,
);
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
  private sinceGc = 0;
  private ticks = 0;

  constructor(
    private readonly t: WalkCaller,
    timeoutSeconds: number,
    /** An AbortSignal, or the search worker's view of its shared cancellation word. */
    private readonly signal: { readonly aborted: boolean } | undefined,
    private readonly what: string,
    private readonly sampleEvery: number,
    /** Ticks between young collections: search leaves more garbage per entry than find (batches, messages). */
    private readonly gcEvery: number = GC_HINT_TICKS,
  ) {
    this.lastYield = performance.now();
    this.deadlineAt = this.lastYield + timeoutSeconds * 1000;
    this.cancelled();
  }

  private cancelled(): void {
    if (this.signal?.aborted) throw fail("SEARCH_FAILED", this.t.alias, this.t.rel, `${this.what} was cancelled`);
  }

  tick(): boolean {
    this.ticks++;
    if (++this.sinceGc >= this.gcEvery) {
      this.sinceGc = 0;
      edenGC();
    }
    if (--this.countdown > 0 && globWork.steps - this.stepsAt < STEP_BUDGET) return false;
    return this.due();
  }

  /**
   * At the end of a walk (whatever its outcome): its entries count toward the next full collection
   * (WALK_ENTRIES_PER_COLLECTION), and a young collection runs if it left more than a few
   * thousand entries' garbage since the last one. Without it a 20 000-file search stays below the
   * in-walk hint and each repeated search piles its garbage onto the last one's (serve's RSS rose
   * by ~30 MB over 25 searches before the collector caught up).
   */
  finished(): void {
    lastWalkActivity = performance.now();
    walkHeap.done(this.ticks);
    this.ticks = 0;
    if (this.sinceGc < this.gcEvery / 8) return;
    this.sinceGc = 0;
    edenGC();
  }

  /** tick() without the sampling: read the clock now (after each step of a directory read, a few hundred entries). */
  due(): boolean {
    this.countdown = this.sampleEvery;
    this.stepsAt = globWork.steps;
    const now = performance.now();
    lastWalkActivity = now;
    if (now > this.deadlineAt) throw fail("SEARCH_TIMEOUT", this.t.alias, this.t.rel);
    return now - this.lastYield > YIELD_EVERY_MS;
  }

  /** The deadline on the wall clock every thread shares (for the search worker's share of a walk). */
  deadlineEpochMs(): number {
    return Date.now() + (this.deadlineAt - performance.now());
  }

  /** After the walk awaited something else (the search worker): read the clock, and end a cancelled walk. */
  resumed(): void {
    this.cancelled();
    this.due();
    this.lastYield = performance.now();
  }

  async pause(): Promise<void> {
    await new Promise<void>((r) => setImmediate(r));
    this.lastYield = performance.now();
    this.countdown = 0;
    this.cancelled();
  }
}
