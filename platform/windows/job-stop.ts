// Stopping a task's job with proof. The job's own count (ActiveProcesses == 0) proves every member
// gone; a Toolhelp scan (./process-scan.ts) then proves no process LEFT the job: a live process
// outside it whose parent was a member of the tree, or that carries the task's run marker, or that
// descends from either, is a survivor, and the stop is not proved.
//
// Escapees found are terminated too, but the stop stays unproved: something crossed the job's
// boundary, and what else did (through a member that had already exited, say) is not known.
//
// The tree is every member the job was seen to hold, with its creation time: the launcher (noted
// at spawn), every pid a look at the job listed (members(), each poll of the stop), so a member
// that exited before the stop still vouches for its children. Each is held by a handle until a
// proved stop, so none of those pids can be reused meanwhile.
import type { StopEvidence } from "../types.ts";
import {
  exitTimeOf,
  findEscapees,
  holdProcess,
  release,
  terminateIfSame,
  type HeldProcess,
  type LiveProcess,
  type TreeMember,
} from "./process-scan.ts";

export const TERMINATED_EXIT_CODE = 137;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What the stop needs of a job (platform/windows/job.ts's JobObject). */
export interface StoppableJob {
  activeProcesses(): number | null;
  pids(): number[];
  terminate(exitCode: number): boolean;
}

/**
 * The members a job was seen to hold, each with a held handle (./process-scan.ts HeldProcess):
 * their pids stay theirs until release(), and their exit times are known.
 */
export class JobTree {
  private readonly members = new Map<string, HeldProcess>();

  /** Notes these pids (job members right now); returns the pids. */
  note(pids: readonly number[]): number[] {
    for (const pid of pids) {
      if ([...this.members.values()].some((m) => m.pid === pid && exitTimeOf(m) === null)) continue;
      const held = holdProcess(pid);
      if (held === null) continue;
      const key = `${pid}@${held.created}`;
      if (this.members.has(key)) release(held);
      else this.members.set(key, held);
    }
    return [...pids];
  }

  list(): TreeMember[] {
    return [...this.members.values()].map((m) => ({ pid: m.pid, created: m.created, exited: exitTimeOf(m) }));
  }

  /** Closes every held handle (after a proved stop: nothing is left for them to vouch for). */
  release(): void {
    for (const m of this.members.values()) release(m);
    this.members.clear();
  }
}

async function proveEmpty(job: StoppableJob, tree: JobTree, deadline: number): Promise<boolean> {
  for (let pause = 1; ; pause = Math.min(pause * 2, 10)) {
    const active = job.activeProcesses();
    if (active === 0) return true;
    if (active !== null) tree.note(job.pids());
    if (performance.now() >= deadline) return false;
    await sleep(pause);
  }
}

const survivorsOf = (rows: readonly LiveProcess[]) => rows.map((p) => ({ pid: p.pid, command: p.exe }));

export async function stopJob(
  job: StoppableJob,
  tree: JobTree,
  runId: string,
  graceMs: number,
  politeStop: () => void,
  killPhaseMs: number,
): Promise<StopEvidence> {
  const started = performance.now();
  const done = (proved: boolean, method: StopEvidence["method"], survivors: StopEvidence["survivors"]): StopEvidence => ({
    proved,
    survivors,
    method,
    elapsedMs: performance.now() - started,
    proof: "job",
  });
  // The job is empty: the stop is proved only if nothing that left it is still running.
  const provedIfNoneEscaped = (method: StopEvidence["method"]): StopEvidence => {
    const inJob = new Set(job.pids());
    const escaped = findEscapees(tree.list(), (pid) => inJob.has(pid), [runId]);
    if (escaped === null) return done(false, method, []);
    for (const p of escaped) terminateIfSame(p.pid, p.created, TERMINATED_EXIT_CODE);
    if (escaped.length === 0) tree.release();
    return done(escaped.length === 0, method, survivorsOf(escaped));
  };
  try {
    tree.note(job.pids());
    if (job.activeProcesses() === 0) return provedIfNoneEscaped("already-exited");
    if (graceMs > 0) {
      politeStop();
      if (await proveEmpty(job, tree, started + graceMs)) return provedIfNoneEscaped("term");
    }
    tree.note(job.pids());
    job.terminate(TERMINATED_EXIT_CODE);
    if (await proveEmpty(job, tree, performance.now() + killPhaseMs)) return provedIfNoneEscaped("kill");
    return done(false, "kill", job.pids().map((pid) => ({ pid, command: "unknown" })));
  } catch {
    return done(false, "kill", job.pids().map((pid) => ({ pid, command: "unknown" })));
  }
}
