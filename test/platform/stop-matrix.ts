// The stop-proof matrix shared by containment-matrix.test.ts (every shape, a few dozen times, in
// `npm test`) and containment-stress.test.ts (the shapes that fork during the stop, 10,000 times,
// in .ci/run's stress lane). Every stop is checked by scans of /proc that never go through the
// code under test: right after stop() returns, and once more after the whole batch, for any live
// process carrying one of the batch's run markers.
import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createLinuxContainment, linuxStopProof } from "../../platform/linux/containment.ts";
import type { Containment } from "../../platform/types.ts";
import { isLive, livePidsOfTask, livePidsWithMarkerPrefix, procFacts, waitUntil } from "../support/proc.ts";
import { childEnv } from "./helpers.ts";
import type { TreeShape } from "./shapes.ts";

/**
 * How long a stop may look before it gives up on proof. What counts as proved never depends on
 * it; the product's 2 s is for an agent that truly cannot be killed, and four trees stopping at
 * once on a loaded 2-core machine must not be mistaken for one.
 */
const KILL_PHASE_MS = 15_000;

export interface ProofMode {
  name: "cgroup" | "freeze";
  /** Why this mode cannot run here, or null. */
  skipReason: string | null;
  containment(): Containment;
}

/** Both Linux stop proofs; the cgroup one only where this process may make task cgroups. */
export function proofModes(): ProofMode[] {
  const report = process.platform === "linux" ? linuxStopProof() : { path: "freeze", reason: "not Linux" };
  let cgroup: Containment | null = null;
  let freeze: Containment | null = null;
  return [
    {
      name: "cgroup",
      skipReason: report.path === "cgroup" ? null : `needs a writable cgroup v2 with cgroup.kill (${report.reason})`,
      containment: () => (cgroup ??= createLinuxContainment({ taskCgroups: "auto", killPhaseMs: KILL_PHASE_MS })),
    },
    {
      name: "freeze",
      skipReason: null,
      containment: () => (freeze ??= createLinuxContainment({ taskCgroups: "off", killPhaseMs: KILL_PHASE_MS })),
    },
  ];
}

function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

/** The tree's long-lived processes: read comm first, so only those get their environ read. */
function sleepersOf(runId: string, leaderPid: number, leaderStart: string | undefined): number {
  const needle = `\0SERVERFS_RUN_ID=${runId}\0`;
  const reused = leaderStart !== undefined && procFacts(leaderPid) !== null && procFacts(leaderPid)!.startTime !== leaderStart;
  let count = 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || !["sleep", "perl"].includes(comm(Number(name)))) continue;
    const pid = Number(name);
    const facts = procFacts(pid);
    if (!facts || facts.state === "Z" || facts.state === "X") continue;
    let environ = "";
    try {
      environ = `\0${readFileSync(`/proc/${pid}/environ`, "latin1")}\0`;
    } catch {
      continue;
    }
    if (environ.includes(needle) || (!reused && facts.sid === leaderPid)) count++;
  }
  return count;
}

let batch = 0;

/** One stop of one tree; returns what went wrong, or null. */
/**
 * The TERM grace of one stop. "fixed": long enough for a shape that answers TERM to finish
 * answering it. "random": anywhere from none (the freeze begins while the TERM handlers fork) to
 * past the shape's answer, so the stress lane's births fall before, during and after the freeze.
 */
export type GraceChoice = "fixed" | "random";

function graceFor(shape: TreeShape, choice: GraceChoice): number {
  const fixed = shape.ignoresTerm ? 20 : 300;
  return choice === "fixed" ? fixed : Math.floor(Math.random() * (fixed / 2 + 1));
}

