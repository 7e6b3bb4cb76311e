// A prompt turn through the generic ACP adapter against the scripted fixture agent: session id
// handed over before the prompt, events normalized and bounded, the child gone at the end.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { makeRig, outcome, profileFor, type Rig } from "./harness.ts";

let rig: Rig;
beforeEach(() => {
  rig = makeRig();
});
afterEach(() => rig.cleanup());

describe("prompt turn", () => {
  test("text turn: chunks aggregate into one agent.message; session id recorded before the prompt; no survivors", async () => {
    const adapter = rig.adapter(profileFor("scripted-agent.ts"));
    const task = rig.task("text hello wide world");
    const result = await adapter.run(task);
    expect(result.finalResponse).toBe("hello wide world");
    expect(result.nativeSessionId).toMatch(/^sess-/);
    expect(task.eventsOf("agent.message")).toEqual([{ text: "hello wide world" }]);
    expect(task.eventsOf("turn.started")).toEqual([{ runtime: "acp-fixture" }]);
    const kinds = task.log.map((l) => l.kind);
    const sessionAt = kinds.indexOf("session");
    const turnStartedAt = task.log.findIndex((l) => l.kind === "event" && l.data === "turn.started");
    expect(sessionAt).toBeGreaterThan(-1);
    expect(sessionAt).toBeLessThan(turnStartedAt);
    expect(task.log[sessionAt]!.data).toBe(result.nativeSessionId);
    expect(await task.survivors()).toEqual([]);
  });

  test("rich turn: thoughts, plan, mode, usage, tool calls map to bounded events; _meta never copied", async () => {
    const adapter = rig.adapter(profileFor("scripted-agent.ts"));
    const task = rig.task("rich");
    const result = await adapter.run(task);
    expect(result.finalResponse).toBe("second message");
    const types = task.events.map((e) => e.type);
    expect(types).toEqual([
      "turn.started",
      "agent.thought",
      "plan.updated",
      "mode.changed",
      "usage.updated",
      "agent.message",
      "tool.started",
      "tool.completed",
      "agent.message",
    ]);
    expect(task.eventsOf("agent.thought")).toEqual([{ text: "thinking hard" }]);
    expect(task.eventsOf("plan.updated")[0]).toEqual({
      entries: [
        { content: "read the code", priority: "high", status: "completed" },
        { content: "change it", priority: "medium", status: "in_progress" },
      ],
    });
    expect(task.eventsOf("usage.updated")).toEqual([{ used: 1200, size: 128000, cost: null }]);
    expect(task.eventsOf("tool.started")[0]).toMatchObject({ tool_call_id: "t-read", kind: "read", status: "completed", paths: [`${rig.dir}/a.txt`] });
    expect(JSON.stringify(task.events)).not.toContain("must-not-persist");
    expect(JSON.stringify(task.events)).not.toContain("_meta");
  });

  test("capabilities: a snapshot keyed by the profile fingerprint, measured only after a real handshake", async () => {
    const profile = profileFor("scripted-agent.ts", ["--load", "--models=m1,m2"]);
    const adapter = rig.adapter(profile);
    const before = await adapter.probe();
    expect(before).toMatchObject({ name: "acp-fixture", available: true, capability_state: "unmeasured", persistent_session: false, model_override: false, live_steer: false, interactive_question: true, in_flight_recovery: "session-resume" });
    expect(await adapter.listModels()).toMatchObject({ status: "unavailable", models: [] });
    await adapter.run(rig.task("text ok"));
    const after = await adapter.probe();
    expect(after).toMatchObject({ capability_state: "measured", version: "1.2.3", persistent_session: true, model_override: true, model_discovery: "runtime_catalog" });
    const models = await adapter.listModels();
    expect(models).toMatchObject({ status: "ok", models: [{ id: "m1", is_default: true }, { id: "m2", is_default: false }] });
    // The same agent launched with different args is a different profile: back to unmeasured.
    const changed = rig.adapter(profileFor("scripted-agent.ts", ["--load"]));
    expect((await changed.probe()).capability_state).toBe("unmeasured");
  });

  test("a turn that stops for any reason but end_turn is a provider error naming the stop reason", async () => {
    for (const reason of ["refusal", "max_tokens", "max_turn_requests", "cancelled"]) {
      const res = await outcome(rig.adapter(profileFor("scripted-agent.ts")).run(rig.task(`stop ${reason}`)));
      expect({ reason, code: res.code }).toEqual({ reason, code: "AGENT_PROVIDER_ERROR" });
      expect(res.message).toContain(reason);
    }
  });

  test("probe never launches the agent and reports a missing executable as unavailable", async () => {
    const marker = `${rig.dir}/launched`;
    const script = `${rig.stateDir}/agent.sh`;
    await Bun.write(script, `#!/bin/sh\ntouch ${marker}\n`);
    (await import("node:fs")).chmodSync(script, 0o755);
    const info = await rig.adapter(profileFor("", [], { command: script, args: [] })).probe();
    expect(info.available).toBe(true);
    expect(await Bun.file(marker).exists()).toBe(false);
    const missing = await rig.adapter(profileFor("", [], { command: `${rig.stateDir}/nope`, args: [] })).probe();
    expect(missing.available).toBe(false);
    const notExecutable = `${rig.stateDir}/plain`;
    await Bun.write(notExecutable, "x");
    expect((await rig.adapter(profileFor("", [], { command: notExecutable, args: [] })).probe()).available).toBe(false);
  });

  test("review profile is refused before anything is launched", async () => {
    const task = rig.task("text x", { profile: "review" });
    const res = await outcome(rig.adapter(profileFor("scripted-agent.ts")).run(task));
    expect(res.code).toBe("AGENT_PROFILE_NOT_ALLOWED");
    expect(task.spawns).toEqual([]);
  });

  test("launch failure: an executable that cannot start gives AGENT_ACP_LAUNCH_FAILED without its path", async () => {
    const res = await outcome(rig.adapter(profileFor("", [], { command: `${rig.stateDir}/missing-agent`, args: [] })).run(rig.task("text x")));
    expect(res.code).toBe("AGENT_ACP_LAUNCH_FAILED");
    expect(res.message).not.toContain(rig.stateDir);
  });

  test("a non-ACP program on stdout (plain text then exit) fails the launch, not the Bridge", async () => {
    const res = await outcome(rig.adapter(profileFor("", [], { command: "/bin/echo", args: ["I am not an agent"] })).run(rig.task("text x")));
    expect(["AGENT_ACP_PROTOCOL_ERROR", "AGENT_ACP_LAUNCH_FAILED"]).toContain(res.code!);
  });
});
