// Every shape, many times, with an independent /proc check after each stop, through both stop
// proofs: a cgroup per task where this machine lets the test make them, and freeze-first always.
// Lanes run in parallel (4 trees alive at once), which also proves that one task's stop never
// touches another's tree. test/platform/containment-stress.test.ts runs the shapes that fork
// during the stop 10,000 times in all in .ci/run's stress lane.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { becomeSubreaper } from "../../platform/index.ts";
import { linuxStopProof } from "../../platform/linux/containment.ts";
import { isLinuxSubreaper, leaveLinuxSubreaper } from "../../platform/linux/subreaper.ts";
import { isLinux, isLive, procFacts, procPids } from "../support/proc.ts";
import { proofModes, runLanes, startBystanders, type Bystander } from "./stop-matrix.ts";
import { existsSync } from "node:fs";
import { SHAPES, TREE_50, VFORK_STOPPED_CHILD } from "./shapes.ts";

const ITERATIONS = 5;
/** The shapes that fork while being stopped: 10,000 more stops of them in the stress lane. */
const FORKING_ITERATIONS = 6;
const LANES = 4;
const TREE_50_ITERATIONS = 3;

for (const mode of proofModes()) {
  describe.skipIf(!isLinux || mode.skipReason !== null)(
    `stop proves zero survivors for every shape (Linux, subreaper, proof: ${mode.name}${mode.skipReason ? `; skipped: ${mode.skipReason}` : ""})`,
    () => {
      // Unrelated processes with the very same command lines as the targets: no marker, not
      // descendants of any contained leader. They must survive everything below.
      let bystanders: Bystander[] = [];
      beforeAll(async () => {
        becomeSubreaper();
        bystanders = await startBystanders();
      });
      afterAll(() => {
        leaveLinuxSubreaper();
        expect(isLinuxSubreaper()).toBe(false);
        for (const b of bystanders) b.kill();
      });

      test("the containment uses the proof it was built for", () => {
        if (mode.name === "cgroup") expect(linuxStopProof().path).toBe("cgroup");
        expect(mode.containment()).toBeDefined();
      });

      for (const shape of SHAPES) {
        const iterations = shape.forksDuringStop ? FORKING_ITERATIONS : ITERATIONS;
        test(`${shape.name} x${iterations}`, async () => {
          const result = await runLanes(mode, shape, iterations, LANES);
          expect(result.failures).toEqual([]);
          expect(result.leftBehind).toEqual([]);
          expect(result.proofs).toEqual([mode.name]);
          for (const b of bystanders) expect(isLive(b.pid, b.start)).toBe(true);
        }, 120_000);
      }

      // Needs a Python with ctypes to make the vfork instant certain; the product needs no Python.
      test.skipIf(!existsSync("/usr/bin/python3"))(`${VFORK_STOPPED_CHILD.name} x${ITERATIONS} (needs /usr/bin/python3)`, async () => {
        const result = await runLanes(mode, VFORK_STOPPED_CHILD, ITERATIONS, LANES);
        expect(result.failures).toEqual([]);
        expect(result.leftBehind).toEqual([]);
      }, 120_000);

      test(`tree of 50 processes x${TREE_50_ITERATIONS}`, async () => {
        const result = await runLanes(mode, TREE_50, TREE_50_ITERATIONS, 2);
        expect(result.failures).toEqual([]);
        expect(result.leftBehind).toEqual([]);
        for (const b of bystanders) expect(isLive(b.pid, b.start)).toBe(true);
      }, 120_000);

      test("stops leave no adopted zombie behind but the last tree's own", async () => {
        // Its orphans are re-parented to this subreaper as their parents die; with a cgroup they
        // die unseen by any look. Each stop's looks reap what the stops before it left, so only
        // the last tree (5 processes) can still be on its way; unreaped, 30 stops left ~70.
        const shape = SHAPES.find((s) => s.name === "fork-from-dying-child")!;
        const result = await runLanes(mode, shape, 30, 1, false);
        expect(result.failures).toEqual([]);
        expect(adoptedZombies().length).toBeLessThanOrEqual(5);
      }, 120_000);
    },
  );
}

/** Zombies whose parent is this process, outside its own session: orphans it adopted, unreaped. */
function adoptedZombies(): number[] {
  const ownSid = procFacts(process.pid)!.sid;
  return procPids().filter((pid) => {
    const facts = procFacts(pid);
    return facts !== null && facts.state === "Z" && facts.ppid === process.pid && facts.sid !== ownSid;
  });
}
