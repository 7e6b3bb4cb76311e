// Session hygiene through the real Bridge service and a real ACP agent process: `session/close`
// is sent at the end of a task only to an agent that advertises it, and the agent's latest
// usage_update (tokens used, window size and cost) is what task.get reports as `usage`.
import { afterEach, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { startAcpRig, waitUntil, type ServiceRig } from "../service-rig.ts";
import { profileFor } from "./harness.ts";

let rig: ServiceRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

/** The requests the agent recorded, read once its process tree is proved gone (nothing more can be written). */
async function recordedAfterStop(r: ServiceRig, taskId: string, file: string): Promise<Array<{ method: string; params: unknown }>> {
  // The writer lease is released only once the task's process tree is proved gone.
  expect(await waitUntil(() => !r.wired.leases.isHeld("repo"), 20_000, 20)).toBe(true);
  expect((await r.call("task.get", { task_id: taskId })).status).toBe("succeeded");
  return fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { method: string; params: unknown });
}

test("an agent that advertises session/close receives it for the task's session after its turn", async () => {
  const file = path.join(process.env.TMPDIR ?? "/tmp", `hygiene-close-${process.pid}-${Date.now()}.jsonl`);
  rig = await startAcpRig([profileFor("session-hygiene.ts", [`--record=${file}`, "--close"], { id: "closer" })]);
  try {
    const id = await rig.submit("acp-closer", "text done");
    expect((await rig.waitTerminal(id)).final_response).toBe("done");
    const methods = await recordedAfterStop(rig, id, file);
    expect(methods.map((m) => m.method)).toEqual(["initialize", "session/new", "session/prompt", "session/close"]);
    expect(methods[3]!.params).toEqual({ sessionId: "s1" });
  } finally {
    fs.rmSync(file, { force: true });
  }
});

test("an agent that does not advertise session/close is never sent it", async () => {
  const file = path.join(process.env.TMPDIR ?? "/tmp", `hygiene-noclose-${process.pid}-${Date.now()}.jsonl`);
  rig = await startAcpRig([profileFor("session-hygiene.ts", [`--record=${file}`], { id: "plain" })]);
  try {
    const id = await rig.submit("acp-plain", "text done");
    expect((await rig.waitTerminal(id)).status).toBe("succeeded");
    const methods = await recordedAfterStop(rig, id, file);
    expect(methods.map((m) => m.method)).toEqual(["initialize", "session/new", "session/prompt"]);
  } finally {
    fs.rmSync(file, { force: true });
  }
});

test("usage_update with a cost: task.get reports the latest used, size and cost; the event keeps the cost", async () => {
  const file = path.join(process.env.TMPDIR ?? "/tmp", `hygiene-usage-${process.pid}-${Date.now()}.jsonl`);
  rig = await startAcpRig([profileFor("session-hygiene.ts", [`--record=${file}`], { id: "usage" })]);
  try {
    const before = await rig.submit("acp-usage", "text nothing counted");
    expect((await rig.waitTerminal(before)).usage).toBeNull();
    const id = await rig.submit("acp-usage", "usage-twice");
    const done = await rig.waitTerminal(id);
    expect(done.final_response).toBe("counted");
    const usage = done.usage as Record<string, unknown>;
    expect(typeof usage.updated_at).toBe("string");
    expect({ used: usage.used, size: usage.size, cost: usage.cost }).toEqual({ used: 4096, size: 200000, cost: { amount: 0.5, currency: "EUR" } });
    const events = (await rig.events(id)).filter((e) => e.event_type === "usage.updated").map((e) => e.payload);
    expect(events).toEqual([
      { used: 2048, size: 200000, cost: { amount: 0.42, currency: "USD" } },
      { used: 4096, size: 200000, cost: { amount: 0.5, currency: "EUR" } },
    ]);
  } finally {
    fs.rmSync(file, { force: true });
  }
});
