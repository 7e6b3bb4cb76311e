// The platform entry point: picks the implementation for the OS we run on. Every OS module binds
// its native library lazily (inside the function that needs it), so importing this file on any OS
// loads no native code until a function is called.
import { ServerfsError } from "../src/errors.ts";
import { createLinuxContainment } from "./linux/containment.ts";
import { createLinuxLeases } from "./linux/lease.ts";
import { linuxPeerCredentials } from "./linux/peercred.ts";
import { becomeLinuxSubreaper } from "./linux/subreaper.ts";
import type { Containment, LeaseProvider, PeerIdentity } from "./types.ts";

export { scrubEnv, RUN_ID_VARIABLE, RUN_ID_PATTERN } from "./env.ts";
export type * from "./types.ts";

let containmentInstance: Containment | null = null;
let leaseInstance: LeaseProvider | null = null;

function unsupported(what: string): ServerfsError {
  return new ServerfsError("PLATFORM_UNSUPPORTED", `${what} is not available on ${process.platform}`);
}

/** The process containment for this OS (one shared instance). */
export function containment(): Containment {
  if (containmentInstance === null) {
    switch (process.platform) {
      case "linux":
        containmentInstance = createLinuxContainment();
        break;
      default:
        throw unsupported("process containment");
    }
  }
  return containmentInstance;
}

/** Exclusive, non-blocking, non-inheritable file leases for this OS. */
export function leases(): LeaseProvider {
  if (leaseInstance === null) {
    switch (process.platform) {
      case "linux":
        leaseInstance = createLinuxLeases();
        break;
      default:
        throw unsupported("file leases");
    }
  }
  return leaseInstance;
}

/** Kernel-measured peer of a connected unix socket; nulls when unavailable (callers reject). */
export function peerCredentials(fd: number): PeerIdentity {
  switch (process.platform) {
    case "linux":
      return linuxPeerCredentials(fd);
    default:
      return { uid: null, gid: null, pid: null };
  }
}

/**
 * Call once at Bridge start. Linux: PR_SET_CHILD_SUBREAPER, so orphaned descendants of providers
 * are re-parented to the Bridge and stay findable. Returns false where it is not available.
 */
export function becomeSubreaper(): boolean {
  switch (process.platform) {
    case "linux":
      return becomeLinuxSubreaper();
    default:
      return false;
  }
}
