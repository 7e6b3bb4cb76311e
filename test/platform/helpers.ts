// Helpers for the platform tests: run ids and a minimal child environment. The independent /proc
// observers (never through the code under test, so a containment bug cannot hide its own
// survivors) live in test/support/proc.ts and are re-exported here.
export { isLinux, isLive, livePidsOfTask, livePidsWithMarker, procFacts, waitUntil, type ProcFacts } from "../support/proc.ts";

let counter = 0;
export function uniqueRunId(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

export function childEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/" };
}
