// Linux containment: own session per provider (setsid via Bun.spawn detached), /proc descendant
// walk, SERVERFS_RUN_ID marker in /proc/<pid>/environ, and adopted-zombie reaping when the Bridge
// is a child subreaper. Without becomeSubreaper() it still works, with weaker guarantees: an
// orphan that cleared its environment and was re-parented to PID 1 before we ever saw it cannot be
// found (with the subreaper it stays our descendant).
import { createPosixContainment, DEFAULT_KILL_PHASE_MS } from "../posix/containment.ts";
import type { ProcReader } from "../posix/process-table.ts";
import type { Containment } from "../types.ts";
import { createProcReader, readProcEntry } from "./proc-reader.ts";
import { reapAdopted } from "./subreaper.ts";

export interface LinuxContainmentOptions {
  /** Test seam: the process table. Defaults to /proc. */
  procReader?: ProcReader;
  killPhaseMs?: number;
}

export function createLinuxContainment(options: LinuxContainmentOptions = {}): Containment {
  return createPosixContainment({
    reader: options.procReader ?? createProcReader(),
    ownGroups: ownGroups(),
    reap: (pid) => {
      reapAdopted(pid);
    },
    startTimeOf: (pid) => readProcEntry(pid)?.startTime ?? null,
    killPhaseMs: options.killPhaseMs ?? DEFAULT_KILL_PHASE_MS,
  });
}

function ownGroups(): number[] {
  const self = readProcEntry(process.pid);
  return self ? [self.pgid, self.sid] : [];
}
