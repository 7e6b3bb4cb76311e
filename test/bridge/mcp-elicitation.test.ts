// Approvals that go to the human. A client declaring form elicitation gets each pending approval
// or question of a task as a form offering exactly the request's options (an input_required round
// in the 2026 era, elicitation/create in the 2025 one); the test's "human" approves, rejects,
// declines (the request stays pending) and forges an option (refused). The task history records
// who decided. Under `approvals = "terminal"` the assistant's tools are refused and only
// `serverfs tasks approve` answers.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { cleanup, startHarness, type Harness } from "./helpers.ts";
import { code, type ElicitAnswer, ok, open, type Session, waitFor } from "./mcp-clients.ts";

const CLI = path.resolve(import.meta.dir, "../../src/cli.ts");
let h: Harness;

function writeConfig(name: string, approvals: string): string {
  const file = path.join(h.root, name);
  fs.writeFileSync(
    file,
    `[server]\nstate_dir = "${h.stateDir}"\n` +
      `[[workdirs]]\nalias = "repo"\npath = "${h.workdirs.repo}"\nread_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n` +
      `[agent]\nenabled = true\nenable_fake_runtime = true\napprovals = "${approvals}"\n`,
  );
  return file;
}

beforeAll(async () => {
  h = await startHarness({ aliases: ["repo"], agent: { max_active_tasks: 8 } });
});
afterAll(async () => {
  await h.stop();
  cleanup(h.root);
});

type Event = { event_type: string; payload: Record<string, unknown> };
async function events(s: Session, id: string, type: string): Promise<Array<Record<string, unknown>>> {
  const all = ok(await s.call("read_agent_task_events", { task_id: id, limit: 500 })).events as Event[];
  return all.filter((e) => e.event_type === type).map((e) => e.payload);
}

/** Submit a fake task and wait, with no form answered yet, until it is past starting. */
async function submit(s: Session, prompt: string): Promise<string> {
  const id = ok(await s.call("submit_agent_task", { runtime: "fake", workdir: "repo", prompt })).task_id as string;
  return id;
}

describe.each([["v1"], ["legacy"], ["pin"]] as const)("elicitation, client %s", (mode) => {
  // One serve per client for both tests: each test queues its own answers and reads only the
  // forms shown since it started.
  const answers: ElicitAnswer[] = [];
  let s: Session;
  beforeAll(async () => {
    s = await open(mode, writeConfig(`elicit-${mode}.toml`, "auto"), { answers, reuseVerdict: true });
  });
  afterAll(() => s.close());
  // A test that failed part-way leaves no answer behind for the next.
  beforeEach(() => {
    answers.length = 0;
  });

  test("approve, reject, decline (stays pending) and a forged option (refused); the history says the human decided", async () => {
    const logFrom = s.stderr().length;
    const runtimes = ok(await s.call("list_agent_runtimes"));
    expect(runtimes.approvals).toMatchObject({ setting: "auto", in_force: "elicitation" });

    // Approve.
    const a = await submit(s, "approval:make build");
    answers.push({ action: "accept", content: { decision: "approve_once" } });
    let v = ok(await s.call("get_agent_task", { task_id: a, wait_seconds: 20 }));
    while (!v.human_answer) v = ok(await s.call("get_agent_task", { task_id: a, wait_seconds: 20 }));
    expect(v.human_answer).toMatchObject({ kind: "approval", outcome: "answered", decided_by: "human" });
    const form = s.forms.at(-1)!;
    expect(form.message).toContain("make build");
    const offered = (form.requestedSchema.properties as Record<string, { oneOf: Array<{ const: string }> }>).decision!.oneOf.map((o) => o.const);
    expect(offered).toEqual(["approve_once", "approve_session", "deny", "cancel_task"]);
    v = await waitFor(s, a, ["succeeded", "failed"]);
    expect(v.final_response).toBe("approval=approve_once");
    expect(await events(s, a, "approval.resolved")).toEqual([{ decision: "approve_once", decided_by: "human", advice: { option_id: null, rule: "builtin:no-match", followed: null } }]);
    // The asking round writes its own audit line, marked, like every other call.
    expect(s.stderr().slice(logFrom)).toMatch(/"tool":"get_agent_task",[^\n]*"success":true,"input_required":true/);

    // The assistant may not answer what the human is asked.
    const b = await submit(s, "approval:rm -rf build");
    answers.push({ action: "decline" });
    v = ok(await s.call("get_agent_task", { task_id: b, wait_seconds: 20 }));
    while (!v.human_answer) v = ok(await s.call("get_agent_task", { task_id: b, wait_seconds: 20 }));
    // Decline: nothing decided, the same request still pending.
    expect(v.human_answer).toMatchObject({ outcome: "declined", decided_by: "human" });
    expect(v.status).toBe("waiting_for_approval");
    const rid = (v.pending_request as { request_id: string }).request_id;
    expect((v.human_answer as { request_id: string }).request_id).toBe(rid);
    expect(code(await s.call("respond_agent_approval", { task_id: b, request_id: rid, decision: "approve_once" }))).toBe("APPROVAL_PATH_NOT_ALLOWED");

    // Dismissed (cancel): still pending.
    answers.push({ action: "cancel" });
    v = ok(await s.call("get_agent_task", { task_id: b }));
    expect([v.status, (v.human_answer as { outcome: string }).outcome]).toEqual(["waiting_for_approval", "cancelled"]);

    // Forged option: refused with its code, the request stays pending.
    answers.push({ action: "accept", content: { decision: "approve_forever" } });
    expect(code(await s.call("get_agent_task", { task_id: b }))).toBe("INVALID_APPROVAL_DECISION");
    answers.push({ action: "accept", content: { decision: "deny" } });
    v = ok(await s.call("get_agent_task", { task_id: b }));
    expect((v.human_answer as { request_id: string; outcome: string }).outcome).toBe("answered");
    v = await waitFor(s, b, ["succeeded", "failed"]);
    expect(v.final_response).toBe("approval=deny");
    expect(await events(s, b, "approval.resolved")).toEqual([{ decision: "deny", decided_by: "human", advice: { option_id: null, rule: "builtin:no-match", followed: null } }]);
    expect(answers).toEqual([]);
  }, 90_000);

  test("a question is a form with its options; the answer is the human's", async () => {
    const firstForm = s.forms.length;
    answers.push({ action: "accept", content: { q0: "a" } });
    const q = await submit(s, "question:which one?");
    let v = ok(await s.call("get_agent_task", { task_id: q, wait_seconds: 20 }));
    while (!v.human_answer) v = ok(await s.call("get_agent_task", { task_id: q, wait_seconds: 20 }));
    expect(v.human_answer).toMatchObject({ kind: "question", outcome: "answered" });
    const props = s.forms[firstForm]!.requestedSchema.properties as Record<string, { title: string; oneOf?: Array<{ const: string }> }>;
    expect(props.q0!.title).toBe("which one?");
    v = await waitFor(s, q, ["succeeded", "failed"]);
    expect(JSON.parse(v.final_response as string)).toEqual({ answers: [{ question_id: "q1", selected_option_ids: ["a"] }] });
    expect(await events(s, q, "question.answered")).toEqual([{ question_count: 1, decided_by: "human", advice: { option_id: null, rule: "builtin:question", followed: null } }]);
    expect(answers).toEqual([]);
  }, 60_000);
});

