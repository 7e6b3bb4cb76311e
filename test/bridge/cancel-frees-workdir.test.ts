// task.cancel answers only once the task's process tree has been stopped and the stop proved (or
// once it is known that it could not be), and says whether the workdir is free for the next writer
// (docs/design/task-lifecycle.md#cancel). Free means free: the very next submit is accepted with no
// retry. Held means held: WORKDIR_BUSY while the stop is still running, WORKDIR_RECOVERY_REQUIRED
// when it could not be proved. Liveness is read from /proc independently of the code under test.
import { afterAll, afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import fs from "node:fs";
import path from "node:path";
import { leaseFiles } from "../../src/bridge/deployment.ts";
import { createLinuxContainment } from "../../platform/linux/containment.ts";
import { createProcReader } from "../../platform/linux/proc-reader.ts";
import type { ProcReader } from "../../platform/posix/process-table.ts";
import type { Containment } from "../../platform/types.ts";
import { livePidsWithMarker, pidAlive } from "../support/proc.ts";
import { tempDir } from "../support/temp.ts";
import { startAcpRig, type ServiceRig } from "../runtimes/service-rig.ts";
import { profileFor } from "../runtimes/acp/harness.ts";
import { cleanup, startHarness } from "./helpers.ts";

const linux = process.platform === "linux";
const dirs: string[] = [];
let rig: ServiceRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});
afterAll(() => dirs.forEach(cleanup));

function row(stateDir: string, taskId: string): Record<string, unknown> | null {
  const db = new Database(path.join(stateDir, "bridge.sqlite3"), { readonly: true });
  try {
    return db.query("SELECT status, error_code, completed_at, run_id FROM tasks WHERE task_id = ?").get(taskId) as Record<string, unknown> | null;
  } finally {
    db.close();
  }
}

// The fixture's shell tool uses the util-linux `setsid` program; liveness is read from /proc.
test.skipIf(!linux)("a cancelled ACP task whose tool left setsid grandchildren: the answer says free, every process is already gone, the next writer is accepted at once", async () => {
  const pidsFile = path.join(tempDir("sfs-cancel-pids-"), "pids.json");
  dirs.push(path.dirname(pidsFile));
  rig = await startAcpRig([profileFor("setsid-grandchildren.ts", [`--pids=${pidsFile}`], { id: "tree" }), profileFor("scripted-agent.ts", [], { id: "scripted" })]);
  const stateDir = path.join(rig.root, "state");
  const id = await rig.submit("acp-tree", "go");
  await rig.waitFor(id, () => fs.existsSync(pidsFile) && fs.readFileSync(pidsFile, "utf8").length > 2);
  const pids = JSON.parse(fs.readFileSync(pidsFile, "utf8")) as number[];
  expect(pids.length).toBe(4);
  expect(pids.every(pidAlive)).toBe(true);
  const runId = row(stateDir, id)!.run_id as string;
  expect(livePidsWithMarker(runId).length).toBeGreaterThan(0);

  const cancel = await rig.call("task.cancel", { task_id: id });
  expect(cancel).toEqual({ task_id: id, status: "cancelled", correlation_id: null, workdir_free: true, workdir_hold_reason: null });
  // No waiting: by the time the answer is out, the whole tree (grandchildren in their own sessions
  // included) is gone, and so are the lease and the guard.
  expect(pids.filter(pidAlive)).toEqual([]);
  expect(livePidsWithMarker(runId)).toEqual([]);
  expect(rig.wired.leases.isHeld("repo")).toBe(false);
  expect(fs.existsSync(leaseFiles(rig.registry, "repo").guardFile)).toBe(false);
  expect(row(stateDir, id)).toMatchObject({ status: "cancelled", error_code: null });
  expect(row(stateDir, id)!.completed_at).toEqual(expect.any(String));

  // The immediate resubmit on the same workdir is accepted (no retry loop) and runs to the end.
  const next = await rig.submit("acp-scripted", "text next one");
  expect(row(stateDir, next)).not.toBeNull();
  expect((await rig.waitTerminal(next)).final_response).toBe("next one");
  expect(row(stateDir, next)).toMatchObject({ status: "succeeded" });
  // Cancelling the finished task again changes nothing and still says free.
  expect(await rig.call("task.cancel", { task_id: id })).toMatchObject({ status: "cancelled", workdir_free: true, workdir_hold_reason: null });
}, 60_000);

