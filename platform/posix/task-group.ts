// A kernel-kept group of every process a task ever starts (Linux: one cgroup v2 per task). A
// process is born into its parent's group and cannot leave it without write access to another
// group, so an empty group proves the task is gone whatever the task did: no listing of the
// process table can say that, because a listing is never atomic.

export interface TaskGroup {
  /** Run a synchronous spawn so that the process it starts is born inside the group. */
  enter<T>(spawn: () => T): T;
  /** Every process in the group and its sub-groups right now. Throws when it cannot be read. */
  pids(): number[];
  /** Whether any process is left in the group or its sub-groups. Throws when it cannot be read. */
  populated(): boolean;
  /** SIGKILL every process in the group at once, forks in flight included. Throws on failure. */
  kill(): void;
  /** Remove the (empty) group. False when it is still populated or could not be removed. */
  remove(): boolean;
}

export interface TaskGroups {
  /** A new group for one run; null when it could not be made (the stop then freezes first). */
  create(runId: string): TaskGroup | null;
  /** The group a previous Bridge made for this run, if it is still there (crash sweep). */
  find(runId: string): TaskGroup | null;
}

/** Several groups as one (a crash sweep of several runs). */
export function combineGroups(groups: readonly TaskGroup[]): TaskGroup | null {
  if (groups.length === 0) return null;
  if (groups.length === 1) return groups[0]!;
  return {
    enter: (spawn) => spawn(),
    pids: () => groups.flatMap((g) => g.pids()),
    populated: () => groups.some((g) => g.populated()),
    kill: () => {
      for (const g of groups) g.kill();
    },
    remove: () => groups.map((g) => g.remove()).every(Boolean),
  };
}
