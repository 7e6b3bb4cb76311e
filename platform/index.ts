// The platform entry point: picks the implementation for the OS we run on. Every OS module binds
// its native library lazily (inside the function that needs it), so importing this file on any OS
// loads no native code until a function is called.
import { platformError, type PlatformFailure } from "./errors.ts";
import { IS_WINDOWS, PLATFORM_NAME, select } from "./os.ts";
import { createDarwinContainment } from "./darwin/containment.ts";
import { createDarwinLeases } from "./darwin/lease.ts";
import { darwinPeerCredentials } from "./darwin/peercred.ts";
import { createLinuxContainment, linuxStopProof } from "./linux/containment.ts";
import { createLinuxLeases } from "./linux/lease.ts";
import { linuxPeerCredentials } from "./linux/peercred.ts";
import { becomeLinuxSubreaper } from "./linux/subreaper.ts";
import { JournalSlot, journaledContainment } from "./journal.ts";
import type { Containment, LeaseProvider, PeerIdentity, SpawnJournal, StopProofReport } from "./types.ts";
import { createWindowsContainment } from "./windows/containment.ts";
import { createWindowsLeases } from "./windows/lease.ts";
import { enterKillOnCloseJob } from "./windows/safety-net.ts";

export { scrubEnv, isScrubbedName, RUN_ID_VARIABLE, RUN_ID_PATTERN } from "./env.ts";
export { ensureBridgeToken, readBridgeToken, tokensEqual, TOKEN_FILE_NAME } from "./token.ts";
export { joinWindowsCommandLine, quoteWindowsArg, splitWindowsCommandLine } from "./windows/argv-quote.ts";
export type * from "./types.ts";

let containmentInstance: Containment | null = null;
const journals = new JournalSlot();
let leaseInstance: LeaseProvider | null = null;

function unsupported(what: string): PlatformFailure {
  return platformError("PLATFORM_UNSUPPORTED", `${what} is not available on ${PLATFORM_NAME}`);
}

/**
 * The process containment for this OS (one shared instance). Every spawn through it is written to
 * the installed spawn journal, if any (see installSpawnJournal).
 */
export function containment(): Containment {
  if (containmentInstance === null) {
    const os = select<Containment>({
      linux: createLinuxContainment,
      darwin: createDarwinContainment,
      windows: createWindowsContainment,
      other: () => {
        throw unsupported("process containment");
      },
    });
    containmentInstance = journaledContainment(os, () => journals.current());
  }
  return containmentInstance;
}

/** What a stop of a task started by this process is proved by, and why (docs/platform.md, "Stop"). */
export function stopProof(): StopProofReport {
  return select<StopProofReport>({
    linux: linuxStopProof,
    darwin: () => ({ path: "freeze", reason: "macOS has no cgroups: every member is stopped (SIGSTOP) before it is killed" }),
    windows: () => ({ path: "job", reason: "one Job Object per task" }),
    other: () => ({ path: "freeze", reason: `no task groups on ${PLATFORM_NAME}` }),
  });
}

/**
 * The running Bridge installs its journal of run ids started outside any task (probes, model
 * discovery), so its next start can sweep leftovers of a crash. Returns the uninstall function.
 */
export function installSpawnJournal(journal: SpawnJournal): () => void {
  return journals.install(journal);
}

/** Exclusive, non-blocking, non-inheritable file leases for this OS. */
export function leases(): LeaseProvider {
  if (leaseInstance === null) {
    leaseInstance = select<LeaseProvider>({
      linux: createLinuxLeases,
      darwin: createDarwinLeases,
      windows: createWindowsLeases,
      other: () => {
        throw unsupported("file leases");
      },
    });
  }
  return leaseInstance;
}

/**
 * Kernel-measured peer of a connected unix socket; nulls when unavailable (callers reject).
 * Windows named pipes have no such fd: the Bridge authenticates them with the token instead.
 */
export function peerCredentials(fd: number): PeerIdentity {
  try {
    return select<PeerIdentity>({
      linux: () => linuxPeerCredentials(fd),
      darwin: () => darwinPeerCredentials(fd),
      other: () => ({ uid: null, gid: null, pid: null }),
    });
  } catch {
    return { uid: null, gid: null, pid: null };
  }
}

/**
 * Call once at Bridge start.
 * Linux: PR_SET_CHILD_SUBREAPER, so orphaned descendants of providers are re-parented to the
 * Bridge and stay findable (containment works without it, with weaker guarantees).
 * Windows: puts the Bridge in a KILL_ON_JOB_CLOSE job, so every task tree dies with the Bridge.
 * macOS: nothing comparable exists; returns false.
 */
export function becomeSubreaper(): boolean {
  try {
    return select<boolean>({ linux: becomeLinuxSubreaper, windows: enterKillOnCloseJob, other: () => false });
  } catch {
    return false;
  }
}
