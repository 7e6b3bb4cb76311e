// Cancellation (terminal-first, docs/design/task-lifecycle.md), continuation (resume / load without replay leaking
// into the new task / explicit refusal), and model selection through session config options.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { pidAlive } from "../../support/proc.ts";
import { makeRig, outcome, profileFor, type Rig } from "./harness.ts";

let rig: Rig;
beforeEach(() => {
  rig = makeRig();
});
afterEach(() => rig.cleanup());

async function waitFor(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await Bun.sleep(10);
  }
}

describe("cancellation", () => {
  test("cancel during a running tool: the turn ends cancelled and no process survives", async () => {
    const task = rig.task("wait");
    const adapter = rig.adapter(profileFor("scripted-agent.ts"));
    const running = outcome(adapter.run(task));
    await waitFor(() => task.eventsOf("tool.started").length > 0);
    task.controller.abort();
    const res = await running;
    expect(res.code).toBe("AGENT_TASK_TERMINAL");
    expect(await task.survivors()).toEqual([]);
  });

  test("cancel while a permission is pending: the agent hears `cancelled`, nothing is written", async () => {
    const task = rig.task("permission pending.txt");
    let release!: () => void;
    task.approver = () =>
      new Promise((resolve) => {
        release = () => resolve({ decision: "approve_once", option_id: "opt-once", granted_permission_ids: [] });
      });
    const adapter = rig.adapter(profileFor("scripted-agent.ts"));
    const running = outcome(adapter.run(task));
    await waitFor(() => task.approvals.length === 1);
    await adapter.cancel(task.taskId);
    const res = await running;
    expect(res.code).toBe("AGENT_TASK_TERMINAL");
    release(); // a late human answer changes nothing
    await Bun.sleep(50);
    expect(fs.existsSync(path.join(rig.dir, "pending.txt"))).toBe(false);
    expect(await task.survivors()).toEqual([]);
  });

  // The fixture's tool uses the util-linux `setsid` program and liveness is read from /proc.
  test.skipIf(process.platform !== "linux")("setsid grandchildren left behind by the agent's cancel are stopped by containment", async () => {
    const pidsFile = path.join(rig.stateDir, "pids.json");
    const task = rig.task("go");
    const adapter = rig.adapter(profileFor("setsid-grandchildren.ts", [`--pids=${pidsFile}`]));
    const running = outcome(adapter.run(task));
    await waitFor(() => fs.existsSync(pidsFile) && fs.readFileSync(pidsFile, "utf8").length > 2);
    const pids = JSON.parse(fs.readFileSync(pidsFile, "utf8")) as number[];
    expect(pids.length).toBe(4);
    expect(pids.every(pidAlive)).toBe(true);
    task.controller.abort();
    const res = await running;
    expect(res.code).toBe("AGENT_TASK_TERMINAL");
    expect(pids.filter(pidAlive)).toEqual([]);
    expect(await task.survivors()).toEqual([]);
  });

  test("an agent that ignores session/cancel and stdin EOF is still stopped within its grace", async () => {
    const task = rig.task("anything");
    const adapter = rig.adapter(profileFor("hang.ts", [], { shutdown_timeout_seconds: 1 }));
    const running = outcome(adapter.run(task));
    await waitFor(() => task.eventsOf("turn.started").length === 1);
    task.controller.abort();
    const res = await running;
    expect(res.code).toBe("AGENT_TASK_TERMINAL");
    expect(await task.survivors()).toEqual([]);
  });

  test("cancel before the session exists: nothing is prompted", async () => {
    const task = rig.task("text never");
    task.controller.abort();
    const res = await outcome(rig.adapter(profileFor("scripted-agent.ts")).run(task));
    expect(res.code).toBe("AGENT_TASK_TERMINAL");
    expect(task.spawns).toEqual([]);
  });
});

