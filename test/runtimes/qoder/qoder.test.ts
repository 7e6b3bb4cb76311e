// Qoder: the real `qodercli` 1.1.52 cannot run a turn offline (it needs a Qoder login), so the
// adapter is proven here against a recorded-protocol stand-in (test/fixtures/native/qoder-recorded.ts)
// that speaks the 1.1.52 stream-json control protocol: prompt → result, approvals (approve,
// session, deny, cancel), questions, withdrawal, continuation, proxy, cancel with a setsid
// escapee. The real CLI's version probe and auth failure are in qoder-real.agent.ts (agents lane).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { qoderRuntimeFamily } from "../../../src/runtimes/qoder/index.ts";
import { pidAlive, processesWithHome, waitUntil } from "../../support/proc.ts";
import { tempDir } from "../../support/temp.ts";
import { startNativeRig, waitInteraction as waitForInteraction, writeProviderEnv, type ServiceRig } from "../service-rig.ts";

const FIXTURE = path.resolve(import.meta.dir, "../../fixtures/native/qoder-recorded.ts");

const family = (registry: Parameters<typeof qoderRuntimeFamily>[0], services: Parameters<typeof qoderRuntimeFamily>[1], options: unknown, diagnostics: Parameters<typeof qoderRuntimeFamily>[3]) =>
  qoderRuntimeFamily(registry, services, options, diagnostics);

