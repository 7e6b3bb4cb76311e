// Every shape, many times, with an independent /proc check after each stop. Lanes run in parallel
// (4 trees alive at once), which also proves that one task's stop never touches another's tree.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { becomeSubreaper, containment } from "../../platform/index.ts";
import { isLinuxSubreaper, leaveLinuxSubreaper } from "../../platform/linux/subreaper.ts";
import { isLinux, isLive, livePidsOfTask, procFacts, waitUntil } from "../support/proc.ts";
import { childEnv, uniqueRunId } from "./helpers.ts";
import { SHAPES, TREE_50, type TreeShape } from "./shapes.ts";

const ITERATIONS = 100;
const LANES = 4;
const TREE_50_ITERATIONS = 100;

function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

function sleepersOf(runId: string, leaderPid: number): number {
  return livePidsOfTask(runId, leaderPid).filter((pid) => ["sleep", "perl"].includes(comm(pid))).length;
}

async function runOnce(shape: TreeShape): Promise<void> {
  const runId = uniqueRunId(shape.name);
  const p = await containment().spawn({ argv: shape.argv, cwd: tmpdir(), env: childEnv(), runId });
  const built = await waitUntil(
    () =>
      sleepersOf(runId, p.pid) === shape.sleepers &&
      (!shape.hasStoppedMember || livePidsOfTask(runId, p.pid).some((pid) => procFacts(pid)?.state === "T")),
    10_000,
  );
  if (!built) {
    await p.stop(0);
    throw new Error(`${shape.name}: tree never reached ${shape.sleepers} sleepers`);
  }
  // Membership must match an independent marker scan exactly (no member missed, none invented).
  // Compare at a quiet moment: a `setsid -f` parent may still be on its way out (on a loaded
  // 2-core machine that took over the former 0.5 s budget; the comparison itself stays exact).
  let members: number[] = [];
  for (let attempt = 0; attempt < 300; attempt++) {
    members = (await p.members()).sort((a, b) => a - b);
    if (Bun.deepEquals(members, livePidsOfTask(runId, p.pid))) break;
    await Bun.sleep(10);
  }
  expect(members).toEqual(livePidsOfTask(runId, p.pid));
  const recorded = members.map((pid) => ({ pid, start: procFacts(pid)?.startTime }));
  const evidence = await p.stop(shape.ignoresTerm ? 20 : 300);
  expect(evidence.proved).toBe(true);
  expect(evidence.survivors).toEqual([]);
  if (shape.ignoresTerm) expect(evidence.method).toBe("kill");
  expect(livePidsOfTask(runId, p.pid)).toEqual([]);
  for (const r of recorded) expect(isLive(r.pid, r.start)).toBe(false);
}

async function runLanes(shape: TreeShape, iterations: number, lanes: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < iterations) {
        next += 1;
        await runOnce(shape);
      }
    }),
  );
}

describe.skipIf(!isLinux)("stop proves zero survivors for every shape (Linux, subreaper)", () => {
  // Unrelated processes with the very same command lines as the targets: no marker, not
  // descendants of any contained leader. They must survive everything below.
  const bystanders: Array<{ pid: number; start: string; kill(): void }> = [];
  beforeAll(async () => {
    becomeSubreaper();
    for (const argv of [["sleep", "1000"], ["sh", "-c", "sleep 1000 & wait"]]) {
      const p = Bun.spawn(argv, { detached: argv[0] === "sh", stdio: ["ignore", "ignore", "ignore"] });
      await waitUntil(() => procFacts(p.pid) !== null, 1000);
      bystanders.push({ pid: p.pid, start: procFacts(p.pid)!.startTime, kill: () => p.kill("SIGKILL") });
    }
  });
  afterAll(() => {
    leaveLinuxSubreaper();
    expect(isLinuxSubreaper()).toBe(false);
    for (const b of bystanders) {
      try {
        process.kill(-b.pid, "SIGKILL");
      } catch {
        b.kill();
      }
    }
  });

  for (const shape of SHAPES) {
    test(`${shape.name} x${ITERATIONS}`, async () => {
      await runLanes(shape, ITERATIONS, LANES);
      for (const b of bystanders) expect(isLive(b.pid, b.start)).toBe(true);
    }, 120_000);
  }

  test(`tree of 50 processes x${TREE_50_ITERATIONS}`, async () => {
    await runLanes(TREE_50, TREE_50_ITERATIONS, 2);
    for (const b of bystanders) expect(isLive(b.pid, b.start)).toBe(true);
  }, 120_000);
});
