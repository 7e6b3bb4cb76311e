// [4/7] end to end: when the platform cannot prove that a task's process tree stopped, the Bridge
// keeps the persistent recovery guard, refuses the next writer with WORKDIR_RECOVERY_REQUIRED (both
// Agent tasks and serve's mutations), and records the survivors. The seam is the process-table
// reader: it keeps reporting a phantom member of the task's tree, exactly like a process that
// survived SIGKILL would look.
import { afterAll, expect, test } from "bun:test";
import fs from "node:fs";
import { leaseFiles } from "../../src/bridge/deployment.ts";
import { createLeaseGate } from "../../src/bridge/lease-gate.ts";
import { createLinuxContainment } from "../../platform/linux/containment.ts";
import { createProcReader } from "../../platform/linux/proc-reader.ts";
import type { ProcReader } from "../../platform/posix/process-table.ts";
import type { Containment } from "../../platform/types.ts";
import { pidAlive } from "../support/proc.ts";
import { cleanup, startHarness } from "./helpers.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanup));

const PHANTOM = 4_194_001; // above any pid this VM hands out: signalling it is ESRCH, it never goes away

test.skipIf(process.platform !== "linux")(
  "an unprovable stop keeps the guard, blocks every writer, and lists the survivor (Linux: /proc reader seam)",
  async () => {
    const real = createProcReader();
    const leaders = new Set<number>();
    // The phantom is reported as a member of every provider tree the Bridge spawned.
    const reader: ProcReader = {
      list: () => {
        const rows = real.list();
        for (const pid of leaders) {
          rows.push({ pid: PHANTOM, ppid: pid, pgid: pid, sid: pid, zombie: false, stopped: false, threads: 1, blocked: false, startTime: "1", command: "phantom" });
        }
        return rows;
      },
      // Like any real member, the survivor carries its task's run marker in its environment.
      markerOf: (pid, markers) => (pid === PHANTOM ? (markers[0] ?? null) : real.markerOf(pid, markers)),
    };
    const linux = createLinuxContainment({ procReader: reader, killPhaseMs: 200 });
    const containment: Containment = {
      spawn: async (spec) => {
        const proc = await linux.spawn(spec);
        leaders.add(proc.pid);
        return proc;
      },
      sweep: (runIds, graceMs) => linux.sweep(runIds, graceMs),
    };
    const h = await startHarness({ containment });
    dirs.push(h.root);
    try {
      const id = await h.submit("spawn:2");
      let pids: number[] = [];
      for (let i = 0; i < 200 && pids.length === 0; i++) {
        const ev = (await h.call("task.events", { task_id: id })).events as Array<{ payload: Record<string, unknown> }>;
        const hit = ev.find((e) => Array.isArray(e.payload.pids));
        if (hit) pids = hit.payload.pids as number[];
        else await Bun.sleep(25);
      }
      expect(pids.length).toBe(2);

      const c = await h.call("task.cancel", { task_id: id });
      expect(c.status).toBe("cancelled");
      // The real processes die; only the phantom "survives".
      for (let i = 0; i < 200 && pids.some(pidAlive); i++) await Bun.sleep(25);
      expect(pids.filter(pidAlive)).toEqual([]);

      const { guardFile } = leaseFiles(h.registry, "repo");
      // Give the service time to finish its (failing) proof; the guard must still be there after.
      await Bun.sleep(1500);
      expect(fs.existsSync(guardFile)).toBe(true);
      expect(JSON.parse(fs.readFileSync(guardFile, "utf8")).task_id).toBe(id);

      // The next Agent writer is refused...
      expect(await h.fail("task.submit", {
        runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "complete:x",
      })).toBe("WORKDIR_RECOVERY_REQUIRED");
      // ...and so is serve's mutation path.
      const gate = createLeaseGate(h.registry);
      await expect(gate.run(h.registry.workdirs[0]!, async () => "ran")).rejects.toMatchObject({
        code: "WORKDIR_RECOVERY_REQUIRED",
      });
      const t = await h.call("task.get", { task_id: id });
      expect(t.status).toBe("cancelled");
      // The survivor is on record: first from the in-flight stop, then from the reconciliation sweep.
      const proofs = ((await h.call("task.events", { task_id: id })).events as Array<{ event_type: string; payload: Record<string, unknown> }>)
        .filter((e) => e.event_type === "runtime.stop_proof")
        .map((e) => e.payload);
      expect(proofs[0]).toMatchObject({ proved: false, survivors: 1, survivor_pids: [PHANTOM] });
      expect(proofs.at(-1)).toMatchObject({ proved: false, survivors: 1 });
      expect(fs.existsSync(guardFile)).toBe(true);
    } finally {
      await h.stop();
    }
  },
  30_000,
);