describe('approvals = "terminal"', () => {
  test("respond_agent_approval is refused with a coded error; serverfs tasks approve answers", async () => {
    const config = writeConfig("terminal.toml", "terminal");
    // The client supports forms, and still is never asked: only the terminal answers.
    const s = await open("pin", config, { answers: [], reuseVerdict: true });
    try {
      expect(ok(await s.call("list_agent_runtimes")).approvals).toMatchObject({ setting: "terminal", in_force: "terminal" });
      const id = await submit(s, "approval:deploy");
      const v = await waitFor(s, id, ["waiting_for_approval"]);
      expect(s.forms).toEqual([]);
      const rid = (v.pending_request as { request_id: string }).request_id;
      const refused = await s.call("respond_agent_approval", { task_id: id, request_id: rid, decision: "approve_once" });
      expect(code(refused)).toBe("APPROVAL_PATH_NOT_ALLOWED");
      expect(refused.content[0]!.text).toContain("serverfs tasks approve");
      expect(ok(await s.call("get_agent_task", { task_id: id })).status).toBe("waiting_for_approval");

      const p = Bun.spawn([process.execPath, CLI, "tasks", "approve", id, rid, "approve_session", "--config", config], { stdout: "pipe", stderr: "pipe" });
      expect(await p.exited).toBe(0);
      const done = await waitFor(s, id, ["succeeded", "failed"]);
      expect(done.final_response).toBe("approval=approve_session");
      expect(await events(s, id, "approval.resolved")).toEqual([{ decision: "approve_session", decided_by: "operator", advice: { option_id: null, rule: "builtin:no-match", followed: null } }]);
    } finally {
      await s.close();
    }
  }, 60_000);
});

describe("the other settings", () => {
  test('"elicitation" without a client form: nobody in the session answers; "tools" never shows a form', async () => {
    const noForms = await open("v1", writeConfig("elicitation-only.toml", "elicitation"));
    try {
      expect(ok(await noForms.call("list_agent_runtimes")).approvals).toMatchObject({ setting: "elicitation", in_force: "none" });
      const id = await submit(noForms, "approval:x");
      const v = await waitFor(noForms, id, ["waiting_for_approval"]);
      const rid = (v.pending_request as { request_id: string }).request_id;
      expect(code(await noForms.call("respond_agent_approval", { task_id: id, request_id: rid, decision: "approve_once" }))).toBe("APPROVAL_PATH_NOT_ALLOWED");
      ok(await noForms.call("cancel_agent_task", { task_id: id }));
    } finally {
      await noForms.close();
    }
    const tools = await open("pin", writeConfig("tools.toml", "tools"), { answers: [], reuseVerdict: true });
    try {
      expect(ok(await tools.call("list_agent_runtimes")).approvals).toMatchObject({ setting: "tools", in_force: "tools" });
      const id = await submit(tools, "approval:y");
      const rid = ((await waitFor(tools, id, ["waiting_for_approval"])).pending_request as { request_id: string }).request_id;
      ok(await tools.call("respond_agent_approval", { task_id: id, request_id: rid, decision: "deny" }));
      expect((await waitFor(tools, id, ["succeeded", "failed"])).final_response).toBe("approval=deny");
      expect(tools.forms).toEqual([]);
    } finally {
      await tools.close();
    }
  }, 60_000);
});
