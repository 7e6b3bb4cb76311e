// What each OS's process table answers for process stamps (./process-stamp.ts), and the one probe
// the POSIX tables share.

export interface ProcessTable {
  /** The start time of `pid`; null when no such process runs (an exited zombie included); undefined when this OS cannot tell. */
  start(pid: number): string | null | undefined;
  /** This process's own start time; undefined when the table cannot tell (then nothing is judged). */
  ownStart(): string | undefined;
  /** Identifies the pid space of this process (hashed before use); undefined when unknown. */
  pidSpace(): string | undefined;
}

/** Whether a pid exists at all, for when the table cannot be read (hidepid, permissions): kill(pid, 0). */
export function signalProbe(pid: number): "none" | "exists" {
  try {
    process.kill(pid, 0);
    return "exists";
  } catch (err) {
    return (err as { code?: unknown }).code === "ESRCH" ? "none" : "exists";
  }
}