describe("continuation", () => {
  async function firstTurn(profile: ReturnType<typeof profileFor>, prompt = "text first words"): Promise<string> {
    const result = await rig.adapter(profile).run(rig.task(prompt));
    return result.nativeSessionId!;
  }

  test("session/resume when advertised: new process, no replay, the agent sees the earlier turn", async () => {
    const profile = profileFor("scripted-agent.ts", [`--state=${rig.stateDir}`, "--resume", "--load"]);
    const sessionId = await firstTurn(profile);
    const task = rig.task("remember", { continueNativeSessionId: sessionId });
    const result = await rig.adapter(profile).continue(task);
    expect(result.finalResponse).toBe("earlier: text first words");
    expect(result.nativeSessionId).toBe(sessionId);
    expect(task.log.find((l) => l.kind === "session")?.data).toBe(sessionId);
    expect(task.eventsOf("agent.message")).toEqual([{ text: "earlier: text first words" }]);
  });

  test("session/load only: the replayed history never becomes the new task's events", async () => {
    const profile = profileFor("scripted-agent.ts", [`--state=${rig.stateDir}`, "--load"]);
    const sessionId = await firstTurn(profile);
    const task = rig.task("remember", { continueNativeSessionId: sessionId });
    const result = await rig.adapter(profile).continue(task);
    expect(result.finalResponse).toBe("earlier: text first words");
    expect(task.events.some((e) => e.payload.text === "first words")).toBe(false);
    expect(task.eventsOf("agent.message")).toEqual([{ text: "earlier: text first words" }]);
  });

  test("replay arriving after the load response is kept out too", async () => {
    const profile = profileFor("late-replay.ts", [`--state=${rig.stateDir}`]);
    const sessionId = await firstTurn(profile, "one");
    const task = rig.task("two", { continueNativeSessionId: sessionId });
    const result = await rig.adapter(profile).continue(task);
    expect(result.finalResponse).toBe("fresh answer; history=one");
    expect(JSON.stringify(task.events)).not.toContain("REPLAYED");
  });

  test("neither resume nor load: AGENT_CONTINUATION_UNSUPPORTED, never a fresh session", async () => {
    const profile = profileFor("scripted-agent.ts", [`--state=${rig.stateDir}`]);
    const sessionId = await firstTurn(profile);
    const task = rig.task("remember", { continueNativeSessionId: sessionId });
    const res = await outcome(rig.adapter(profile).continue(task));
    expect(res.code).toBe("AGENT_CONTINUATION_UNSUPPORTED");
    expect(task.eventsOf("turn.started")).toEqual([]);
    expect(fs.readdirSync(rig.stateDir).length).toBe(1); // no second session was created
  });

  test("an unknown session id: AGENT_SESSION_NOT_RESUMABLE", async () => {
    const profile = profileFor("scripted-agent.ts", [`--state=${rig.stateDir}`, "--resume"]);
    const res = await outcome(rig.adapter(profile).continue(rig.task("remember", { continueNativeSessionId: "sess-does-not-exist" })));
    expect(res.code).toBe("AGENT_SESSION_NOT_RESUMABLE");
  });
});

describe("models", () => {
  test("an offered model is applied with session/set_config_option and verified", async () => {
    const profile = profileFor("scripted-agent.ts", ["--models=alpha,beta"]);
    const result = await rig.adapter(profile).run(rig.task("model", { requestedModel: "beta" }));
    expect(result.finalResponse).toBe("model=beta");
  });

  test("a model the agent does not offer: AGENT_MODEL_UNSUPPORTED before any prompt", async () => {
    const task = rig.task("model", { requestedModel: "gamma" });
    const res = await outcome(rig.adapter(profileFor("scripted-agent.ts", ["--models=alpha,beta"])).run(task));
    expect(res.code).toBe("AGENT_MODEL_UNSUPPORTED");
    expect(task.eventsOf("turn.started")).toEqual([]);
  });

  test("an agent that silently keeps its old model: AGENT_MODEL_UNSUPPORTED, no fallback", async () => {
    const res = await outcome(rig.adapter(profileFor("scripted-agent.ts", ["--models=alpha,beta", "--model-sticky"])).run(rig.task("model", { requestedModel: "beta" })));
    expect(res.code).toBe("AGENT_MODEL_UNSUPPORTED");
  });

  test("no model selector: a non-null model is refused", async () => {
    const res = await outcome(rig.adapter(profileFor("scripted-agent.ts")).run(rig.task("model", { requestedModel: "alpha" })));
    expect(res.code).toBe("AGENT_MODEL_UNSUPPORTED");
  });
});
