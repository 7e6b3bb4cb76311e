// Permission brokerage: every session/request_permission becomes a pending approval with the
// exact offered options; only an offered option_id goes back to the agent; persistent kinds pass
// through as chosen; odd shapes (duplicate kinds, missing kinds, no tool call) work.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { agentConfig, makeRig, outcome, profileFor, type Rig } from "./harness.ts";

let rig: Rig;
beforeEach(() => {
  rig = makeRig();
});
afterEach(() => rig.cleanup());

const written = (file: string) => fs.existsSync(path.join(rig.dir, file));

describe("permissions", () => {
  test("allow_once by option_id: the exact options are offered and the file is written", async () => {
    const task = rig.task("permission out.txt");
    task.approver = (req) => ({ decision: "approve_once", option_id: req.response_options![0]!.option_id, granted_permission_ids: [] });
    const result = await rig.adapter(profileFor("scripted-agent.ts")).run(task);
    expect(result.finalResponse).toBe("chosen=opt-once kind=allow_once wrote");
    expect(fs.readFileSync(path.join(rig.dir, "out.txt"), "utf8")).toBe("written by fixture");
    expect(task.approvals).toHaveLength(1);
    const req = task.approvals[0]!;
    expect(req.response_options).toEqual([
      { option_id: "opt-once", label: "Allow once", kind: "allow_once" },
      { option_id: "opt-always", label: "Always allow", kind: "allow_always" },
      { option_id: "opt-reject", label: "Reject", kind: "reject_once" },
      { option_id: "opt-never", label: "Never allow", kind: "reject_always" },
    ]);
    expect(req.category).toBe("file_change");
    expect(req.file_changes).toEqual([{ path: path.join(rig.dir, "out.txt") }]);
    expect(new Set(req.available_decisions)).toEqual(new Set(["approve_once", "approve_session", "deny", "cancel_task"]));
    // tool_call(pending) came first, then updates: one tool.started, one tool.completed.
    expect(task.eventsOf("tool.started")).toHaveLength(1);
    expect(task.eventsOf("tool.completed")).toEqual([{ tool_call_id: "call-write-1", status: "completed" }]);
  });

  test("reject_once: nothing written", async () => {
    const task = rig.task("permission out.txt");
    task.approver = () => ({ decision: "deny", option_id: "opt-reject", granted_permission_ids: [] });
    const result = await rig.adapter(profileFor("scripted-agent.ts")).run(task);
    expect(result.finalResponse).toBe("chosen=opt-reject kind=reject_once nothing written");
    expect(written("out.txt")).toBe(false);
  });

  test("allow_always and reject_always reach the agent as chosen, never disguised", async () => {
    const a = rig.task("permission a.txt");
    a.approver = () => ({ decision: "approve_session", option_id: "opt-always", granted_permission_ids: [] });
    expect((await rig.adapter(profileFor("scripted-agent.ts")).run(a)).finalResponse).toBe("chosen=opt-always kind=allow_always wrote");
    const r = rig.task("permission r.txt");
    r.approver = () => ({ decision: "deny", option_id: "opt-never", granted_permission_ids: [] });
    expect((await rig.adapter(profileFor("scripted-agent.ts")).run(r)).finalResponse).toBe("chosen=opt-never kind=reject_always nothing written");
    expect(written("r.txt")).toBe(false);
  });

  test("a forged option_id never reaches the agent: the task fails INVALID_APPROVAL_DECISION and nothing is written", async () => {
    const task = rig.task("permission forged.txt");
    task.approver = () => ({ decision: "approve_once", option_id: "allow-everything", granted_permission_ids: [] });
    const res = await outcome(rig.adapter(profileFor("scripted-agent.ts")).run(task));
    expect(res.code).toBe("INVALID_APPROVAL_DECISION");
    expect(written("forged.txt")).toBe(false);
    expect(await task.survivors()).toEqual([]);
  });

  test("cancel_task answers the agent `cancelled`", async () => {
    const task = rig.task("odd-permission");
    task.approver = () => ({ decision: "cancel_task", granted_permission_ids: [] });
    const result = await rig.adapter(profileFor("scripted-agent.ts")).run(task);
    expect(result.finalResponse).toBe("outcome=cancelled");
  });

  test("permission before any tool_call (codex/gemini order): the request creates the tool call, later updates complete it", async () => {
    const task = rig.task("permission-first first.txt");
    task.approver = () => ({ decision: "approve_once", option_id: "opt-once", granted_permission_ids: [] });
    await rig.adapter(profileFor("scripted-agent.ts")).run(task);
    expect(task.eventsOf("tool.started")).toEqual([
      { tool_call_id: "call-write-1", title: "Write first.txt", kind: "edit", status: "pending", paths: [path.join(rig.dir, "first.txt")] },
    ]);
    expect(task.eventsOf("tool.completed")).toEqual([{ tool_call_id: "call-write-1", status: "completed" }]);
    expect(written("first.txt")).toBe(true);
  });

  test("duplicate kinds, no kind on the tool call, an unannounced toolCallId: selectable by exact id", async () => {
    const task = rig.task("odd-permission");
    task.approver = () => ({ decision: "approve_once", option_id: "p-once-b", granted_permission_ids: [] });
    const result = await rig.adapter(profileFor("scripted-agent.ts")).run(task);
    expect(result.finalResponse).toBe("outcome=selected:p-once-b");
    const req = task.approvals[0]!;
    expect(req.response_options!.map((o) => o.option_id)).toEqual(["p-once-a", "p-once-b", "p-cancel"]);
    expect(req.category).toBe("provider_permission");
    expect(new Set(req.available_decisions)).toEqual(new Set(["approve_once", "deny", "cancel_task"]));
    expect(task.eventsOf("tool.started")).toEqual([{ tool_call_id: "never-announced", title: null, kind: null, status: "pending" }]);
  });

  test("a request with no tool call at all still reaches the human and is answered by id", async () => {
    const task = rig.task("bare-permission");
    task.approver = () => ({ decision: "deny", option_id: "idx-no", granted_permission_ids: [] });
    const result = await rig.adapter(profileFor("scripted-agent.ts")).run(task);
    expect(result.finalResponse).toBe("outcome=selected:idx-no");
    expect(task.approvals[0]).toMatchObject({ category: "provider_permission", title: "The agent asks for permission" });
    expect(task.eventsOf("tool.started")).toEqual([]);
  });

  test("an option with a kind outside ACP → AGENT_ACP_PROTOCOL_ERROR, never shown to the human", async () => {
    const task = rig.task("bad-kind-permission");
    const res = await outcome(rig.adapter(profileFor("scripted-agent.ts")).run(task));
    expect(res.code).toBe("AGENT_ACP_PROTOCOL_ERROR");
    expect(task.approvals).toEqual([]);
  });

  test("only allow_always offered: one option, decisions approve_session + cancel_task, the tool input is shown", async () => {
    const task = rig.task("go");
    task.approver = (req) => ({ decision: "approve_session", option_id: req.response_options![0]!.option_id, granted_permission_ids: [] });
    const result = await rig.adapter(profileFor("only-allow-always.ts")).run(task);
    expect(result.finalResponse).toBe("selected always-yes");
    const req = task.approvals[0]!;
    expect(req.response_options).toEqual([{ option_id: "always-yes", label: "Always allow make", kind: "allow_always" }]);
    expect(new Set(req.available_decisions)).toEqual(new Set(["approve_session", "cancel_task"]));
    expect(req.category).toBe("command");
    expect(req.tool_input).toBe('{"command":"make test"}');
  });

  test("an approval that fails (expiry, stale) answers the agent `cancelled` and ends the task with that error", async () => {
    const task = rig.task("permission late.txt");
    task.approver = async () => {
      const { ServerfsError } = await import("../../../src/errors.ts");
      throw new ServerfsError("AGENT_INTERACTION_TIMED_OUT", "the approval expired");
    };
    const res = await outcome(rig.adapter(profileFor("scripted-agent.ts")).run(task));
    expect(res.code).toBe("AGENT_INTERACTION_TIMED_OUT");
    expect(written("late.txt")).toBe(false);
    expect(await task.survivors()).toEqual([]);
  });

  test("the idle watchdog is paused while a human decides", async () => {
    const task = rig.task("permission slow.txt");
    task.approver = async () => {
      await Bun.sleep(1600);
      return { decision: "approve_once", option_id: "opt-once", granted_permission_ids: [] };
    };
    const adapter = rig.adapter(profileFor("scripted-agent.ts"), agentConfig({ event_idle_timeout_seconds: 1 }));
    const result = await adapter.run(task);
    expect(result.finalResponse).toContain("wrote");
  });
});
