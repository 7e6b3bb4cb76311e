// macOS containment: own session per provider (Bun.spawn detached calls setsid), descendant walk
// and marker scan through libproc/sysctl. macOS has no child-subreaper: orphans go to launchd,
// which reaps promptly, so there is nothing for us to reap; an orphan stays findable by its marker
// (an inherited marker-file descriptor, or the environment: marker-file.ts), by having been seen
// before, or by its group/session.
import { createPosixContainment, DEFAULT_KILL_PHASE_MS } from "../posix/containment.ts";
import type { ProcReader } from "../posix/process-table.ts";
import type { Containment } from "../types.ts";
import { libSystem } from "./libsystem.ts";
import { openMarker, recordLeaderIds, removeMarker } from "./marker-file.ts";
import { bsdInfo, createDarwinProcReader } from "./proc-reader.ts";
import { uniqueIdsOf } from "./unique-ids.ts";

export interface DarwinContainmentOptions {
  procReader?: ProcReader;
  killPhaseMs?: number;
}

export function createDarwinContainment(options: DarwinContainmentOptions = {}): Containment {
  const sys = libSystem();
  return createPosixContainment({
    reader: options.procReader ?? createDarwinProcReader(),
    ownGroups: [sys.getpgid(0), sys.getsid(0)].filter((id) => id > 0),
    startTimeOf: (pid) => bsdInfo(pid)?.startTime ?? null,
    killPhaseMs: options.killPhaseMs ?? DEFAULT_KILL_PHASE_MS,
    openMarkerFd: openMarker,
    onSpawned: (runId, pid) => {
      const ids = uniqueIdsOf(pid);
      if (ids) recordLeaderIds(runId, ids);
    },
    onProved: removeMarker,
  });
}
