// Processes a Bridge starts outside any task (runtime probes `probe-<uuid>`, model discovery
// `models-<uuid>`) are journaled before their spawn and crossed out after a proved stop; a Bridge
// that was SIGKILLed leaves the record, and the next start sweeps the exact run id with proof.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { startBridge } from "../../src/bridge/daemon.ts";
import { bridgePaths } from "../../src/bridge/deployment.ts";
import type { Containment } from "../../platform/types.ts";
import { pidAlive } from "../support/proc.ts";
import { tempDir } from "../support/temp.ts";
import { cleanup, makeRegistry, makeWorkdir, startHarness } from "./helpers.ts";

const FIXTURE = path.resolve(import.meta.dir, "../fixtures/bridge/probe-then-hang.ts");
const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanup));

function records(dir: string): Array<Record<string, unknown>> {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .map((n) => JSON.parse(fs.readFileSync(path.join(dir, n), "utf8")) as Record<string, unknown>);
}

describe("processes started outside any task", () => {
  test("a probe left behind by a SIGKILLed Bridge is swept with proof at the next start", async () => {
    const root = tempDir();
    dirs.push(root);
    const repo = path.join(root, "repo");
    fs.mkdirSync(repo);
    const stateDir = path.join(root, "state");
    const registry = makeRegistry(stateDir, [makeWorkdir("repo", repo)]);
    const journalDir = bridgePaths(registry).outsideRunsDir;

    const bridge = Bun.spawn([process.execPath, FIXTURE, stateDir, repo], { stdout: "pipe", stderr: "pipe" });
    const reader = bridge.stdout.getReader();
    let line = "";
    while (!line.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`fixture bridge exited: ${await new Response(bridge.stderr).text()}`);
      line += new TextDecoder().decode(value);
    }
    const out = JSON.parse(line) as { left: { pid: number; runId: string }; stopped: { runId: string; proved: boolean } };
    // The proved stop crossed its record out; the running probe is written down under its exact run id.
    expect(out.stopped.proved).toBe(true);
    expect(records(journalDir).map((r) => r.run_id)).toEqual([out.left.runId]);
    expect(records(journalDir)[0]!.bridge_pid).toBe(bridge.pid);
    expect(fs.readFileSync(`/proc/${out.left.pid}/environ`, "utf8").split("\0")).toContain(`SERVERFS_RUN_ID=${out.left.runId}`);

    bridge.kill("SIGKILL");
    await bridge.exited;
    expect(pidAlive(out.left.pid)).toBe(true);

    const logs: Array<{ event: string; fields: Record<string, unknown> }> = [];
    const next = await startBridge({ registry, stopGraceMs: 200, log: (event, fields = {}) => logs.push({ event, fields }) });
    try {
      expect(pidAlive(out.left.pid)).toBe(false);
      const sweep = logs.find((l) => l.event === "reconcile.outside_sweep")!;
      expect(sweep.fields).toMatchObject({ run_ids: 1, found: 1, proved: true, survivor_pids: [] });
      expect(records(journalDir)).toEqual([]);
    } finally {
      await next.close();
    }
    // Nothing left: the start after that has nothing to sweep.
    logs.length = 0;
    const again = await startBridge({ registry, stopGraceMs: 200, log: (event, fields = {}) => logs.push({ event, fields }) });
    await again.close();
    expect(logs.some((l) => l.event === "reconcile.outside_sweep")).toBe(false);
  }, 30_000);

  test("a record whose sweep cannot be proved stays for the next start; task run ids are never journaled", async () => {
    const root = tempDir();
    dirs.push(root);
    const stateDir = path.join(root, "state");
    const registry = makeRegistry(stateDir, [makeWorkdir("repo", path.join(root, "repo"))]);
    const journalDir = bridgePaths(registry).outsideRunsDir;
    fs.mkdirSync(journalDir, { recursive: true, mode: 0o700 });
    // A record an earlier (crashed) instance left: written the way OutsideRunJournal.record writes it.
    const { OutsideRunJournal } = await import("../../src/bridge/outside-runs.ts");
    const earlier = new OutsideRunJournal(journalDir);
    earlier.record("models-00000000-0000-4000-8000-000000000000");
    earlier.record("run_0123456789abcdef01234567");
    expect(records(journalDir).map((r) => r.run_id)).toEqual(["models-00000000-0000-4000-8000-000000000000"]);

    const swept: string[][] = [];
    const unprovable: Containment = {
      spawn: () => Promise.reject(new Error("not used")),
      sweep: async (ids) => {
        swept.push(ids);
        return { found: 1, evidence: { proved: false, survivors: [{ pid: 999_999, command: "x" }], method: "kill", elapsedMs: 1 } };
      },
    };
    const h = await startHarness({ reuse: { root, stateDir }, containment: unprovable });
    await h.stop();
    expect(swept).toEqual([["models-00000000-0000-4000-8000-000000000000"]]);
    expect(records(journalDir).map((r) => r.run_id)).toEqual(["models-00000000-0000-4000-8000-000000000000"]);

    // With the real platform sweep (nothing carries that marker any more) the record goes.
    const h2 = await startHarness({ reuse: { root, stateDir } });
    try {
      expect(records(journalDir)).toEqual([]);
      // A task's provider goes through the same containment but is not journaled: task
      // reconciliation owns its run marker.
      const id = await h2.submit("wait:");
      await h2.waitFor(id, (t) => t.status === "running");
      expect(records(journalDir)).toEqual([]);
      await h2.call("task.cancel", { task_id: id });
    } finally {
      await h2.stop();
    }
  }, 30_000);
});
