// Who owns a file serverfs leaves in a workdir while it writes (a temp file): a process stamp, the
// pid and start time of the writing process plus the pid space they are counted in. A pid alone
// is reused; with its start time it names one process. The pid space matters because a workdir
// can be shared by writers that number processes differently (another container's pid namespace,
// another host over a network filesystem): there, pid 1234 is a different process, or none, and
// "not running here" says nothing about the writer. So an owner is judged only in its own space.
//
// Each OS answers from its own process table: Linux /proc/<pid>/stat (start time in clock ticks
// since boot), macOS proc_pidinfo(PROC_PIDTBSDINFO) (seconds and microseconds), Windows
// GetProcessTimes (creation time in 100 ns units). An OS that cannot tell has no stamp: its temp
// files carry no owner, and owners that cannot be checked are always treated as alive.
import { createHash } from "node:crypto";
import { select } from "../os.ts";
import { darwinProcessTable } from "./process-stamp-darwin.ts";
import { linuxProcessTable } from "./process-stamp-linux.ts";
import type { ProcessTable } from "./process-stamp-table.ts";
import { windowsProcessTable } from "./process-stamp-windows.ts";

export type { ProcessTable } from "./process-stamp-table.ts";

export interface ProcessStamp {
  pid: number;
  /** Opaque, exact-compare start time: digits and dots only. */
  start: string;
  /** The pid space the pid is counted in: 8 hex digits. */
  space: string;
}

/** What the process table says about an owner. */
export type OwnerState = "alive" | "gone" | "unknown";

function table(): ProcessTable | null {
  return select<ProcessTable | null>({
    linux: () => linuxProcessTable,
    darwin: () => darwinProcessTable,
    windows: () => windowsProcessTable,
    other: () => null,
  });
}

const START_SHAPE = /^[0-9][0-9.]{0,39}$/;

/** The stamp of the process running this code in `t`'s table, or null when that table cannot tell. */
export function ownStampIn(t: ProcessTable | null): ProcessStamp | null {
  if (t === null) return null;
  let start: string | undefined;
  let space: string | undefined;
  try {
    start = t.ownStart();
    space = t.pidSpace();
  } catch {
    return null;
  }
  if (start === undefined || !START_SHAPE.test(start) || space === undefined) return null;
  return { pid: process.pid, start, space: createHash("sha256").update(space).digest("hex").slice(0, 8) };
}

let own: ProcessStamp | null | undefined;

/** This process's stamp (computed once), or null on an OS that cannot tell. */
export function ownStamp(): ProcessStamp | null {
  if (own === undefined) own = ownStampIn(table());
  return own;
}

/**
 * Whether the owner `stamp` still runs, in `t`'s table as seen by the process stamped `self`.
 * Only a definite answer about the very same pid space is "gone": a pid that runs with another
 * start time (reused), or that no process has. Everything else, including another pid space, an
 * unreadable table and our own stamp, is "alive" or "unknown", which the caller keeps.
 */
export function ownerStateIn(t: ProcessTable | null, self: ProcessStamp | null, stamp: ProcessStamp): OwnerState {
  if (t === null || self === null || stamp.space !== self.space) return "unknown";
  if (stamp.pid === self.pid && stamp.start === self.start) return "alive";
  let start: string | null | undefined;
  try {
    start = t.start(stamp.pid);
  } catch {
    return "unknown";
  }
  if (start === undefined) return "unknown";
  if (start === null) return "gone";
  return start === stamp.start ? "alive" : "gone";
}

/** ownerStateIn for this OS and this process. */
export function ownerState(stamp: ProcessStamp): OwnerState {
  return ownerStateIn(table(), ownStamp(), stamp);
}
