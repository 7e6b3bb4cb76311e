// What a run writes, and when, now that its bookkeeping shares commits: provider_started is on
// disk with the running commit, before the adapter can spawn, while whether a spawn was really
// asked for is the run's own (a task cancelled before it spawned still proves its stop and frees
// its guard); native ids are in the task row as soon as the adapter records them, and in the
// guard right after, never in a guard that the run already let go of.
import { afterEach, describe, expect, test } from "bun:test";
import fs from "node:fs";
import { leaseFiles } from "../../src/bridge/deployment.ts";
import { readGuard } from "../../src/bridge/guard.ts";
import type { AdapterResult, RuntimeAdapter, TaskContext } from "../../src/runtimes/types.ts";
import type { RuntimeInfo } from "../../src/config/runtime-info.ts";
import { startServiceRig, type ServiceRig } from "../support/bridge-rig.ts";
import { eventually } from "../support/proc.ts";
import { agentConfig } from "../support/registry.ts";

const INFO: RuntimeInfo = {
  name: "probe-rt",
  available: true,
  version: null,
  persistent_session: true,
  live_steer: false,
  interactive_approval: false,
  interactive_question: false,
  in_flight_recovery: "none",
  model_override: false,
  model_discovery: "unsupported",
};

/** A runtime whose turn the test scripts; it starts a provider only when the script does. */
function scripted(turn: (ctx: TaskContext) => Promise<AdapterResult>): RuntimeAdapter {
  return { name: "probe-rt", probe: async () => INFO, run: turn, cancel: async () => {} };
}

const aborted = (ctx: TaskContext) =>
  new Promise<never>((_, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }));

let rig: ServiceRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

async function start(adapter: RuntimeAdapter): Promise<ServiceRig> {
  rig = await startServiceRig({
    tempPrefix: "sfs-run-commits-",
    adapters: () => new Map([[adapter.name, adapter]]),
    runtimes: ["probe-rt"],
    agent: agentConfig({ enabled: true }),
    waitForDefaultMs: Number.POSITIVE_INFINITY,
    oneTaskAtATime: false,
  });
  return rig;
}

const guardFile = (r: ServiceRig) => leaseFiles(r.registry, "repo").guardFile;

describe("provider_started and the run's proof", () => {
  test("on disk once the run is running; a task cancelled before any spawn still frees its guard and the workdir", async () => {
    let running!: () => void;
    const reached = new Promise<void>((resolve) => (running = resolve));
    const r = await start(
      scripted(async (ctx) => {
        running();
        return aborted(ctx);
      }),
    );
    const id = await r.submit("probe-rt", "wait");
    await reached;
    expect(r.store.get(id)).toMatchObject({ status: "running", provider_started: 1 });
    await r.call("task.cancel", { task_id: id });
    expect((await r.waitTerminal(id)).status).toBe("cancelled");
    await eventually(() => !r.wired.leases.isHeld("repo"));
    expect(readGuard(guardFile(r)).state).toBe("absent");
    // Nothing was ever started, so nothing is reported as possibly left.
    expect((await r.events(id)).filter((e) => e.event_type === "runtime.stop_proof")).toEqual([]);
  });

  test("a spawn that was asked for and failed leaves the guard: the stop is not proved", async () => {
    const r = await start(
      scripted(async (ctx) => {
        await ctx.spawn({ argv: ["/nonexistent/serverfs-test-provider"] });
        return { finalResponse: "unreachable", nativeSessionId: null, nativeTurnId: null };
      }),
    );
    const id = await r.submit("probe-rt", "go");
    expect((await r.waitTerminal(id)).status).toBe("failed");
    await eventually(() => !r.wired.leases.isHeld("repo"));
    expect(readGuard(guardFile(r))).toMatchObject({ state: "present", record: { task_id: id } });
  });
});

describe("native ids", () => {
  test("in the row at once, in the guard right after", async () => {
    let recorded!: () => void;
    const reached = new Promise<void>((resolve) => (recorded = resolve));
    const r = await start(
      scripted(async (ctx) => {
        ctx.recordNativeIds("sess-1", null);
        recorded();
        return aborted(ctx);
      }),
    );
    const id = await r.submit("probe-rt", "wait");
    await reached;
    expect(r.store.get(id)?.native_session_id).toBe("sess-1");
    await eventually(() => {
      const g = readGuard(guardFile(r));
      return g.state === "present" && g.record.native_session_id === "sess-1";
    });
    await r.call("task.cancel", { task_id: id });
    await r.waitTerminal(id);
  });

  test("ids the turn returns with reach the row; the guard, already removed with the proof, is not written again", async () => {
    const r = await start(scripted(async () => ({ finalResponse: "done", nativeSessionId: "sess-2", nativeTurnId: "turn-2" })));
    const id = await r.submit("probe-rt", "go");
    const done = await r.waitTerminal(id);
    expect(done.status).toBe("succeeded");
    expect(r.store.get(id)).toMatchObject({ native_session_id: "sess-2", native_turn_id: "turn-2" });
    // Past the turn the deferred guard write would run in.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(fs.existsSync(guardFile(r))).toBe(false);
  });
});
