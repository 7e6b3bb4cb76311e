// Every shape, many times, with an independent /proc check after each stop, through both stop
// proofs: a cgroup per task where this machine lets the test make them, and freeze-first always.
// Lanes run in parallel (4 trees alive at once), which also proves that one task's stop never
// touches another's tree. test/platform/containment-stress.test.ts runs the shapes that fork
// during the stop 10,000 times each in .ci/run's stress lane.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { becomeSubreaper } from "../../platform/index.ts";
import { linuxStopProof } from "../../platform/linux/containment.ts";
import { isLinuxSubreaper, leaveLinuxSubreaper } from "../../platform/linux/subreaper.ts";
import { isLinux, isLive } from "../support/proc.ts";
import { proofModes, runLanes, startBystanders, type Bystander } from "./stop-matrix.ts";
import { existsSync } from "node:fs";
import { SHAPES, TREE_50, VFORK_STOPPED_CHILD } from "./shapes.ts";

const ITERATIONS = 8;
const FORKING_ITERATIONS = 20;
const LANES = 4;
const TREE_50_ITERATIONS = 5;

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
    },
  );
}
