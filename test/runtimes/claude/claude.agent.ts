// Claude end to end: the real Claude Code CLI (2.1.332, the native binary npm installs with
// @anthropic-ai/claude-agent-sdk 0.3.332) driven by the SDK as runtime `claude` behind the real
// Bridge service, with a scripted Messages API model on 127.0.0.1 via ANTHROPIC_BASE_URL
// (docs/maintainers/testing.md). Settings reach it through the Bridge's private provider env file.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { claudeRuntimeFamily } from "../../../src/runtimes/claude/index.ts";
import { startMessagesModel, type MessagesModel } from "../../fixtures/native/messages-model.ts";
import { pidAlive, processesWithHome, waitUntil } from "../../support/proc.ts";
import { tempDir } from "../../support/temp.ts";
import { startNativeRig, waitInteraction as waitForInteraction, writeProviderEnv, type ServiceRig } from "../service-rig.ts";

const CLAUDE = path.resolve(import.meta.dir, "../../../node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude");
const installed = fs.existsSync(CLAUDE) && fs.existsSync(path.resolve(import.meta.dir, "../../../node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs"));
if (!installed) console.warn(`claude e2e skipped: ${CLAUDE} is not installed (run npm ci)`);
const runnable = installed && process.platform === "linux" && process.arch === "x64";

let model: MessagesModel;
let base: string;
let home: string;
let rig: ServiceRig;

const waitInteraction = (id: string, status: string) => waitForInteraction(rig, id, status, 60_000);

