// Mutation exclusion. Reads never take it. The default is one process-wide FIFO mutex; the Agent
// Bridge supplies a lease-backed gate that also excludes other processes.

import type { Workdir } from "../config/types.ts";

export interface MutationGate {
  /** Runs fn while holding the workdir's mutation exclusion; throws ServerfsError WORKDIR_BUSY /
   *  WORKDIR_RECOVERY_REQUIRED / AGENT_LOCK_UNAVAILABLE when it cannot. */
  run<T>(workdir: Workdir, fn: () => Promise<T>): Promise<T>;
}

let shared: MutationGate | null = null;

/** The process-wide mutex (one per process, shared by every FileService that uses the default). */
export function processMutationGate(): MutationGate {
  if (shared === null) {
    let tail: Promise<unknown> = Promise.resolve();
    shared = {
      run<T>(_workdir: Workdir, fn: () => Promise<T>): Promise<T> {
        const result = tail.then(fn, fn);
        tail = result.then(
          () => undefined,
          () => undefined,
        );
        return result;
      },
    };
  }
  return shared;
}
