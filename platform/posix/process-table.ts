// The process-table seam shared by the POSIX containment engine. Linux reads /proc, macOS asks
// libproc; tests wrap a real reader to force situations the kernel will not produce on demand
// (a member that never goes away).

export interface ProcEntry {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** Exited but not yet reaped: holds no resources and runs no code, so it never counts as live. */
  zombie: boolean;
  /**
   * In a job-control stop (SIGSTOP and friends) as last read. A stopped process cannot fork, which
   * is what the freeze-first stop rests on; with several threads every one of them must be stopped
   * (see ProcReader.allThreadsStopped).
   */
  stopped: boolean;
  /** Threads in the process (1 where the OS stops a process as a whole, as xnu does). */
  threads: number;
  /** In an uninterruptible wait as last read (Linux 'D'), e.g. a parent waiting for its vfork child. */
  blocked: boolean;
  /** Opaque, exact-compare start time: with the pid it identifies one process across pid reuse. */
  startTime: string;
  /** Short executable name (comm), never the argument list: arguments may hold host paths. */
  command: string;
}

/**
 * markerOf's answer when a live same-uid process's markers could not be read at all (macOS hides
 * the environment of SIP-restricted binaries). The engine then never reports a stop proved.
 */
export const MARKER_UNREADABLE: unique symbol = Symbol("marker-unreadable");

/**
 * markerOf's answer for a process caught between two programs: execve has replaced its memory
 * but not yet laid out the new environment, so it reads as empty though it may well carry a
 * marker a moment later. Nothing is concluded from such a look; the engine looks again.
 */
export const MARKER_UNSETTLED: unique symbol = Symbol("marker-unsettled");

export type MarkerVerdict = string | null | typeof MARKER_UNREADABLE | typeof MARKER_UNSETTLED;

export interface ProcReader {
  /**
   * Every process visible right now. Processes that vanish while being read are left out. A
   * listing is not atomic: the Linux reader also reads every pid handed out while it listed, so a
   * process forked during the listing by a parent that then exited is still in the answer.
   */
  list(): ProcEntry[];
  /**
   * Which of `markers` the process's initial environment carries as `SERVERFS_RUN_ID=<marker>`,
   * or null. Only processes of the caller's own uid are ever read. MARKER_UNREADABLE when no
   * marker signal of that process could be read (the Linux reader never answers it);
   * MARKER_UNSETTLED while it is in the middle of an execve.
   */
  markerOf(pid: number, markers: readonly string[]): MarkerVerdict;
  /** One process by pid, or null when it is gone (a process found through its task group). */
  entry?(pid: number): ProcEntry | null;
  /**
   * Whether a process with start time `startTime` was certainly born before one with `boundary`
   * (ProcEntry.startTime values). False whenever that cannot be told: equal values (the same
   * clock tick), a value that does not parse. Absent where start times are not from a clock that
   * only goes forward (macOS's are wall-clock): then no start times are ever compared.
   */
  startedBefore?(startTime: string, boundary: string): boolean;
  /**
   * This process's own children right now (zombies included), or null when the OS cannot list
   * them on their own: what adopted zombies can be reaped from without reading the whole table.
   */
  ownChildren?(): ProcEntry[] | null;
  /**
   * Whether every thread of the process is stopped or waiting for a vfork child (see
   * waitsForVforkChild); absent: the entry's word holds.
   */
  allThreadsStopped?(pid: number): boolean;
  /**
   * Whether the process is blocked until its vfork child execs or exits. It runs no code of its
   * own until then, and a stop signal already sent to it takes effect before it runs any: as good
   * as stopped. Without this, a vfork child stopped before its exec keeps its parent waiting (not
   * stopped) for ever, and the freeze never converges (dash runs every foreground command so).
   */
  waitsForVforkChild?(pid: number): boolean;
  /**
   * Start following the lineage of a task whose leader was just spawned, where the OS keeps none
   * of its own (macOS: no task group, orphans go to launchd). Absent or null: membership is what
   * groups, sessions, markers and parent links show.
   */
  lineage?(leaderPid: number): TaskLineageView | null;
  /** The lineage of tasks swept after a crash, from what their spawn left behind (macOS). */
  sweepLineage?(markers: readonly string[]): TaskLineageView | null;
}

/** One task's lineage, asked on every look (see ProcReader.lineage). */
export interface TaskLineageView {
  /**
   * Among `table`'s processes that are not in `members`: which descend from a member (members
   * too), and which may descend from one through a process nobody saw (uncertain: never proved
   * gone while they live). A process carrying one of `markers` is never uncertain, it is a member.
   */
  classify(table: ReadonlyMap<number, ProcEntry>, members: ReadonlySet<number>, markers: readonly string[]): { members: number[]; uncertain: number[] };
  /** The task is over: stop following it. */
  release(): void;
}

const MARKER_PREFIX = Buffer.from("SERVERFS_RUN_ID=", "latin1");

/**
 * Which of `markers` a NUL-separated environment block carries as `SERVERFS_RUN_ID=<marker>`, or
 * null, read in place (the Linux reader's /proc/<pid>/environ bytes are never turned into strings).
 */
export function findMarkerInBlock(block: Uint8Array, markers: readonly string[]): string | null {
  if (markers.length === 0) return null;
  const b = Buffer.from(block.buffer, block.byteOffset, block.byteLength);
  for (let at = b.indexOf(MARKER_PREFIX); at !== -1; at = b.indexOf(MARKER_PREFIX, at + 1)) {
    if (at > 0 && b[at - 1] !== 0) continue;
    const start = at + MARKER_PREFIX.length;
    let end = b.indexOf(0, start);
    if (end === -1) end = b.length;
    const value = b.toString("latin1", start, end);
    if (markers.includes(value)) return value;
  }
  return null;
}

/** The same, for an environment already decoded to a string (macOS's procargs). */
export function findMarker(block: string, markers: readonly string[]): string | null {
  return findMarkerInBlock(Buffer.from(block, "utf8"), markers);
}