async function runOnce(mode: ProofMode, shape: TreeShape, runId: string, proofs: Set<string>, checkMembership: boolean, grace: GraceChoice): Promise<string | null> {
  const p = await mode.containment().spawn({ argv: shape.argv, cwd: tmpdir(), env: childEnv(), runId });
  // With it, a session scan never mistakes a new process that got the leader's pid for the leader.
  const leaderStart = procFacts(p.pid)?.startTime;
  const built = await waitUntil(
    () =>
      sleepersOf(runId, p.pid, leaderStart) === shape.sleepers &&
      (!shape.hasStoppedMember || livePidsOfTask(runId, p.pid, leaderStart).some((pid) => procFacts(pid)?.state === "T")),
    10_000,
  );
  if (!built) {
    await p.stop(0);
    return `${shape.name}: tree never reached ${shape.sleepers} sleepers`;
  }
  // Membership must match an independent marker scan exactly (no member missed, none invented).
  // Compare at a quiet moment: a `setsid -f` parent may still be on its way out.
  let members: number[] = livePidsOfTask(runId, p.pid, leaderStart);
  let independent: number[] = members;
  for (let attempt = 0; checkMembership && attempt < 300; attempt++) {
    members = (await p.members()).sort((a, b) => a - b);
    independent = livePidsOfTask(runId, p.pid, leaderStart);
    if (Bun.deepEquals(members, independent)) break;
    await Bun.sleep(10);
  }
  if (!Bun.deepEquals(members, independent)) return `${shape.name}: members ${members} but /proc says ${independent}`;
  const recorded = members.map((pid) => ({ pid, start: procFacts(pid)?.startTime }));
  const graceMs = graceFor(shape, grace);
  const evidence = await p.stop(graceMs);
  const after = livePidsOfTask(runId, p.pid, leaderStart);
  proofs.add(evidence.proof ?? "none");
  if (!evidence.proved || evidence.survivors.length > 0) return `${shape.name}: not proved (${JSON.stringify(evidence.survivors)})`;
  if (after.length > 0) return `${shape.name}: proved, yet ${after.length} live after the stop: ${after.map(comm)}`;
  if (shape.ignoresTerm && evidence.method !== "kill") return `${shape.name}: method ${evidence.method}`;
  for (const r of recorded) if (isLive(r.pid, r.start)) return `${shape.name}: member ${r.pid} still live`;
  return null;
}

export interface MatrixResult {
  failures: string[];
  /** Live processes of the batch found by the final scan: each one outlived a proved stop. */
  leftBehind: string[];
  /** The proofs the stops reported (one entry per kind seen). */
  proofs: string[];
}

/** `checkMembership`: also compare members() with the independent scan before each stop (slow). */
export async function runLanes(mode: ProofMode, shape: TreeShape, iterations: number, lanes: number, checkMembership = true, grace: GraceChoice = "fixed"): Promise<MatrixResult> {
  batch += 1;
  const prefix = `m${process.pid}-${batch}-${mode.name}-`;
  const failures: string[] = [];
  const proofs = new Set<string>();
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < iterations && failures.length < 5) {
        next += 1;
        const failure = await runOnce(mode, shape, `${prefix}${next}`, proofs, checkMembership, grace);
        if (failure) failures.push(failure);
      }
    }),
  );
  // A process that escaped a proved stop lives on (they all sleep 1000 s): a last scan of the
  // whole batch finds it even if the scan right after its stop raced its birth.
  const left = livePidsWithMarkerPrefix(prefix);
  for (const pid of left) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  return { failures, leftBehind: left.map((pid) => `${pid} ${comm(pid)}`), proofs: [...proofs] };
}

export interface Bystander {
  pid: number;
  start: string;
  kill(): void;
}

/** Unrelated processes with the targets' command lines: no marker, not anybody's descendant. */
export async function startBystanders(): Promise<Bystander[]> {
  const out: Bystander[] = [];
  for (const argv of [["sleep", "1000"], ["sh", "-c", "sleep 1000 & wait"]]) {
    const p = Bun.spawn(argv, { detached: argv[0] === "sh", stdio: ["ignore", "ignore", "ignore"] });
    await waitUntil(() => procFacts(p.pid) !== null, 1000);
    out.push({
      pid: p.pid,
      start: procFacts(p.pid)!.startTime,
      kill: () => {
        try {
          process.kill(-p.pid, "SIGKILL");
        } catch {
          p.kill("SIGKILL");
        }
      },
    });
  }
  return out;
}
