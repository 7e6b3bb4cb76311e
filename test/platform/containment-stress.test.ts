// The stop proof against processes born during the stop, 10,000 stops per shape, each checked by
// an independent /proc scan right after stop() returns and once more after its batch. Too long for
// `npm test` (which runs the same shapes a few dozen times in containment-matrix.test.ts): .ci/run
// runs it in its stress lane with SERVERFS_STRESS=1. SERVERFS_STRESS_STOPS sets the count.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { becomeSubreaper } from "../../platform/index.ts";
import { leaveLinuxSubreaper } from "../../platform/linux/subreaper.ts";
import { isLinux, isLive } from "../support/proc.ts";
import { SHAPES } from "./shapes.ts";
import { proofModes, runLanes, startBystanders, type Bystander } from "./stop-matrix.ts";

const STRESS = process.env.SERVERFS_STRESS === "1";
const STOPS = Number(process.env.SERVERFS_STRESS_STOPS ?? 10_000);
/** The cgroup proof holds by construction; a quarter of the count shows it at scale too. */
const CGROUP_STOPS = Math.max(1, Math.floor(STOPS / 4));
const LANES = 6;
const FORKING = SHAPES.filter((s) => s.forksDuringStop);

for (const mode of proofModes()) {
  const why = !STRESS ? "runs in .ci/run's stress lane (SERVERFS_STRESS=1)" : !isLinux ? "reads /proc (Linux)" : mode.skipReason;
  const stops = mode.name === "cgroup" ? CGROUP_STOPS : STOPS;
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
        const result = await runLanes(mode, shape, stops, LANES);
        expect(result.failures).toEqual([]);
        expect(result.leftBehind).toEqual([]);
        expect(result.proofs).toEqual([mode.name]);
        for (const b of bystanders) expect(isLive(b.pid, b.start)).toBe(true);
      }, 3_600_000);
    }
  });
}
