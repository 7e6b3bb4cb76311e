// Codex end to end: the real `codex app-server` (@openai/codex 0.169.0, the npm-installed binary)
// as runtime `codex` behind the real Bridge service, with a scripted Responses API model on
// 127.0.0.1 reached through a custom model provider in an isolated CODEX_HOME (docs/maintainers/testing.md).
// Its settings reach it the way an operator's would: the Bridge's private provider env file.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { codexRuntimeFamily } from "../../../src/runtimes/codex/index.ts";
import { startResponsesModel, type ResponsesModel } from "../../fixtures/native/responses-model.ts";
import { pidAlive, processesWithHome, waitUntil } from "../../support/proc.ts";
import { tempDir } from "../../support/temp.ts";
import { startNativeRig, waitInteraction as waitForInteraction, writeProviderEnv, type ServiceRig } from "../service-rig.ts";

const CODEX = path.resolve(import.meta.dir, "../../../node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex");
const installed = fs.existsSync(CODEX);
if (!installed) console.warn(`codex e2e skipped: ${CODEX} is not installed (run npm ci)`);
// The pinned package's binary for this suite is the Linux x64 one.
const runnable = installed && process.platform === "linux" && process.arch === "x64";

let model: ResponsesModel;
let base: string;
let home: string;
let rig: ServiceRig;

const waitInteraction = (id: string, status: string) => waitForInteraction(rig, id, status, 60_000);

