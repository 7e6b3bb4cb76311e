// The restart sweep on Windows. Task jobs have no name, so a restarted Bridge cannot reopen them,
// and needs not: the crashed Bridge held the only handle to each, and when Windows closed it with
// the process, KILL_ON_JOB_CLOSE terminated every member (the Bridge's own kill-on-close job,
// ./safety-net.ts, does the same for everything below it). What the proof still has to rule out is
// a process outside every job: one that carries a swept run marker in its environment
// (./process-environment.ts), or descends from one. Those are terminated and looked for again
// until none is left or the deadline passes.
import { RUN_ID_PATTERN } from "../env.ts";
import type { StopEvidence, SweepResult } from "../types.ts";
import { TERMINATED_EXIT_CODE } from "./job-stop.ts";
import { findEscapees, terminateIfSame } from "./process-scan.ts";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const nobodyInJob = (): boolean => false;

export async function sweepMarkers(runIds: readonly string[], graceMs: number, killPhaseMs: number): Promise<SweepResult> {
  const started = performance.now();
  const evidence = (proved: boolean, method: StopEvidence["method"], survivors: StopEvidence["survivors"]): StopEvidence => ({
    proved,
    survivors,
    method,
    elapsedMs: performance.now() - started,
    proof: "job",
  });
  const markers = runIds.filter((id) => typeof id === "string" && RUN_ID_PATTERN.test(id));
  if (markers.length === 0) return { found: 0, evidence: evidence(true, "already-exited", []) };
  const first = findEscapees([], nobodyInJob, markers);
  if (first === null) return { found: 0, evidence: evidence(false, "kill", []) };
  if (first.length === 0) return { found: 0, evidence: evidence(true, "already-exited", []) };
  const deadline = performance.now() + killPhaseMs + Math.max(0, graceMs);
  let left = first;
  for (let pause = 1; ; pause = Math.min(pause * 2, 10)) {
    for (const p of left) terminateIfSame(p.pid, p.created, TERMINATED_EXIT_CODE);
    const again = findEscapees([], nobodyInJob, markers);
    if (again === null) return { found: first.length, evidence: evidence(false, "kill", left.map((p) => ({ pid: p.pid, command: p.exe }))) };
    if (again.length === 0) return { found: first.length, evidence: evidence(true, "kill", []) };
    left = again;
    if (performance.now() >= deadline) {
      return { found: first.length, evidence: evidence(false, "kill", left.map((p) => ({ pid: p.pid, command: p.exe }))) };
    }
    await sleep(pause);
  }
}
