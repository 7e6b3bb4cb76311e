// Independent observers for platform tests: they read /proc directly, never through the code
// under test, so a containment bug cannot hide its own survivors.
import { readFileSync, readdirSync } from "node:fs";

export const isLinux = process.platform === "linux";

export interface ProcFacts {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  state: string;
  startTime: string;
}

export function procFacts(pid: number): ProcFacts | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return {
      pid,
      state: fields[0]!,
      ppid: Number(fields[1]),
      pgid: Number(fields[2]),
      sid: Number(fields[3]),
      startTime: fields[19]!,
    };
  } catch {
    return null;
  }
}

/** Alive and not a zombie, and (when given) still the same process (same start time). */
export function isLive(pid: number, startTime?: string): boolean {
  const facts = procFacts(pid);
  if (!facts || facts.state === "Z" || facts.state === "X") return false;
  return startTime === undefined || facts.startTime === startTime;
}

/** Live processes whose exec environment carries SERVERFS_RUN_ID=<runId>. */
export function livePidsWithMarker(runId: string): number[] {
  const needle = `SERVERFS_RUN_ID=${runId}`;
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
      if (env.includes(needle) && isLive(pid)) out.push(pid);
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * Live processes that belong to a task by either independent criterion: the marker, or
 * membership of the leader's session (a process that cleared its environment keeps the session).
 */
export function livePidsOfTask(runId: string, leaderPid: number): number[] {
  const out = new Set(livePidsWithMarker(runId));
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const facts = procFacts(Number(name));
    if (facts && facts.sid === leaderPid && facts.pid !== process.pid && isLive(facts.pid)) out.add(facts.pid);
  }
  return [...out].sort((a, b) => a - b);
}

export async function waitUntil(check: () => boolean, timeoutMs: number, stepMs = 5): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    if (check()) return true;
    if (performance.now() > end) return false;
    await Bun.sleep(stepMs);
  }
}

let counter = 0;
export function uniqueRunId(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

export function childEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/" };
}
