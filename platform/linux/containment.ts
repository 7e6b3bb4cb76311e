// Linux containment: own session per provider (setsid via Bun.spawn detached), /proc descendant
// walk, SERVERFS_RUN_ID marker in /proc/<pid>/environ, and adopted-zombie reaping when the Bridge
// is a child subreaper. Where this process may make cgroups (root, or a delegated cgroup v2
// subtree) each provider is also born into a cgroup of its own, and the stop proof is that
// cgroup found empty; elsewhere the stop freezes every member before it kills (see
// posix/containment-set.ts). Without becomeSubreaper() it still works, with weaker guarantees: an
// orphan that cleared its environment and was re-parented to PID 1 before we ever saw it cannot be
// found without a cgroup (with the subreaper it stays our descendant).
import { createPosixContainment, DEFAULT_KILL_PHASE_MS } from "../posix/containment.ts";
import type { ProcReader } from "../posix/process-table.ts";
import type { Containment, StopProofReport } from "../types.ts";
import { createProcReader, readProcEntry } from "./proc-reader.ts";
import { isLinuxSubreaper, reapAdopted } from "./subreaper.ts";
import { setUpTaskCgroups, type CgroupSetup } from "./task-cgroup.ts";

/** Set to "off" to make every stop freeze first even where task cgroups would work (diagnosis). */
export const TASK_CGROUP_VARIABLE = "SERVERFS_TASK_CGROUP";

export interface LinuxContainmentOptions {
  /** Test seam: the process table. Defaults to /proc. */
  procReader?: ProcReader;
  killPhaseMs?: number;
  /** "off": no task cgroups (the freeze-first proof). Default: the environment's word, else auto. */
  taskCgroups?: "auto" | "off";
}

let cgroupSetup: CgroupSetup | null = null;

function taskCgroupSetup(mode: "auto" | "off"): CgroupSetup {
  if (mode === "off") {
    return { groups: null, report: { path: "freeze", reason: `task cgroups are turned off (${TASK_CGROUP_VARIABLE}=off)` } };
  }
  // The probe moves this process in and out of a cgroup once; its answer holds for the process.
  cgroupSetup ??= setUpTaskCgroups();
  return cgroupSetup;
}

function modeFromEnvironment(): "auto" | "off" {
  return process.env[TASK_CGROUP_VARIABLE] === "off" ? "off" : "auto";
}

/** Which stop proof this process's tasks get, and why (for `doctor`). */
export function linuxStopProof(): StopProofReport {
  return taskCgroupSetup(modeFromEnvironment()).report;
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
    taskGroups: taskCgroupSetup(options.taskCgroups ?? modeFromEnvironment()).groups,
    adoptsOrphans: isLinuxSubreaper,
  });
}

function ownGroups(): number[] {
  const self = readProcEntry(process.pid);
  return self ? [self.pgid, self.sid] : [];
}
