// When the Bridge runs a full collection (docs/design/task-lifecycle.md#memory). A finished task
// leaves native memory that only a collection frees, because JS objects own it: its provider's
// subprocess handle, pipes and their read buffers, the stdin sink, the sockets of its RPC calls,
// stop-proof scans. None of it is reachable, but the collector paces itself by allocation, not
// by resident memory, and let about 10-20 MB of it build up over a few hundred tasks. So every
// RELEASES_PER_COLLECTION finished runs, and once the Bridge has been idle for a moment, it
// collects. A full collection of the Bridge's heap takes a few ms (about 20 ms on a loaded
// 2-core VM), negligible next to 16 provider processes.

export const RELEASES_PER_COLLECTION = 16;
export const IDLE_COLLECTION_MS = 1000;

export class HeapCollector {
  private releasedSince = 0;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(
    /** How many runs this process still holds. */
    private readonly activeRuns: () => number,
    /** The collection itself (a seam for tests; the Bridge passes a full synchronous GC). */
    private readonly collect: () => void = () => Bun.gc(true),
  ) {}

  /** A run let go of everything: collect now and then, and when the Bridge goes quiet. */
  runReleased(): void {
    if (this.closed) return;
    this.releasedSince++;
    if (this.releasedSince >= RELEASES_PER_COLLECTION) {
      // After the current turn, so the replies and wake-ups of this release go out first.
      setTimeout(() => this.run(), 0);
    } else if (this.activeRuns() === 0) {
      this.armIdle();
    }
  }

  close(): void {
    this.closed = true;
    this.clearIdle();
  }

  private armIdle(): void {
    this.clearIdle();
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (this.activeRuns() === 0) this.run();
    }, IDLE_COLLECTION_MS);
    (this.idleTimer as { unref?: () => void }).unref?.();
  }

  private clearIdle(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private run(): void {
    if (this.closed || this.releasedSince === 0) return;
    this.releasedSince = 0;
    this.clearIdle();
    try {
      this.collect();
    } catch {
      // memory housekeeping never fails a task
    }
  }
}
