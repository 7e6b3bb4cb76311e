// One fixture agent per defect (TCK style). Each must give its documented, coded outcome, leave
// no process behind, and leave the adapter usable for the next task.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { agentConfig, makeRig, outcome, profileFor, type Rig } from "./harness.ts";

let rig: Rig;
beforeEach(() => {
  rig = makeRig();
});
afterEach(() => rig.cleanup());

async function expectStillUsable(): Promise<void> {
  const result = await rig.adapter(profileFor("scripted-agent.ts")).run(rig.task("text still fine"));
  expect(result.finalResponse).toBe("still fine");
}

describe("defective agents", () => {
  test("wrong protocol version → AGENT_ACP_PROTOCOL_UNSUPPORTED, no session opened", async () => {
    const task = rig.task("x");
    const res = await outcome(rig.adapter(profileFor("wrong-version.ts")).run(task));
    expect(res.code).toBe("AGENT_ACP_PROTOCOL_UNSUPPORTED");
    expect(task.log.some((l) => l.kind === "session")).toBe(false);
    expect(await task.survivors()).toEqual([]);
    await expectStillUsable();
  });

  test("garbage on stdout mid-turn → AGENT_ACP_PROTOCOL_ERROR, and the garbage is not the answer", async () => {
    const task = rig.task("x");
    const res = await outcome(rig.adapter(profileFor("garbage-stdout.ts")).run(task));
    expect(res.code).toBe("AGENT_ACP_PROTOCOL_ERROR");
    expect(JSON.stringify(task.events)).not.toContain("loading model weights");
    expect(res.message).not.toContain("/home/someone");
    expect(await task.survivors()).toEqual([]);
    expect(rig.diagnostics.records.some((r) => r.kind === "protocol_violation")).toBe(true);
  });

  test("abrupt exit mid-turn → AGENT_PROVIDER_DISCONNECTED; stderr only in private diagnostics", async () => {
    const task = rig.task("x");
    const res = await outcome(rig.adapter(profileFor("exit-mid-turn.ts")).run(task));
    expect(res.code).toBe("AGENT_PROVIDER_DISCONNECTED");
    expect(res.message).not.toContain("segfault");
    expect(JSON.stringify(task.events)).not.toContain("segfault");
    const tail = rig.diagnostics.records.find((r) => r.kind === "stderr_tail");
    expect(String(tail?.fields.detail)).toContain("segfault-like crash");
    expect(await task.survivors()).toEqual([]);
  });

  test("hang in initialize → AGENT_ACP_LAUNCH_FAILED after probe_timeout_seconds", async () => {
    const task = rig.task("x");
    const res = await outcome(rig.adapter(profileFor("hang.ts", ["--in=initialize"], { probe_timeout_seconds: 1, shutdown_timeout_seconds: 1 })).run(task));
    expect(res.code).toBe("AGENT_ACP_LAUNCH_FAILED");
    expect(res.message).toContain("within 1 s");
    expect(await task.survivors()).toEqual([]);
  });

  test("silent hang mid-turn → AGENT_IDLE_TIMEOUT via event_idle_timeout_seconds, naming the last event", async () => {
    const task = rig.task("x");
    const adapter = rig.adapter(profileFor("hang.ts", [], { shutdown_timeout_seconds: 1 }), agentConfig({ event_idle_timeout_seconds: 1 }));
    const res = await outcome(adapter.run(task));
    expect(res.code).toBe("AGENT_IDLE_TIMEOUT");
    expect(task.events.at(-1)?.type).toBe("turn.started");
    expect(res.message).toMatch(/^no event from the agent for 1 s; last heard: turn\.started at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, \d+ s ago\. .*raise \[agent\] event_idle_timeout_seconds$/);
    expect(await task.survivors()).toEqual([]);
  });

  test("a message over 32 MiB → AGENT_ACP_PROTOCOL_ERROR without buffering it as an answer", async () => {
    const task = rig.task("x");
    const res = await outcome(rig.adapter(profileFor("huge-message.ts", [], { shutdown_timeout_seconds: 1 })).run(task));
    expect(res.code).toBe("AGENT_ACP_PROTOCOL_ERROR");
    expect(task.eventsOf("agent.message")).toEqual([]);
    expect(await task.survivors()).toEqual([]);
  });

  test("unknown update types → one bounded marker per type (at most 16), payloads never copied; malformed ones only diagnosed", async () => {
    const task = rig.task("x");
    const result = await rig.adapter(profileFor("unknown-updates.ts")).run(task);
    expect(result.finalResponse).toBe("done anyway");
    const markers = task.eventsOf("acp.update_unknown");
    expect(markers.length).toBe(16);
    expect(markers[0]).toEqual({ update_type: "subagent_update" });
    expect(JSON.stringify(task.events)).not.toContain("TOPSECRET");
    for (const m of markers) expect(String(m.update_type)).toMatch(/^[A-Za-z0-9_./?-]{1,64}$/);
    expect(rig.diagnostics.records.filter((r) => r.kind === "malformed_update").length).toBe(2);
  });

  test("fs/write_text_file and terminal/create despite no capability → -32601, a diagnostic, nothing written", async () => {
    const task = rig.task("x");
    const result = await rig.adapter(profileFor("fs-write-uninvited.ts")).run(task);
    expect(result.finalResponse).toBe("fs=-32601 terminal=-32601");
    expect(fs.existsSync(path.join(rig.dir, "via-client.txt"))).toBe(false);
    expect(fs.existsSync(path.join(rig.dir, "via-terminal.txt"))).toBe(false);
    expect(task.eventsOf("acp.request_refused")).toEqual([{ method: "fs/write_text_file" }, { method: "terminal/create" }]);
    expect(rig.diagnostics.records.filter((r) => r.kind === "request_refused").length).toBe(2);
  });

  test("auth_required on session/new → AGENT_AUTH_REQUIRED; the agent's text (a path) stays private", async () => {
    const task = rig.task("x");
    const res = await outcome(rig.adapter(profileFor("auth-required.ts")).run(task));
    expect(res.code).toBe("AGENT_AUTH_REQUIRED");
    expect(res.message).not.toContain("/home/someone");
    expect(await task.survivors()).toEqual([]);
  });
});
