// ACP runtimes through the real Bridge service: submit → events → result, exact-option approvals
// validated by the service, terminal-first cancel with the workdir lease free again afterwards,
// redaction of agent-supplied paths, continuation, and defective agents that never wedge it.
import { afterEach, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { pidAlive } from "../../support/proc.ts";
import { startAcpRig, type ServiceRig } from "../service-rig.ts";
import { profileFor } from "./harness.ts";
import { tempDir } from "../../support/temp.ts";

let rig: ServiceRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

const scripted = (args: string[] = []) => profileFor("scripted-agent.ts", args, { id: "scripted" });

describe("ACP through the Bridge service", () => {
  test("runtime listing is unmeasured and launches nothing; a task measures it", async () => {
    rig = await startAcpRig([scripted(["--load", "--models=m1,m2"])]);
    const before = (await rig.call("runtime.list")).runtimes as Array<Record<string, unknown>>;
    expect(before).toEqual([expect.objectContaining({ name: "acp-scripted", available: true, capability_state: "unmeasured", model_override: false })]);
    const id = await rig.submit("acp-scripted", "text hello bridge");
    const done = await rig.waitTerminal(id);
    expect(done.status).toBe("succeeded");
    expect(done.final_response).toBe("hello bridge");
    expect(rig.store.require(id).native_session_id).toMatch(/^sess-/);
    const after = (await rig.call("runtime.list")).runtimes as Array<Record<string, unknown>>;
    expect(after[0]).toMatchObject({ capability_state: "measured", persistent_session: true, model_override: true, version: "1.2.3" });
    const models = await rig.call("runtime.models", { runtime: "acp-scripted" });
    expect(models).toMatchObject({ status: "ok", models: [{ id: "m1" }, { id: "m2" }] });
  });

  test("approval: exact response_options; a forged option_id is refused and the request stays pending; the offered one writes", async () => {
    rig = await startAcpRig([scripted()]);
    const id = await rig.submit("acp-scripted", "permission out.txt");
    const waiting = await rig.waitFor(id, (t) => t.status === "waiting_for_approval");
    const pending = waiting.pending_request as { request_id: string; payload: Record<string, unknown> };
    expect(pending.payload.response_options).toEqual([
      { option_id: "opt-once", label: "Allow once", kind: "allow_once" },
      { option_id: "opt-always", label: "Always allow", kind: "allow_always" },
      { option_id: "opt-reject", label: "Reject", kind: "reject_once" },
      { option_id: "opt-never", label: "Never allow", kind: "reject_always" },
    ]);
    // Paths the agent sent are shown workdir-relative, never as host paths.
    expect(pending.payload.file_changes).toEqual([{ path: "out.txt" }]);
    expect(JSON.stringify(pending.payload)).not.toContain(rig.workdir);
    const code = await rig.fail("task.approval.respond", { task_id: id, request_id: pending.request_id, option_id: "allow-everything" });
    expect(code).toBe("INVALID_APPROVAL_DECISION");
    expect((await rig.call("task.get", { task_id: id })).status).toBe("waiting_for_approval");
    await rig.call("task.approval.respond", { task_id: id, request_id: pending.request_id, option_id: "opt-always" });
    const done = await rig.waitTerminal(id);
    expect(done.status).toBe("succeeded");
    expect(done.final_response).toBe("chosen=opt-always kind=allow_always wrote");
    expect(fs.readFileSync(path.join(rig.workdir, "out.txt"), "utf8")).toBe("written by fixture");
    // The record keeps the persistent choice visible as allow_always, not only as approve_session.
    const events = (await rig.call("task.events", { task_id: id })).events as Array<{ event_type: string; payload: Record<string, unknown> }>;
    expect(events.find((e) => e.event_type === "approval.resolved")?.payload).toEqual({
      decision: "approve_session",
      option_id: "opt-always",
      option_kind: "allow_always",
      advice: { option_id: "opt-once", rule: "builtin:edit-inside-workdir", followed: false },
    });
    const late = await rig.fail("task.approval.respond", { task_id: id, request_id: pending.request_id, option_id: "opt-once" });
    expect(["REQUEST_ALREADY_RESOLVED", "REQUEST_STALE"]).toContain(late);
  });

  test("an approval left unanswered past its deadline interrupts the task; a late answer is stale; nothing written", async () => {
    rig = await startAcpRig([scripted()], { interaction_timeout_seconds: 1 });
    const id = await rig.submit("acp-scripted", "permission late.txt");
    const waiting = await rig.waitFor(id, (t) => t.status === "waiting_for_approval");
    const requestId = (waiting.pending_request as { request_id: string }).request_id;
    const done = await rig.waitTerminal(id);
    expect({ status: done.status, code: done.error_code }).toEqual({ status: "interrupted", code: "AGENT_INTERACTION_TIMED_OUT" });
    expect(await rig.fail("task.approval.respond", { task_id: id, request_id: requestId, option_id: "opt-once" })).toBe("REQUEST_STALE");
    await Bun.sleep(100);
    expect(fs.existsSync(path.join(rig.workdir, "late.txt"))).toBe(false);
  });

  test("events are redacted by the service: tool paths relative, titles with <workdir>", async () => {
    rig = await startAcpRig([scripted()]);
    const id = await rig.submit("acp-scripted", "rich");
    expect((await rig.waitTerminal(id)).status).toBe("succeeded");
    const events = await rig.events(id);
    const tool = events.find((e) => e.event_type === "tool.started")!;
    expect(tool.payload).toMatchObject({ paths: ["a.txt"], title: "Read <workdir>/a.txt" });
    expect(JSON.stringify(events)).not.toContain(rig.workdir);
    expect(JSON.stringify(events)).not.toContain("must-not-persist");
  });

  // The fixture's tool uses the util-linux `setsid` program and liveness is read from /proc.
  test.skipIf(process.platform !== "linux")("cancel during a running tool: cancelled first, setsid grandchildren gone, the workdir free for the next task", async () => {
    const pidsFile = path.join(process.env.TMPDIR ?? "/tmp", `acp-pids-${process.pid}-${Date.now()}.json`);
    rig = await startAcpRig([profileFor("setsid-grandchildren.ts", [`--pids=${pidsFile}`], { id: "tree" }), scripted()]);
    const id = await rig.submit("acp-tree", "go");
    await rig.waitFor(id, () => fs.existsSync(pidsFile) && fs.readFileSync(pidsFile, "utf8").length > 2);
    const pids = JSON.parse(fs.readFileSync(pidsFile, "utf8")) as number[];
    fs.rmSync(pidsFile);
    expect(pids.every(pidAlive)).toBe(true);
    const cancel = await rig.call("task.cancel", { task_id: id });
    expect(cancel.status).toBe("cancelled");
    const until = Date.now() + 10_000;
    while (pids.some(pidAlive) && Date.now() < until) await Bun.sleep(50);
    expect(pids.filter(pidAlive)).toEqual([]);
    // The lease/guard were released only after proof: the next writer task runs.
    let next = "";
    for (;;) {
      try {
        next = await rig.submit("acp-scripted", "text next one");
        break;
      } catch (err) {
        if ((err as { code?: string }).code !== "WORKDIR_BUSY" || Date.now() > until) throw err;
        await Bun.sleep(50);
      }
    }
    expect((await rig.waitTerminal(next)).final_response).toBe("next one");
  });

  test("continuation: a persisted session continues in a new process and the agent sees the earlier turn", async () => {
    const state = tempDir("acp-cont-");
    try {
      rig = await startAcpRig([scripted([`--state=${state}`, "--load"])]);
      const first = await rig.submit("acp-scripted", "text the first prompt");
      expect((await rig.waitTerminal(first)).status).toBe("succeeded");
      const second = await rig.submit("acp-scripted", "remember", { continue_from_task_id: first });
      const done = await rig.waitTerminal(second);
      expect(done.final_response).toBe("earlier: text the first prompt");
      const messages = (await rig.events(second)).filter((e) => e.event_type === "agent.message");
      expect(messages.map((m) => m.payload.text)).toEqual(["earlier: text the first prompt"]);
    } finally {
      fs.rmSync(state, { recursive: true, force: true });
    }
  });

  test("defective agents fail with their codes and the Bridge keeps serving", async () => {
    rig = await startAcpRig([
      profileFor("garbage-stdout.ts", [], { id: "garbage" }),
      profileFor("wrong-version.ts", [], { id: "v2" }),
      profileFor("auth-required.ts", [], { id: "auth" }),
      profileFor("exit-mid-turn.ts", [], { id: "crash" }),
      scripted(),
    ]);
    const expectations: Array<[string, string]> = [
      ["acp-garbage", "AGENT_ACP_PROTOCOL_ERROR"],
      ["acp-v2", "AGENT_ACP_PROTOCOL_UNSUPPORTED"],
      ["acp-auth", "AGENT_AUTH_REQUIRED"],
      ["acp-crash", "AGENT_PROVIDER_DISCONNECTED"],
    ];
    for (const [runtime, code] of expectations) {
      const id = await rig.submit(runtime, "x");
      const done = await rig.waitTerminal(id);
      expect({ runtime, status: done.status, code: done.error_code }).toEqual({ runtime, status: "failed", code });
      expect(String(done.error_message)).not.toContain("/home/someone");
    }
    const ok = await rig.submit("acp-scripted", "text still serving");
    expect((await rig.waitTerminal(ok)).final_response).toBe("still serving");
  });

  test("stderr reaches only the private diagnostics, with provider env file secrets redacted", async () => {
    const envDir = tempDir("acp-env-");
    try {
      const envFile = path.join(envDir, "provider.env");
      fs.writeFileSync(envFile, "FIXTURE_TOKEN=tok-0123456789-secret\n", { mode: 0o600 });
      rig = await startAcpRig([profileFor("exit-mid-turn.ts", [], { id: "crash" })], { provider_env_file: envFile });
      const id = await rig.submit("acp-crash", "x");
      const done = await rig.waitTerminal(id);
      expect(done.error_code).toBe("AGENT_PROVIDER_DISCONNECTED");
      expect(JSON.stringify(await rig.events(id))).not.toContain("segfault");
      const tail = rig.diagnostics.records.find((r) => r.kind === "stderr_tail");
      expect(String(tail?.fields.detail)).toContain("segfault-like crash");
      expect(JSON.stringify(rig.diagnostics.records)).not.toContain("tok-0123456789-secret");
    } finally {
      fs.rmSync(envDir, { recursive: true, force: true });
    }
  });

  test("a model the agent does not offer is refused with AGENT_MODEL_UNSUPPORTED", async () => {
    rig = await startAcpRig([scripted(["--models=a,b"])]);
    const id = await rig.submit("acp-scripted", "model", { model: "zzz" });
    const done = await rig.waitTerminal(id);
    expect(done.error_code).toBe("AGENT_MODEL_UNSUPPORTED");
    const ok = await rig.submit("acp-scripted", "model", { model: "b" });
    expect((await rig.waitTerminal(ok)).final_response).toBe("model=b");
  });
});