const PHANTOM = 4_194_002; // above any pid this VM hands out: signalling it is ESRCH, it never goes away

// Linux: the /proc reader is the seam that makes one member of the tree outlive SIGKILL.
test.skipIf(!linux)("a stop that cannot be proved: the answer says held (stop_pending, then stop_not_proved) and writers are refused accordingly", async () => {
  const real = createProcReader();
  const leaders = new Set<number>();
  const reader: ProcReader = {
    list: () => {
      const rows = real.list();
      for (const pid of leaders) rows.push({ pid: PHANTOM, ppid: pid, pgid: pid, sid: pid, zombie: false, stopped: false, threads: 1, blocked: false, startTime: "1", command: "phantom" });
      return rows;
    },
    markerOf: (pid, markers) => (pid === PHANTOM ? (markers[0] ?? null) : real.markerOf(pid, markers)),
  };
  // The KILL phase (4 s) outlasts cancel's wait (stop grace 500 ms + 2.5 s): the first answer
  // comes while the stop is still running.
  const platform = createLinuxContainment({ procReader: reader, killPhaseMs: 4000 });
  const containment: Containment = {
    spawn: async (spec) => {
      const proc = await platform.spawn(spec);
      leaders.add(proc.pid);
      return proc;
    },
    sweep: (runIds, graceMs) => platform.sweep(runIds, graceMs),
  };
  const h = await startHarness({ containment });
  dirs.push(h.root);
  const writer = { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "complete:x" };
  try {
    const id = await h.submit("spawn:2");
    let pids: number[] = [];
    for (let i = 0; i < 200 && pids.length === 0; i++) {
      const hit = (await h.events(id)).find((e) => Array.isArray(e.payload.pids));
      if (hit) pids = hit.payload.pids as number[];
      else await Bun.sleep(25);
    }
    expect(pids.length).toBe(2);

    const first = await h.call("task.cancel", { task_id: id });
    expect(first).toMatchObject({ task_id: id, status: "cancelled", workdir_free: false, workdir_hold_reason: "stop_pending" });
    // Still stopping: the lease is held, so the next writer is busy, not admitted.
    expect(await h.fail("task.submit", writer)).toBe("WORKDIR_BUSY");

    // Asking again waits for the stop's answer: not proved, so the guard stays.
    const second = await h.call("task.cancel", { task_id: id });
    expect(second).toMatchObject({ task_id: id, status: "cancelled", workdir_free: false, workdir_hold_reason: "stop_not_proved" });
    expect(JSON.parse(fs.readFileSync(leaseFiles(h.registry, "repo").guardFile, "utf8")).task_id).toBe(id);
    expect(await h.fail("task.submit", writer)).toBe("WORKDIR_RECOVERY_REQUIRED");
    // The real processes did die; only the phantom "survives", and the record names it.
    expect(pids.filter(pidAlive)).toEqual([]);
    expect(row(h.stateDir, id)).toMatchObject({ status: "cancelled", error_code: null });
    const proofs = (await h.events(id)).filter((e) => e.event_type === "runtime.stop_proof").map((e) => e.payload);
    expect(proofs[0]).toMatchObject({ proved: false, survivors: 1, survivor_pids: [PHANTOM] });
    // No task row was written for the refused submits.
    const db = new Database(path.join(h.stateDir, "bridge.sqlite3"), { readonly: true });
    expect(db.query("SELECT count(*) AS n FROM tasks").get()).toEqual({ n: 1 });
    db.close();
  } finally {
    await h.stop();
  }
}, 60_000);