describe.skipIf(!runnable)("Claude Code through the Agent SDK and the Bridge", () => {
  beforeAll(async () => {
    model = startMessagesModel();
    base = tempDir("serverfs-claude-");
    home = path.join(base, "home");
    const configDir = path.join(home, ".claude");
    fs.mkdirSync(configDir, { recursive: true });
    // What a user might have: ServerFS must still get every prompt (it pins permissionMode "default").
    fs.writeFileSync(path.join(configDir, "settings.json"), JSON.stringify({ permissions: { defaultMode: "bypassPermissions" } }));
    const envFile = path.join(base, "provider.env");
    writeProviderEnv(envFile, {
      HOME: home,
      CLAUDE_CONFIG_DIR: configDir,
      ANTHROPIC_BASE_URL: model.baseUrl,
      ANTHROPIC_API_KEY: "sk-ant-fake",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
    });
    rig = await startNativeRig((registry, services, options, diagnostics) => claudeRuntimeFamily(registry, services, options, diagnostics), ["claude"], {
      provider_env_file: envFile,
      claude: { enabled: true, bin: CLAUDE, use_proxy: false },
    });
    // A task caller could have left allow-everything rules in the workdir: they are not loaded.
    fs.mkdirSync(path.join(rig.workdir, ".claude"));
    fs.writeFileSync(path.join(rig.workdir, ".claude", "settings.local.json"), JSON.stringify({ permissions: { allow: ["Bash", "Write", "Edit"], defaultMode: "bypassPermissions" } }));
  });
  afterAll(async () => {
    await rig?.stop();
    model?.stop();
    fs.rmSync(base, { recursive: true, force: true });
  });

  test("runtime.list advertises exactly what this suite proves; no model catalog", async () => {
    const runtimes = (await rig.call("runtime.list")).runtimes as Array<Record<string, unknown>>;
    expect(runtimes).toEqual([
      {
        name: "claude",
        available: true,
        version: "2.1.332",
        persistent_session: true,
        live_steer: false,
        interactive_approval: true,
        interactive_question: true,
        in_flight_recovery: "session-resume",
        model_override: true,
        model_discovery: "unsupported",
      },
    ]);
    expect(await rig.call("runtime.models", { runtime: "claude" })).toMatchObject({ status: "unsupported", scope: "none", source: "claude_code", models: [] });
  });

  let firstTask = "";
  test("prompt → result, session id recorded, nothing left running", async () => {
    const id = await rig.submit("claude", "remember NONCE-c1a0");
    const done = await rig.waitTerminal(id, 60_000);
    expect({ status: done.status, error: done.error_code, text: done.final_response }).toEqual({ status: "succeeded", error: null, text: "echo: remember NONCE-c1a0" });
    expect(rig.store.get(id)!.native_session_id).toMatch(/^[0-9a-f-]{36}$/);
    const types = (await rig.events(id)).map((e) => e.event_type);
    expect(types).toEqual(expect.arrayContaining(["turn.started", "agent.message", "task.completed"]));
    expect(processesWithHome(home)).toEqual([]);
    firstTask = id;
  }, 90_000);

  test("continuation resumes the same session in a new CLI with the full history", async () => {
    const id = await rig.submit("claude", "RECALL", { continue_from_task_id: firstTask });
    const done = await rig.waitTerminal(id, 60_000);
    expect({ status: done.status, text: done.final_response }).toEqual({ status: "succeeded", text: "history: remember NONCE-c1a0" });
    expect(rig.store.get(id)!.native_session_id).toBe(rig.store.get(firstTask)!.native_session_id);
    expect(processesWithHome(home)).toEqual([]);
  }, 90_000);

  test("Write approval, approve_once: the exact bytes land", async () => {
    const target = path.join(rig.workdir, "approved.txt");
    const id = await rig.submit("claude", `WRITE ${target} hello from claude`);
    const req = await waitInteraction(id, "waiting_for_approval");
    expect(req.payload).toMatchObject({ category: "file_change", tool: "Write", available_decisions: ["approve_once", "deny", "cancel_task"] });
    expect(JSON.stringify(req.payload.file_changes)).toContain("approved.txt");
    expect(fs.existsSync(target)).toBe(false);
    await rig.call("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "approve_once", granted_permission_ids: [] });
    const done = await rig.waitTerminal(id, 60_000);
    expect(done.status).toBe("succeeded");
    expect(fs.readFileSync(target, "utf8")).toBe("hello from claude");
  }, 90_000);

  test("Bash approval, deny: the command never runs and the turn still completes", async () => {
    const target = path.join(rig.workdir, "denied.txt");
    const id = await rig.submit("claude", `SHELL touch ${target}`);
    const req = await waitInteraction(id, "waiting_for_approval");
    expect(req.payload).toMatchObject({ category: "command", tool: "Bash", available_decisions: ["approve_once", "approve_session", "deny", "cancel_task"] });
    expect(String(req.payload.command_display)).toContain("touch ");
    await rig.call("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "deny", granted_permission_ids: [] });
    const done = await rig.waitTerminal(id, 60_000);
    expect(done.status).toBe("succeeded");
    expect(String(done.final_response)).toContain("denied");
    expect(fs.existsSync(target)).toBe(false);
  }, 90_000);

  test("Bash approval, approve_session: runs, and the rule is kept in the session only (no settings file written)", async () => {
    const target = path.join(rig.workdir, "session.txt");
    const before = fs.readFileSync(path.join(rig.workdir, ".claude", "settings.local.json"), "utf8");
    const id = await rig.submit("claude", `SHELL touch ${target}`);
    const req = await waitInteraction(id, "waiting_for_approval");
    await rig.call("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "approve_session", granted_permission_ids: [] });
    const done = await rig.waitTerminal(id, 60_000);
    expect(done.status).toBe("succeeded");
    expect(fs.existsSync(target)).toBe(true);
    expect(fs.readFileSync(path.join(rig.workdir, ".claude", "settings.local.json"), "utf8")).toBe(before);
    expect(fs.readdirSync(path.join(rig.workdir, ".claude"))).toEqual(["settings.local.json"]);
  }, 90_000);

  test("AskUserQuestion becomes a question; the answer goes back keyed by question text", async () => {
    const id = await rig.submit("claude", "ASK which colour?");
    const req = await waitInteraction(id, "waiting_for_question");
    expect(req.payload).toEqual({
      questions: [
        {
          question_id: "q0",
          prompt: "Colour: which colour?",
          options: [
            { option_id: "Red", label: "Red", description: "the warm one" },
            { option_id: "Blue", label: "Blue", description: "the cool one" },
          ],
          multi_select: false,
          allow_free_text: true,
        },
      ],
    });
    await rig.call("task.question.answer", { task_id: id, request_id: req.request_id, answers: [{ question_id: "q0", selected_option_ids: ["Blue"], text: "navy" }] });
    const done = await rig.waitTerminal(id, 60_000);
    expect(done.status).toBe("succeeded");
    expect(String(done.final_response)).toContain('"which colour?"="Blue, navy"');
  }, 90_000);

  test("cancel mid-tool: no live steering, terminal first, zero surviving processes (checked in /proc)", async () => {
    // Claude Code refuses a bare `sleep N`; a compound command runs (docs/maintainers/testing.md).
    // Claude Code 2.1.332 classifies echo/sleep as read-only and runs them without asking.
    const id = await rig.submit("claude", "SHELL echo start; sleep 41; echo end");
    await rig.waitFor(id, (t) => t.status === "running" && processesWithHome(home).some((p) => p.cmd.includes("sleep 41")), 30_000);
    expect(await rig.fail("task.message.send", { task_id: id, message: "hurry up" })).toBe("AGENT_PROVIDER_ERROR");
    const live = processesWithHome(home);
    expect(live.length).toBeGreaterThanOrEqual(2);
    await rig.call("task.cancel", { task_id: id });
    expect((await rig.call("task.get", { task_id: id })).status).toBe("cancelled");
    expect(await waitUntil(() => processesWithHome(home).length === 0, 10_000)).toBe(true);
    expect(live.filter((p) => pidAlive(p.pid))).toEqual([]);
    const next = await rig.submit("claude", "after cancel");
    expect((await rig.waitTerminal(next, 60_000)).final_response).toBe("echo: after cancel");
  }, 90_000);

  test("cancel while an approval is pending: the tool never runs, the CLI is gone", async () => {
    const target = path.join(rig.workdir, "never.txt");
    const id = await rig.submit("claude", `SHELL touch ${target}`);
    const req = await waitInteraction(id, "waiting_for_approval");
    await rig.call("task.cancel", { task_id: id });
    expect((await rig.call("task.get", { task_id: id })).status).toBe("cancelled");
    expect(await waitUntil(() => processesWithHome(home).length === 0, 10_000)).toBe(true);
    expect(fs.existsSync(target)).toBe(false);
    expect(await rig.fail("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "approve_once", granted_permission_ids: [] })).toBe("REQUEST_STALE");
  }, 60_000);

  test("a request-scoped model reaches the Messages API for that task", async () => {
    const id = await rig.submit("claude", "which model", { model: "claude-fixture-9" });
    const done = await rig.waitTerminal(id, 60_000);
    expect(done.status).toBe("succeeded");
    const asked = model.requests.filter((r) => r.tools.length > 0 && r.prompts.at(-1) === "which model");
    expect(asked.length).toBeGreaterThan(0);
    expect(new Set(asked.map((r) => r.model))).toEqual(new Set(["claude-fixture-9"]));
  }, 90_000);
});
