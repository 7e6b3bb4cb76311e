// When a long-lived process collects its heap: the Bridge after finished tasks
// (docs/design/task-lifecycle.md#memory), serve after walks (src/fs/walk.ts). A finished task leaves
// native memory that only a collection frees, because JS objects own it: its provider's subprocess
// handle, pipes and their read buffers, the stdin sink, the sockets of its RPC calls. None of it is
// reachable, but the collector paces itself by allocation, not by resident memory, and let 10-20 MB
// of it build up over a few hundred tasks. So:
//   - busy: every RELEASES_PER_COLLECTION released runs, a full collection (~10-20 ms on a loaded
//     2-core VM, about 1-2 ms of CPU per task). Every 16 let the Bridge's peak (VmHWM) reach
//     80-85 MiB over 200 quick tasks (bench/bridge/rss.bench.ts); every 8 read 76-79 MiB
//     there (80.5 once, in a full bench/targets.ts run) for ~1 ms more Bridge CPU per task and
//     no measurable latency (bench/acp/overhead.ts);
//   - idle: IDLE_COLLECTION_MS after the last run ended, a full collection;
//   - shrink (the Bridge only): once nothing has run for SHRINK_AFTER_IDLE_MS, a full collection
//     and a shrink (JSC drops compiled code and hands freed memory back to the OS). Rebuilding
//     that code is what the next task pays for (measured on the compiled Bridge with the scripted
//     ACP agent: ~30 ms more Bridge CPU on a task that came 1.5 s after the one before, when the
//     shrink came a second after each task), so it waits until the Bridge is truly idle, not
//     just between the tasks of a session.

/** The Bridge's busy threshold: released runs between full collections. */
export const RELEASES_PER_COLLECTION = 8;
export const IDLE_COLLECTION_MS = 1000;
/** How long the Bridge runs nothing before it drops its compiled code. */
export const SHRINK_AFTER_IDLE_MS = 60_000;

export type Collection = "busy" | "idle" | "shrink";

function collectHeap(kind: Collection): void {
  Bun.gc(true);
  // Deprecated in Bun's typings but supported: JSC's shrinkFootprintWhenIdle.
  if (kind === "shrink") Bun.shrink();
}

export interface CollectorTiming {
  /** Idle time before the idle collection. */
  idleMs?: number;
  /** Idle time before the shrink; null (the default): never shrink. */
  shrinkAfterMs?: number | null;
}

export class HeapCollector {
  /** Units of work done since the last collection (released runs, walked entries). */
  private unitsSince = 0;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private shrinkTimer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  private readonly idleMs: number;
  private readonly shrinkAfterMs: number | null;

  constructor(
    /** How many runs this process still holds. */
    private readonly activeRuns: () => number,
    /** The collection itself (a seam for tests; serve's never shrinks). */
    private readonly collect: (kind: Collection) => void = collectHeap,
    /** Units of work between busy collections. */
    private readonly busyEvery: number = RELEASES_PER_COLLECTION,
    timing: CollectorTiming = {},
  ) {
    this.idleMs = timing.idleMs ?? IDLE_COLLECTION_MS;
    this.shrinkAfterMs = timing.shrinkAfterMs ?? null;
  }

  /** Work let go of everything it held: a released run (1), or a walk of `units` entries. */
  done(units = 1): void {
    if (this.closed) return;
    this.unitsSince += units;
    // After the current turn, so the replies and wake-ups of this work go out first.
    if (this.unitsSince >= this.busyEvery) setTimeout(() => this.busy(), 0);
    if (this.activeRuns() === 0) this.armIdle();
  }

  close(): void {
    this.closed = true;
    this.clearIdle();
  }

  private busy(): void {
    if (this.closed || this.unitsSince < this.busyEvery) return;
    this.unitsSince = 0;
    this.run("busy");
  }

  /** After the last run's release: the idle collection, and later the shrink (each re-armed by the next release). */
  private armIdle(): void {
    this.clearIdle();
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.closed || this.activeRuns() > 0) return;
      this.unitsSince = 0;
      this.run("idle");
    }, this.idleMs);
    (this.idleTimer as { unref?: () => void }).unref?.();
    if (this.shrinkAfterMs === null) return;
    this.shrinkTimer = setTimeout(() => {
      this.shrinkTimer = null;
      if (this.closed || this.activeRuns() > 0) return;
      this.unitsSince = 0;
      this.run("shrink");
    }, this.shrinkAfterMs);
    (this.shrinkTimer as { unref?: () => void }).unref?.();
  }

  private clearIdle(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    if (this.shrinkTimer !== null) clearTimeout(this.shrinkTimer);
    this.idleTimer = null;
    this.shrinkTimer = null;
  }

  private run(kind: Collection): void {
    try {
      this.collect(kind);
    } catch {
      // memory housekeeping never fails a task
    }
  }
}