describe.skipIf(process.platform === "win32")("Qoder stream-json protocol against the recorded stand-in", () => {
  let base: string;
  let home: string;
  let rig: ServiceRig;

  const waitInteraction = (id: string, status: string) => waitForInteraction(rig, id, status, 20_000);

  beforeAll(async () => {
    base = tempDir("serverfs-qoder-fixture-");
    home = path.join(base, "home");
    fs.mkdirSync(home);
    // An executable named like the real CLI: a shebang to this Bun, importing the stand-in.
    const bin = path.join(base, "qodercli");
    fs.writeFileSync(bin, `#!${process.execPath}\nawait import(${JSON.stringify(FIXTURE)});\n`, { mode: 0o755 });
    const envFile = path.join(base, "provider.env");
    writeProviderEnv(envFile, { HOME: home });
    rig = await startNativeRig(family, ["qoder"], {
      provider_env_file: envFile,
      qoder: { enabled: true, bin, use_proxy: true },
      proxy: { enabled: true, url: "http://127.0.0.1:3128", no_proxy: ["127.0.0.1", "localhost", "::1"] },
    });
  });
  afterAll(async () => {
    await rig?.stop();
    fs.rmSync(base, { recursive: true, force: true });
  });

  let first = "";
  test("prompt → result with the session id chosen before launch; the proxy is applied with set_proxy and env", async () => {
    const id = await rig.submit("qoder", "hello qoder");
    const done = await rig.waitTerminal(id);
    expect({ status: done.status, text: done.final_response }).toEqual({ status: "succeeded", text: "echo: hello qoder" });
    expect(rig.store.get(id)!.native_session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await rig.events(id)).map((e) => e.event_type)).toEqual(expect.arrayContaining(["turn.started", "agent.message"]));
    first = id;
    const p = await rig.submit("qoder", "PROXY?");
    expect((await rig.waitTerminal(p)).final_response).toBe("proxy: http://127.0.0.1:3128 env=http://127.0.0.1:3128");
    expect(processesWithHome(home)).toEqual([]);
  }, 30_000);

  test("continuation resumes the session with --resume", async () => {
    const id = await rig.submit("qoder", "RECALL", { continue_from_task_id: first });
    const done = await rig.waitTerminal(id);
    expect({ status: done.status, text: done.final_response }).toEqual({ status: "succeeded", text: "history: hello qoder" });
    expect(rig.store.get(id)!.native_session_id).toBe(rig.store.get(first)!.native_session_id);
  }, 30_000);

  test("approve_once runs the command (bytes on disk); no session option without provider suggestions", async () => {
    const target = path.join(rig.workdir, "q-approved.txt");
    const id = await rig.submit("qoder", `SHELL printf qoder-bytes > ${target}`);
    const req = await waitInteraction(id, "waiting_for_approval");
    expect(req.payload).toMatchObject({ category: "command", tool: "Bash", available_decisions: ["approve_once", "deny", "cancel_task"] });
    expect(fs.existsSync(target)).toBe(false);
    expect(await rig.fail("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "approve_session", granted_permission_ids: [] })).toBe("INVALID_APPROVAL_DECISION");
    await rig.call("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "approve_once", granted_permission_ids: [] });
    const done = await rig.waitTerminal(id);
    expect({ status: done.status, text: done.final_response }).toEqual({ status: "succeeded", text: "tool finished: exit 0" });
    expect(fs.readFileSync(target, "utf8")).toBe("qoder-bytes");
  }, 30_000);

  test("deny: the command never runs and the model hears the denial", async () => {
    const target = path.join(rig.workdir, "q-denied.txt");
    const id = await rig.submit("qoder", `SHELL printf no > ${target}`);
    const req = await waitInteraction(id, "waiting_for_approval");
    await rig.call("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "deny", granted_permission_ids: [] });
    const done = await rig.waitTerminal(id);
    expect({ status: done.status, text: done.final_response }).toEqual({ status: "succeeded", text: "denied: The user denied this action." });
    expect(fs.existsSync(target)).toBe(false);
  }, 30_000);

  test("cancel_task: deny with interrupt, the task is cancelled, nothing runs", async () => {
    const target = path.join(rig.workdir, "q-cancel.txt");
    const id = await rig.submit("qoder", `SHELL printf no > ${target}`);
    const req = await waitInteraction(id, "waiting_for_approval");
    await rig.call("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "cancel_task", granted_permission_ids: [] });
    expect((await rig.waitTerminal(id)).status).toBe("cancelled");
    expect(fs.existsSync(target)).toBe(false);
    expect(await waitUntil(() => processesWithHome(home).length === 0, 5000)).toBe(true);
  }, 30_000);

  test("AskUserQuestion (multi-select) → question; answers return keyed by question text", async () => {
    const id = await rig.submit("qoder", "ASK pick colours");
    const req = await waitInteraction(id, "waiting_for_question");
    expect(req.payload).toEqual({
      questions: [
        {
          question_id: "q0",
          prompt: "Colour: pick colours",
          options: [
            { option_id: "Red", label: "Red" },
            { option_id: "Blue", label: "Blue" },
            { option_id: "Green", label: "Green" },
          ],
          multi_select: true,
          allow_free_text: true,
        },
      ],
    });
    expect(await rig.fail("task.question.answer", { task_id: id, request_id: req.request_id, answers: [{ question_id: "q0", selected_option_ids: ["Purple"] }] })).toBe(
      "INVALID_QUESTION_ANSWER",
    );
    await rig.call("task.question.answer", { task_id: id, request_id: req.request_id, answers: [{ question_id: "q0", selected_option_ids: ["Red", "Green"], text: "teal" }] });
    const done = await rig.waitTerminal(id);
    expect(done.final_response).toBe('answers: {"pick colours":"Red, Green, teal"}');
  }, 30_000);

  test("a request the CLI withdraws becomes stale; a late human answer is refused", async () => {
    const id = await rig.submit("qoder", "WITHDRAW touch x");
    const req = await waitInteraction(id, "waiting_for_approval");
    const done = await rig.waitTerminal(id);
    expect({ status: done.status, text: done.final_response }).toEqual({ status: "succeeded", text: "withdrawn" });
    expect((await rig.events(id)).map((e) => e.event_type)).toContain("interaction.stale");
    expect(await rig.fail("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "approve_once", granted_permission_ids: [] })).toMatch(/REQUEST_STALE|REQUEST_ALREADY_RESOLVED/);
  }, 30_000);

  test("cancel while the CLI ignores interrupt and a setsid child sleeps: zero survivors (checked in /proc)", async () => {
    const id = await rig.submit("qoder", "HANG");
    await rig.waitFor(id, () => processesWithHome(home).some((p) => p.cmd.includes("sleep 43")), 20_000);
    expect(await rig.fail("task.message.send", { task_id: id, message: "steer?" })).toBe("AGENT_PROVIDER_ERROR");
    const live = processesWithHome(home);
    await rig.call("task.cancel", { task_id: id });
    expect((await rig.call("task.get", { task_id: id })).status).toBe("cancelled");
    expect(await waitUntil(() => processesWithHome(home).length === 0, 10_000)).toBe(true);
    expect(live.filter((p) => pidAlive(p.pid))).toEqual([]);
  }, 30_000);

  test("a request-scoped model is passed with --model, for that task only", async () => {
    const id = await rig.submit("qoder", "MODEL?", { model: "qoder-fixture-model" });
    expect((await rig.waitTerminal(id)).final_response).toBe("model: qoder-fixture-model");
    const plain = await rig.submit("qoder", "MODEL?");
    expect((await rig.waitTerminal(plain)).final_response).toBe("model: auto");
    const bad = await rig.submit("qoder", "RECALL", { continue_from_task_id: "no-such-task" }).catch((e: { code: string }) => e.code);
    expect(bad).toBe("AGENT_TASK_NOT_FOUND");
  }, 30_000);
});
