// The stop proof against processes born during the stop: 10,000 stops of the four shapes that fork
// while being stopped, 8,000 with the freeze-first proof (2,000 a shape) and 2,000 with a cgroup
// per task where this machine allows one (else those 2,000 freeze first too), each checked by an
// independent /proc scan right after stop() returns and once more after its batch. Each stop's
// TERM grace is drawn at random, so the daemons are born before, during and after the freeze
// begins. Too long for `npm test` (which runs the same shapes a few dozen times in
// containment-matrix.test.ts): .ci/run runs it in its stress lane with SERVERFS_STRESS=1.
// SERVERFS_STRESS_STOPS sets the total.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { becomeSubreaper } from "../../platform/index.ts";
import { leaveLinuxSubreaper } from "../../platform/linux/subreaper.ts";
import { isLinux, isLive } from "../support/proc.ts";
import { SHAPES } from "./shapes.ts";
import { proofModes, runLanes, startBystanders, type Bystander } from "./stop-matrix.ts";

const STRESS = process.env.SERVERFS_STRESS === "1";
const FORKING = SHAPES.filter((s) => s.forksDuringStop);
const STOPS = Number(process.env.SERVERFS_STRESS_STOPS ?? 10_000);
/** The cgroup proof holds by construction; a fifth of the count shows it at scale too. */
const CGROUP_STOPS = Math.max(1, Math.ceil(STOPS / 5 / FORKING.length));
/** The freeze-first proof rests on looks, so it gets the rest (and all of it where no cgroup can be made). */
const FREEZE_STOPS = (cgroupRuns: boolean) => Math.max(1, Math.ceil((cgroupRuns ? STOPS - CGROUP_STOPS * FORKING.length : STOPS) / FORKING.length));
const LANES = 6;

const modes = proofModes();
const cgroupRuns = modes.some((m) => m.name === "cgroup" && m.skipReason === null);
for (const mode of modes) {
  const why = !STRESS ? "runs in .ci/run's stress lane (SERVERFS_STRESS=1)" : !isLinux ? "reads /proc (Linux)" : mode.skipReason;
  const stops = mode.name === "cgroup" ? CGROUP_STOPS : FREEZE_STOPS(cgroupRuns);
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
        const result = await runLanes(mode, shape, stops, LANES, false, "random");
        expect(result.failures).toEqual([]);
        expect(result.leftBehind).toEqual([]);
        expect(result.proofs).toEqual([mode.name]);
        for (const b of bystanders) expect(isLive(b.pid, b.start)).toBe(true);
      }, 1_200_000);
    }
  });
}
