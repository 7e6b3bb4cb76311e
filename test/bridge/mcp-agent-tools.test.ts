// The ten agent tools through a real `serverfs serve` process (MCP over stdio) talking to a real
// Bridge: surface and annotations, MCP-side authorization before any RPC, a full approval round
// trip, long-poll waits with progress notifications, and AGENT_BRIDGE_UNAVAILABLE.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import path from "node:path";
import { connectServe, type ServeClient } from "../support/mcp.ts";
import { closeHarness, startHarness, turnCount, type Harness } from "./helpers.ts";

let h: Harness;
let client: Client;
let config: string;

function configText(stateDir: string, repo: string, ro: string): string {
  return (
    `[server]\nstate_dir = "${stateDir}"\n` +
    `[[workdirs]]\nalias = "repo"\npath = "${repo}"\nread_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n` +
    `[[workdirs]]\nalias = "docs"\npath = "${ro}"\n` +
    `[agent]\nenabled = true\nenable_fake_runtime = true\nmax_active_tasks = 8\n`
  );
}

function connect(cfg: string): Promise<ServeClient> {
  return connectServe({ args: ["--config", cfg], clientName: "bridge-test" });
}

beforeAll(async () => {
  // The Bridge and serve read one file, as in production (a Bridge on another configuration refuses submits).
  h = await startHarness({ aliases: ["repo", "docs"], toml: ({ stateDir, workdirs }) => configText(stateDir, workdirs.repo!, workdirs.docs!) });
  fs.mkdirSync(path.join(h.workdirs.repo!, "src"));
  fs.writeFileSync(path.join(h.workdirs.repo!, "file.txt"), "x");
  fs.mkdirSync(path.join(h.workdirs.repo!, ".hidden"));
  config = h.configPath;
  ({ client } = await connect(config));
});
afterAll(async () => {
  await client.close();
  await closeHarness(h);
});

async function call(name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}
function ok(r: CallToolResult): Record<string, unknown> {
  if (r.isError) throw new Error(`tool error: ${JSON.stringify(r.content)}`);
  return r.structuredContent as Record<string, unknown>;
}
function code(r: CallToolResult): string {
  expect(r.isError).toBe(true);
  return (r.structuredContent as { code: string }).code;
}

describe("surface", () => {
  test("ten agent tools with the reference annotations", async () => {
    const tools = (await client.listTools()).tools;
    const byName = new Map(tools.map((t) => [t.name, t]));
    const expected: Record<string, [boolean, boolean, boolean]> = {
      list_agent_runtimes: [true, false, true],
      list_agent_models: [true, false, true],
      get_agent_task: [true, false, true],
      read_agent_task_events: [true, false, true],
      read_agent_task_result: [true, false, true],
      submit_agent_task: [false, true, false],
      respond_agent_approval: [false, true, true],
      answer_agent_question: [false, false, true],
      send_agent_message: [false, true, false],
      cancel_agent_task: [false, true, true],
    };
    for (const [name, [ro, destructive, idem]] of Object.entries(expected)) {
      const a = byName.get(name)?.annotations;
      expect([name, a?.readOnlyHint, a?.destructiveHint, a?.idempotentHint]).toEqual([name, ro, destructive, idem]);
    }
    expect(byName.get("submit_agent_task")!.description).toContain("does not weaken or bypass provider safety checks");
    expect(byName.get("send_agent_message")!.description).toContain("without expanding its authorized scope");
    // The success branch of get_agent_task's output (the other is the coded error).
    const taskOutput = (byName.get("get_agent_task")!.outputSchema as unknown as { anyOf: Array<{ properties?: Record<string, unknown>; required?: string[] }> }).anyOf[0]!;
    expect(taskOutput.properties?.last_event_at).toMatchObject({ type: ["string", "null"] });
    expect(taskOutput.required).toContain("last_event_at");
    const runtimes = ok(await call("list_agent_runtimes"));
    expect((runtimes.runtimes as Array<{ name: string }>).map((r) => r.name)).toEqual(["fake"]);
  });
});

