// A stuck agent through the real Bridge service: an ACP agent that goes quiet after its turn
// starts ends `failed`/AGENT_IDLE_TIMEOUT with a message naming the task's last event, its whole
// process tree is stopped first, and the task view shows when the last event was; a task waiting
// on a human approval is never ended by the idle clock, however long the human takes.
import { afterEach, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { pidAlive, startAcpRig, tempDir, waitUntil, type ServiceRig } from "../service-rig.ts";
import { agentConfig, makeRig, outcome, profileFor, type Rig } from "./harness.ts";

type StoredEvent = { event_type: string; created_at: string };

let rig: ServiceRig | null = null;
let clock: Rig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
  clock?.cleanup();
  clock = null;
});

async function storedEvents(r: ServiceRig, id: string): Promise<StoredEvent[]> {
  return (await r.events(id)) as unknown as StoredEvent[];
}

/** The event log's timestamp as the idle message prints it (whole seconds). */
const printed = (iso: string) => iso.replace(/\.\d{3}Z$/, "Z");

describe("event_idle_timeout_seconds through the Bridge", () => {
  test("an agent silent after its turn started ends AGENT_IDLE_TIMEOUT naming its last event; its process tree is gone", async () => {
    const pidFile = path.join(tempDir("serverfs-acp-idle-"), "helper.pid");
    const silent = profileFor("silent-after-start.ts", [`--pid=${pidFile}`], { id: "silent", shutdown_timeout_seconds: 1 });
    rig = await startAcpRig([silent], { event_idle_timeout_seconds: 1 });
    const id = await rig.submit("acp-silent", "fix the bug");

    const done = await rig.waitTerminal(id);
    expect({ status: done.status, code: done.error_code }).toEqual({ status: "failed", code: "AGENT_IDLE_TIMEOUT" });
    // The provider tree was stopped, with proof, before the failure was published: the helper the
    // agent started (it ignores stdin EOF and session/cancel) is gone, and no stop_proof failure.
    const helper = Number(fs.readFileSync(pidFile, "utf8"));
    expect(helper).toBeGreaterThan(0);
    expect(pidAlive(helper)).toBe(false);
    const r = rig;
    await waitUntil(() => !r.wired.leases.isHeld("repo"), 15_000, 25);

    const events = await storedEvents(rig, id);
    expect(events.map((e) => e.event_type)).toEqual(["task.started", "turn.started", "tool.started", "task.failed"]);
    const lastHeard = events[2]!;
    const message = String(done.error_message);
    expect(message.startsWith(`no event from the agent for 1 s; last heard: tool.started at ${printed(lastHeard.created_at)}, `)).toBe(true);
    expect(message).toMatch(/, \d+ s ago\. If it can work silently for longer \(a long build, a model that does not stream its thinking\), raise \[agent\] event_idle_timeout_seconds$/);
    // The task view gives the time of its newest event.
    const view = await rig.call("task.get", { task_id: id });
    expect(view.last_event_at).toBe(events.at(-1)!.created_at);
    const listed = (await rig.call("task.list", {})).tasks as Array<Record<string, unknown>>;
    expect(listed.find((t) => t.task_id === id)?.last_event_at).toBe(events.at(-1)!.created_at);
    expect(rig.diagnostics.records.filter((d) => d.kind === "idle_timeout").length).toBe(1);
  });

  test("a pending approval pauses the idle clock: the human answers after the bound has passed and the task finishes", async () => {
    rig = await startAcpRig([profileFor("scripted-agent.ts", [], { id: "scripted" })], { event_idle_timeout_seconds: 1 });
    const id = await rig.submit("acp-scripted", "permission slow.txt");
    const waiting = await rig.waitFor(id, (t) => t.status !== "queued" && t.status !== "starting" && t.status !== "running");
    expect(waiting.status).toBe("waiting_for_approval");
    const requestId = (waiting.pending_request as { request_id: string }).request_id;
    const before = await storedEvents(rig, id);
    expect(before.at(-1)!.event_type).toBe("approval.requested");
    expect(waiting.last_event_at).toBe(before.at(-1)!.created_at);

    // Proof that the bound has passed, without a sleep: a second silent agent, started only now in
    // this same process with the same 1 s bound, has timed out. Timers fire in deadline order, so
    // an idle timer the waiting task had left running (armed before its request was shown) would
    // have fired before this one.
    clock = makeRig();
    const probe = clock.task("x");
    const probed = await outcome(clock.adapter(profileFor("hang.ts", [], { shutdown_timeout_seconds: 1 }), agentConfig({ event_idle_timeout_seconds: 1 })).run(probe));
    expect(probed.code).toBe("AGENT_IDLE_TIMEOUT");
    expect(rig.diagnostics.records.filter((d) => d.kind === "idle_timeout")).toEqual([]);
    expect((await rig.call("task.get", { task_id: id })).status).toBe("waiting_for_approval");

    await rig.call("task.approval.respond", { task_id: id, request_id: requestId, option_id: "opt-once" });
    const done = await rig.waitTerminal(id);
    expect({ status: done.status, code: done.error_code, text: done.final_response }).toEqual({
      status: "succeeded",
      code: null,
      text: "chosen=opt-once kind=allow_once wrote",
    });
    expect(fs.readFileSync(path.join(rig.workdir, "slow.txt"), "utf8")).toBe("written by fixture");
  });
});
