// When each run's marker was first handed to a process: the start time of the run's first leader,
// kept while any set of that run has not been proved stopped. A set's look reads the markers only
// of processes born at or after it (SetIdentity.bornSince). A run may start several processes,
// each its own set, and a later set must still find what an earlier one's leader left behind, so
// every set of a run gets the first leader's start time, not its own, for as long as an earlier
// set may have members. Once every set of the run is proved empty no process carries the marker
// that is not born of a later leader, and the next spawn of the run starts afresh.

export interface MarkerBoundary {
  /** The start time to give the set as bornSince (null: unknown, every candidate is read). */
  readonly since: string | null;
  /** The set was proved empty (idempotent). */
  close(): void;
}

export class MarkerBoundaries {
  private readonly runs = new Map<string, { since: string | null; openSets: number }>();

  /** A new set of `runId` whose leader has start time `leaderStart` (null when it could not be read). */
  open(runId: string, leaderStart: string | null): MarkerBoundary {
    let run = this.runs.get(runId);
    if (run === undefined) {
      run = { since: leaderStart, openSets: 0 };
      this.runs.set(runId, run);
    }
    run.openSets++;
    const entry = run;
    let closed = false;
    return {
      since: entry.since,
      close: () => {
        if (closed) return;
        closed = true;
        entry.openSets--;
        if (entry.openSets === 0 && this.runs.get(runId) === entry) this.runs.delete(runId);
      },
    };
  }

  /** Runs with a set not yet proved empty (bounded by the sets whose stop was never proved). */
  get size(): number {
    return this.runs.size;
  }
}