describe("submit authorization before any RPC", () => {
  test("each refusal has its code and starts no provider", async () => {
    const before = turnCount(h.turnLog);
    const base = { runtime: "fake", workdir: "repo", prompt: "complete:x" };
    expect(code(await call("submit_agent_task", { ...base, workdir: "nope" }))).toBe("WORKDIR_NOT_FOUND");
    expect(code(await call("submit_agent_task", { ...base, workdir: "docs" }))).toBe("AGENT_DISABLED");
    expect(code(await call("submit_agent_task", { ...base, runtime: "codex" }))).toBe("AGENT_RUNTIME_NOT_ALLOWED");
    expect(code(await call("submit_agent_task", { ...base, path: "file.txt" }))).toBe("NOT_A_DIRECTORY");
    expect(code(await call("submit_agent_task", { ...base, path: "missing" }))).toBe("PATH_NOT_FOUND");
    expect(code(await call("submit_agent_task", { ...base, path: ".hidden" }))).toBe("HIDDEN_PATH_NOT_ALLOWED");
    expect(code(await call("submit_agent_task", { ...base, path: "../x" }))).not.toBe("INTERNAL_ERROR");
    expect(code(await call("submit_agent_task", { ...base, profile: "root" }))).toBe("INVALID_ARGUMENT");
    expect(code(await call("submit_agent_task", { ...base, shell: "rm -rf /" }))).toBe("INVALID_ARGUMENT");
    expect(turnCount(h.turnLog)).toBe(before);
  });
});

