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

export interface ProcReader {
  /** Every process visible right now. Processes that vanish while being read are left out. */
  list(): ProcEntry[];
  /**
   * Which of `markers` the process's initial environment carries as `SERVERFS_RUN_ID=<marker>`,
   * or null. Only processes of the caller's own uid are ever read. MARKER_UNREADABLE when no
   * marker signal of that process could be read (the Linux reader never answers it).
   */
  markerOf(pid: number, markers: readonly string[]): string | null | typeof MARKER_UNREADABLE;
}

/** Split a NUL-separated environment block and look for `SERVERFS_RUN_ID=<one of markers>`. */
export function findMarker(block: string, markers: readonly string[]): string | null {
  const prefix = "SERVERFS_RUN_ID=";
  for (const entry of block.split("\0")) {
    if (!entry.startsWith(prefix)) continue;
    const value = entry.slice(prefix.length);
    if (markers.includes(value)) return value;
  }
  return null;
}
