// The stop proof against processes born during the stop: 10,000 stops of the four shapes that fork
// while being stopped (2,500 each) with the freeze-first proof, and 2,000 with a cgroup per task
// where this machine allows one, each checked by an independent /proc scan right after stop()
// returns and once more after its batch. Too long for `npm test` (which runs the same shapes a
// few dozen times in containment-matrix.test.ts): .ci/run runs it in its stress lane with
// SERVERFS_STRESS=1. SERVERFS_STRESS_STOPS sets the freeze-first total.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { becomeSubreaper } from "../../platform/index.ts";
import { leaveLinuxSubreaper } from "../../platform/linux/subreaper.ts";
import { isLinux, isLive } from "../support/proc.ts";
import { SHAPES } from "./shapes.ts";
import { proofModes, runLanes, startBystanders, type Bystander } from "./stop-matrix.ts";

const STRESS = process.env.SERVERFS_STRESS === "1";
const FORKING = SHAPES.filter((s) => s.forksDuringStop);
const STOPS = Number(process.env.SERVERFS_STRESS_STOPS ?? 10_000);
/** Per shape: the freeze-first proof is the one that rests on looks, so it gets the count. */
const FREEZE_STOPS = Math.max(1, Math.ceil(STOPS / FORKING.length));
/** The cgroup proof holds by construction; a fifth of the count shows it at scale too. */
const CGROUP_STOPS = Math.max(1, Math.ceil(STOPS / 5 / FORKING.length));
const LANES = 6;

for (const mode of proofModes()) {
  const why = !STRESS ? "runs in .ci/run's stress lane (SERVERFS_STRESS=1)" : !isLinux ? "reads /proc (Linux)" : mode.skipReason;
  const stops = mode.name === "cgroup" ? CGROUP_STOPS : FREEZE_STOPS;
  describe.skipIf(why !== null)(`stops of trees that fork while stopped (proof: ${mode.name})${why ? `; skipped: ${why}` : ""}`, () => {
    let bystanders: Bystander[] = [];
    beforeAll(async () => {
      becomeSubreaper();
      bystanders = await startBystanders();
    });
    afterAll(() => {
      leaveLinuxSubreaper();
      for (const b of bystanders) b.kill();
    });
    for (const shape of FORKING) {
      test(`${shape.name} x${stops}: 0 survivors, every stop proved`, async () => {
        // Membership before each stop is compared in containment-matrix.test.ts; here only the stop.
        const result = await runLanes(mode, shape, stops, LANES, false);
        expect(result.failures).toEqual([]);
        expect(result.leftBehind).toEqual([]);
        expect(result.proofs).toEqual([mode.name]);
        for (const b of bystanders) expect(isLive(b.pid, b.start)).toBe(true);
      }, 3_600_000);
    }
  });
}