describe.skipIf(!runnable)("Codex app-server through the Bridge", () => {
  beforeAll(async () => {
    model = startResponsesModel();
    base = tempDir("serverfs-codex-");
    home = path.join(base, "home");
    const codexHome = path.join(home, ".codex");
    fs.mkdirSync(path.join(codexHome, "rules"), { recursive: true });
    fs.writeFileSync(
      path.join(codexHome, "config.toml"),
      [
        'model = "gpt-5.5"',
        'model_provider = "fake"',
        // What an operator might have: ServerFS must still get every prompt (it pins on-request + user reviewer).
        'approval_policy = "never"',
        'approvals_reviewer = "auto_review"',
        'sandbox_mode = "danger-full-access"',
        "check_for_update_on_startup = false",
        "suppress_unstable_features_warning = true",
        "[model_providers.fake]",
        'name = "Fake"',
        `base_url = "${model.baseUrl}/v1"`,
        'env_key = "FAKE_API_KEY"',
        'wire_api = "responses"',
        "[features]",
        "default_mode_request_user_input = true",
        "[analytics]",
        "enabled = false",
        "",
      ].join("\n"),
    );
    fs.writeFileSync(path.join(codexHome, "rules", "default.rules"), 'prefix_rule(pattern = ["cp"], decision = "prompt")\n');
    const envFile = path.join(base, "provider.env");
    writeProviderEnv(envFile, { HOME: home, CODEX_HOME: codexHome, FAKE_API_KEY: "fake-key" });
    rig = await startNativeRig((registry, services, options, diagnostics) => codexRuntimeFamily(registry, services, options, diagnostics), ["codex"], {
      provider_env_file: envFile,
      codex: { enabled: true, bin: CODEX, use_proxy: false },
    });
  });
  afterAll(async () => {
    await rig?.stop();
    model?.stop();
    fs.rmSync(base, { recursive: true, force: true });
  });

  test("runtime.list advertises exactly what this suite proves", async () => {
    const runtimes = (await rig.call("runtime.list")).runtimes as Array<Record<string, unknown>>;
    expect(runtimes).toEqual([
      {
        name: "codex",
        available: true,
        version: "0.169.0",
        persistent_session: true,
        live_steer: true,
        interactive_approval: true,
        interactive_question: true,
        in_flight_recovery: "session-resume",
        model_override: true,
        model_discovery: "runtime_catalog",
      },
    ]);
  });

  test("model discovery pages the app-server catalog without starting a turn", async () => {
    const before = model.requests.length;
    const r = await rig.call("runtime.models", { runtime: "codex" });
    expect(r).toMatchObject({ runtime: "codex", status: "ok", source: "codex_app_server", scope: "runtime_catalog" });
    const models = r.models as Array<Record<string, unknown>>;
    expect(models.length).toBeGreaterThan(0);
    expect(models.length).toBeLessThanOrEqual(64);
    expect(models.map((m) => m.id)).toContain("gpt-5.5");
    expect(models.every((m) => typeof m.display_name === "string" && typeof m.hidden === "boolean" && typeof m.is_default === "boolean")).toBe(true);
    expect(model.requests.length).toBe(before);
    expect(processesWithHome(home)).toEqual([]);
  }, 60_000);

  let firstTask = "";
  test("prompt → result, thread and turn ids recorded, nothing left running", async () => {
    const id = await rig.submit("codex", "remember NONCE-7f3a");
    const done = await rig.waitTerminal(id, 60_000);
    expect({ status: done.status, error: done.error_code, text: done.final_response }).toEqual({ status: "succeeded", error: null, text: "echo: remember NONCE-7f3a" });
    const row = rig.store.get(id)!;
    expect(row.native_session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(row.native_turn_id).toMatch(/^[0-9a-f-]{36}$/);
    const types = (await rig.events(id)).map((e) => e.event_type);
    expect(types).toContain("turn.started");
    expect(types).toContain("agent.message");
    expect(processesWithHome(home)).toEqual([]);
    firstTask = id;
  }, 90_000);

  test("continuation resumes the thread in a new app-server with the full history", async () => {
    const id = await rig.submit("codex", "RECALL", { continue_from_task_id: firstTask });
    const done = await rig.waitTerminal(id, 60_000);
    expect({ status: done.status, text: done.final_response }).toEqual({ status: "succeeded", text: "history: remember NONCE-7f3a" });
    expect(rig.store.get(id)!.native_session_id).toBe(rig.store.get(firstTask)!.native_session_id);
    expect(processesWithHome(home)).toEqual([]);
  }, 90_000);

  test("command approval, approve_once: the command runs and the bytes land", async () => {
    fs.writeFileSync(path.join(rig.workdir, "seed.txt"), "seed bytes 1\n");
    const id = await rig.submit("codex", `SHELL cp ${rig.workdir}/seed.txt ${rig.workdir}/approved.txt`);
    const req = await waitInteraction(id, "waiting_for_approval");
    expect(req.payload).toMatchObject({ category: "command", available_decisions: ["approve_once", "deny", "cancel_task"], relative_cwd: "" });
    expect(String(req.payload.command_display)).toContain("cp ");
    expect(String(req.payload.reason)).toContain("requires approval by policy");
    // The operator's `approval_policy = "never"` did not apply: nothing ran before the answer.
    expect(fs.existsSync(path.join(rig.workdir, "approved.txt"))).toBe(false);
    await rig.call("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "approve_once", granted_permission_ids: [] });
    const done = await rig.waitTerminal(id, 60_000);
    expect(done.status).toBe("succeeded");
    expect(String(done.final_response)).toStartWith("tool finished:");
    expect(fs.readFileSync(path.join(rig.workdir, "approved.txt"), "utf8")).toBe("seed bytes 1\n");
    const types = (await rig.events(id)).map((e) => e.event_type);
    expect(types).toEqual(expect.arrayContaining(["approval.requested", "approval.resolved", "item.started", "item.completed"]));
  }, 90_000);

  test("command approval, deny: codex hears decline, the file never appears, the turn completes", async () => {
    const id = await rig.submit("codex", `SHELL cp ${rig.workdir}/seed.txt ${rig.workdir}/denied.txt`);
    const req = await waitInteraction(id, "waiting_for_approval");
    expect(await rig.fail("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "approve_session", granted_permission_ids: [] })).toBe(
      "INVALID_APPROVAL_DECISION",
    );
    await rig.call("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "deny", granted_permission_ids: [] });
    const done = await rig.waitTerminal(id, 60_000);
    expect(done.status).toBe("succeeded");
    expect(String(done.final_response)).toContain("rejected");
    expect(fs.existsSync(path.join(rig.workdir, "denied.txt"))).toBe(false);
    const completed = (await rig.events(id)).filter((e) => e.event_type === "item.completed").map((e) => e.payload);
    expect(completed).toContainEqual(expect.objectContaining({ type: "commandExecution", status: "declined" }));
  }, 90_000);

  test("cancel_task on an approval: codex hears cancel and the task is cancelled", async () => {
    const id = await rig.submit("codex", `SHELL cp ${rig.workdir}/seed.txt ${rig.workdir}/cancelled.txt`);
    const req = await waitInteraction(id, "waiting_for_approval");
    await rig.call("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "cancel_task", granted_permission_ids: [] });
    const done = await rig.waitTerminal(id, 30_000);
    expect(done.status).toBe("cancelled");
    expect(fs.existsSync(path.join(rig.workdir, "cancelled.txt"))).toBe(false);
    expect(await waitUntil(() => processesWithHome(home).length === 0, 10_000)).toBe(true);
  }, 60_000);

  test("requestUserInput becomes a question; the chosen label goes back to codex", async () => {
    const id = await rig.submit("codex", "ASK which colour?");
    const req = await waitInteraction(id, "waiting_for_question");
    expect(req.payload).toEqual({
      questions: [
        {
          question_id: "colour",
          prompt: "Colour: which colour?",
          options: [
            { option_id: "opt_0_0", label: "Red (Recommended)", description: "the warm one" },
            { option_id: "opt_0_1", label: "Blue", description: "the cool one" },
          ],
          multi_select: false,
          allow_free_text: true,
        },
      ],
    });
    await rig.call("task.question.answer", { task_id: id, request_id: req.request_id, answers: [{ question_id: "colour", selected_option_ids: ["opt_0_1"], text: "navy" }] });
    const done = await rig.waitTerminal(id, 60_000);
    expect(done.status).toBe("succeeded");
    expect(done.final_response).toBe('tool finished: {"answers":{"colour":{"answers":["Blue","navy"]}}}');
  }, 90_000);

  test("live steering: a message sent mid-turn reaches the model inside the same turn", async () => {
    const id = await rig.submit("codex", "SHELL sleep 2");
    await rig.waitFor(id, (t) => t.status === "running" && processesWithHome(home).some((p) => p.cmd.includes("sleep 2")), 30_000);
    await rig.call("task.message.send", { task_id: id, message: "also say STEERED-OK" });
    const done = await rig.waitTerminal(id, 60_000);
    expect({ status: done.status, text: done.final_response }).toEqual({ status: "succeeded", text: "echo: also say STEERED-OK" });
    const ev = (await rig.events(id)).find((e) => e.event_type === "user.message");
    expect(ev?.payload).toEqual({ bytes: "also say STEERED-OK".length });
    expect(rig.store.get(id)!.native_turn_id).not.toBeNull();
  }, 90_000);

  test("cancel mid-tool: terminal first, then zero surviving processes (checked in /proc)", async () => {
    const id = await rig.submit("codex", "SHELL sleep 37");
    await rig.waitFor(id, () => processesWithHome(home).some((p) => p.cmd.includes("sleep 37")), 30_000);
    const live = processesWithHome(home);
    expect(live.length).toBeGreaterThanOrEqual(2); // the app-server and the tool's shell/sleep at least
    await rig.call("task.cancel", { task_id: id });
    expect((await rig.call("task.get", { task_id: id })).status).toBe("cancelled");
    expect(await waitUntil(() => processesWithHome(home).length === 0, 10_000)).toBe(true);
    expect(live.filter((p) => pidAlive(p.pid))).toEqual([]);
    // The lease and guard are released only after the proved stop: a new task on the workdir starts.
    const next = await rig.submit("codex", "after cancel");
    expect((await rig.waitTerminal(next, 60_000)).final_response).toBe("echo: after cancel");
  }, 90_000);

  test("a request-scoped model goes to the provider for that task only", async () => {
    const id = await rig.submit("codex", "which model", { model: "gpt-5.4" });
    const done = await rig.waitTerminal(id, 60_000);
    expect(done.status).toBe("succeeded");
    const asked = model.requests.filter((r) => r.prompts.at(-1) === "which model");
    expect(asked.map((r) => r.model)).toEqual(["gpt-5.4"]);
    const other = await rig.submit("codex", "default model please");
    await rig.waitTerminal(other, 60_000);
    expect(model.requests.filter((r) => r.prompts.at(-1) === "default model please").map((r) => r.model)).toEqual(["gpt-5.5"]);
  }, 90_000);
});

describe.skipIf(!runnable)("Codex approval expiry", () => {
  let expiryModel: ResponsesModel;
  let expiryBase: string;
  let expiryHome: string;
  let expiryRig: ServiceRig;
  beforeAll(async () => {
    expiryModel = startResponsesModel();
    expiryBase = tempDir("serverfs-codex-expiry-");
    expiryHome = path.join(expiryBase, "home");
    const codexHome = path.join(expiryHome, ".codex");
    fs.mkdirSync(path.join(codexHome, "rules"), { recursive: true });
    fs.writeFileSync(
      path.join(codexHome, "config.toml"),
      `model = "gpt-5.5"\nmodel_provider = "fake"\nsandbox_mode = "danger-full-access"\ncheck_for_update_on_startup = false\n[model_providers.fake]\nname = "Fake"\nbase_url = "${expiryModel.baseUrl}/v1"\nenv_key = "FAKE_API_KEY"\nwire_api = "responses"\n[analytics]\nenabled = false\n`,
    );
    fs.writeFileSync(path.join(codexHome, "rules", "default.rules"), 'prefix_rule(pattern = ["cp"], decision = "prompt")\n');
    const envFile = path.join(expiryBase, "provider.env");
    writeProviderEnv(envFile, { HOME: expiryHome, CODEX_HOME: codexHome, FAKE_API_KEY: "fake-key" });
    expiryRig = await startNativeRig((registry, services, options, diagnostics) => codexRuntimeFamily(registry, services, options, diagnostics), ["codex"], {
      provider_env_file: envFile,
      interaction_timeout_seconds: 2,
      codex: { enabled: true, bin: CODEX, use_proxy: false },
    });
  });
  afterAll(async () => {
    await expiryRig?.stop();
    expiryModel?.stop();
    fs.rmSync(expiryBase, { recursive: true, force: true });
  });

  test("an unanswered approval expires: interrupted AGENT_INTERACTION_TIMED_OUT, nothing ran, nothing left", async () => {
    fs.writeFileSync(path.join(expiryRig.workdir, "seed.txt"), "x");
    const id = await expiryRig.submit("codex", `SHELL cp ${expiryRig.workdir}/seed.txt ${expiryRig.workdir}/late.txt`);
    await expiryRig.waitFor(id, (t) => t.status === "waiting_for_approval", 30_000);
    const done = await expiryRig.waitTerminal(id, 30_000);
    expect({ status: done.status, error: done.error_code }).toEqual({ status: "interrupted", error: "AGENT_INTERACTION_TIMED_OUT" });
    expect(await waitUntil(() => processesWithHome(expiryHome).length === 0, 10_000)).toBe(true);
    expect(fs.existsSync(path.join(expiryRig.workdir, "late.txt"))).toBe(false);
    expect((await expiryRig.events(id)).map((e) => e.event_type)).toContain("interaction.expired");
  }, 60_000);
});
