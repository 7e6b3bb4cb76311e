// Advice on ACP permission requests from real fixture agents through the real Bridge service: the
// pending request carries the advice the documented rules give for what the agent sent, mapped
// to an option the agent actually offered, and the agent only ever receives the human's choice.
import { afterEach, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { startAcpRig, type ServiceRig } from "../service-rig.ts";
import { profileFor } from "./harness.ts";

let rig: ServiceRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

type Pending = { request_id: string; advice: Record<string, unknown> };

test("an edit inside the workdir is advised allow once; the human rejects and the agent hears the rejection", async () => {
  rig = await startAcpRig([profileFor("scripted-agent.ts", [], { id: "scripted" })]);
  const id = await rig.submit("acp-scripted", "permission out.txt");
  const pending = (await rig.waitFor(id, (t) => t.status === "waiting_for_approval")).pending_request as Pending;
  expect(pending.advice).toEqual({ option_id: "opt-once", reason: "an edit inside the workdir (out.txt): allow_once", rule: "builtin:edit-inside-workdir" });
  await rig.call("task.approval.respond", { task_id: id, request_id: pending.request_id, option_id: "opt-reject", decided_by: "operator" });
  const done = await rig.waitTerminal(id);
  expect(done.final_response).toBe("chosen=opt-reject kind=reject_once nothing written");
  expect(fs.existsSync(path.join(rig.workdir, "out.txt"))).toBe(false);
  expect(rig.store.getInteraction(pending.request_id)!.advice_json).toBe(JSON.stringify(pending.advice));
});

test("an operator rule for the agent's command names the one offered option of the advised kind, and the history says it was followed", async () => {
  const rules = [
    { name: "make-always", kind: "command" as const, command_prefix: "make test", paths: null, command_regex: null, runtime: "acp-always", advise: "allow_always" as const, reason: null },
    { name: "never-reject", kind: null, command_prefix: null, paths: null, command_regex: null, runtime: "acp-other", advise: "reject_once" as const, reason: "not this agent" },
  ];
  rig = await startAcpRig([profileFor("only-allow-always.ts", [], { id: "always" })], { advice_rules: rules });
  const id = await rig.submit("acp-always", "go");
  const pending = (await rig.waitFor(id, (t) => t.status === "waiting_for_approval")).pending_request as Pending;
  expect(pending.advice).toEqual({ option_id: "always-yes", reason: "the configured rule matched (kind command, runtime acp-always, command prefix): allow_always", rule: "make-always" });
  await rig.call("task.approval.respond", { task_id: id, request_id: pending.request_id, option_id: "always-yes" });
  expect((await rig.waitTerminal(id)).final_response).toBe("selected always-yes");
  const resolved = (await rig.events(id)).find((e) => e.event_type === "approval.resolved")!.payload;
  expect(resolved.advice).toEqual({ option_id: "always-yes", rule: "make-always", followed: true });
});