describe("tasks through MCP", () => {
  test("submit in a subdirectory, approve, wait, read events; long wait returns on the status change", async () => {
    const sub = ok(await call("submit_agent_task", { runtime: "fake", workdir: "repo", path: "src", prompt: "approval:make test", correlation_id: "mcp-1" }));
    expect(sub.status).toBe("queued");
    const id = sub.task_id as string;
    // Each wait is the longest allowed (50 s, over this test's 30 s timeout): the test can only
    // pass if every wait returns on the status change, however slow the machine.
    let view = ok(await call("get_agent_task", { task_id: id, wait_seconds: 50 }));
    for (let i = 0; i < 5 && view.status !== "waiting_for_approval"; i++) view = ok(await call("get_agent_task", { task_id: id, wait_seconds: 50 }));
    expect(view.status).toBe("waiting_for_approval");
    expect(view.relative_cwd).toBe("src");
    const req = view.pending_request as { request_id: string };
    expect(code(await call("respond_agent_approval", { task_id: id, request_id: req.request_id }))).toBe("INVALID_APPROVAL_DECISION");
    expect(ok(await call("respond_agent_approval", { task_id: id, request_id: req.request_id, decision: "approve_once" }))).toEqual({
      task_id: id,
      request_id: req.request_id,
      resolved: true,
      correlation_id: "mcp-1",
    });
    view = ok(await call("get_agent_task", { task_id: id, wait_seconds: 20 }));
    if (view.status !== "succeeded") view = ok(await call("get_agent_task", { task_id: id, wait_seconds: 20 }));
    expect([view.status, view.final_response]).toEqual(["succeeded", "approval=approve_once"]);
    const ev = ok(await call("read_agent_task_events", { task_id: id, limit: 500 }));
    expect((ev.events as Array<{ correlation_id: string }>).every((e) => e.correlation_id === "mcp-1")).toBe(true);
    // last_event_at is the time of the task's newest event.
    expect(view.last_event_at).toBe((ev.events as Array<{ created_at: string }>).at(-1)!.created_at);
    expect(code(await call("read_agent_task_result", { task_id: id }))).toBe("AGENT_RESULT_NOT_RETRIEVABLE");
    expect(ok(await call("cancel_agent_task", { task_id: id })).status).toBe("succeeded");
  });

  test("option_id approvals and questions", async () => {
    const id = ok(await call("submit_agent_task", { runtime: "fake", workdir: "repo", prompt: "approval-options:npm i" })).task_id as string;
    let view = ok(await call("get_agent_task", { task_id: id, wait_seconds: 20 }));
    while (view.status !== "waiting_for_approval") view = ok(await call("get_agent_task", { task_id: id, wait_seconds: 20 }));
    const rid = (view.pending_request as { request_id: string }).request_id;
    expect(code(await call("respond_agent_approval", { task_id: id, request_id: rid, option_id: "forged" }))).toBe("INVALID_APPROVAL_DECISION");
    ok(await call("respond_agent_approval", { task_id: id, request_id: rid, option_id: "opt-allow-once" }));
    while (!["succeeded", "failed"].includes(view.status as string)) view = ok(await call("get_agent_task", { task_id: id, wait_seconds: 20 }));
    expect(view.final_response).toBe("option=opt-allow-once decision=approve_once");

    const q = ok(await call("submit_agent_task", { runtime: "fake", workdir: "repo", prompt: "question:which?" })).task_id as string;
    let qv = ok(await call("get_agent_task", { task_id: q, wait_seconds: 20 }));
    while (qv.status !== "waiting_for_question") qv = ok(await call("get_agent_task", { task_id: q, wait_seconds: 20 }));
    const qr = (qv.pending_request as { request_id: string }).request_id;
    ok(await call("answer_agent_question", { task_id: q, request_id: qr, answers: [{ question_id: "q1", selected_option_ids: ["a"] }] }));
    while (qv.status !== "succeeded") qv = ok(await call("get_agent_task", { task_id: q, wait_seconds: 20 }));
    expect(JSON.parse(qv.final_response as string)).toEqual({ answers: [{ question_id: "q1", selected_option_ids: ["a"] }] });
  });

  test("a wait with a progressToken gets progress notifications and returns when the task moves on", async () => {
    const id = ok(await call("submit_agent_task", { runtime: "fake", workdir: "repo", prompt: "approval:make wait" })).task_id as string;
    let view = ok(await call("get_agent_task", { task_id: id, wait_seconds: 50 }));
    while (view.status !== "waiting_for_approval") view = ok(await call("get_agent_task", { task_id: id, wait_seconds: 50 }));
    const rid = (view.pending_request as { request_id: string }).request_id;
    // The task waits on the approval, so the long wait sees no change until the first progress
    // notification arrives; only then is it approved. The wait asks for 50 s (one notification per
    // unchanged 5 s slice: 9 or more if it sat them all out), so fewer notifications mean it
    // returned on the change; its progress came while the task was provably unchanged.
    const progress: number[] = [];
    const approval: { sent?: Promise<CallToolResult> } = {};
    const r = (await client.callTool({ name: "get_agent_task", arguments: { task_id: id, wait_seconds: 50 } }, undefined, {
      onprogress: (p) => {
        progress.push(p.progress);
        approval.sent ??= call("respond_agent_approval", { task_id: id, request_id: rid, decision: "approve_once" });
      },
      timeout: 60_000,
    })) as CallToolResult;
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.length).toBeLessThan(9);
    expect(approval.sent).toBeDefined();
    expect(ok(await approval.sent!)).toMatchObject({ resolved: true });
    expect(["running", "succeeded"]).toContain((r.structuredContent as { status: string }).status);
    view = ok(await call("get_agent_task", { task_id: id, wait_seconds: 50 }));
    if (view.status !== "succeeded") view = ok(await call("get_agent_task", { task_id: id, wait_seconds: 50 }));
    expect([view.status, view.final_response]).toEqual(["succeeded", "approval=approve_once"]);
  }, 120_000);
});

describe("Bridge down", () => {
  test("agent tools answer AGENT_BRIDGE_UNAVAILABLE; file tools keep working", async () => {
    const other = path.join(h.root, "down.toml");
    fs.writeFileSync(other, configText(path.join(h.root, "no-bridge-state"), h.workdirs.repo!, h.workdirs.docs!));
    const down = await connect(other);
    try {
      const r = (await down.client.callTool({ name: "get_agent_task", arguments: { task_id: "agt_000000000000000000000000" } })) as CallToolResult;
      expect(code(r)).toBe("AGENT_BRIDGE_UNAVAILABLE");
      // The next step, without a host path: an MCP caller learns the command, never the config's location.
      expect((r.content as Array<{ text: string }>)[0]!.text).toBe(
        "AGENT_BRIDGE_UNAVAILABLE: Agent Bridge is not reachable; fix: start the Bridge: serverfs bridge --config FILE, or serverfs service start when its service is installed",
      );
      const l = (await down.client.callTool({ name: "list_workdirs", arguments: {} })) as CallToolResult;
      expect(l.isError).toBeFalsy();
    } finally {
      await down.client.close();
    }
  });
});
