// An ACP agent's form question, end to end: MCP client → `serverfs serve` → Bridge → a real ACP
// agent (test/fixtures/acp/form-asker.ts, SDK over stdio) that writes what it got back into its
// final response. The human answers through MCP form elicitation (shown as the agent's own form;
// an invalid answer is refused and the question stays pending; decline reaches the agent), the
// assistant through answer_agent_question where `[agent] approvals = "tools"`, and the operator
// through `serverfs tasks answer` (also --decline) under `"terminal"`.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { cleanup, startHarness, type Harness } from "./helpers.ts";
import { code, type ElicitAnswer, ok, open, type Session, waitFor } from "./mcp-clients.ts";

/** What the advisor says of every question (docs/agent-bridge.md, "Approval advice"): nothing to pick. */
const QUESTION_ADVICE = { followed: null, option_id: null, rule: "builtin:question" };

const CLI = path.resolve(import.meta.dir, "../../src/cli.ts");
const FIXTURE = path.resolve(import.meta.dir, "../fixtures/acp/form-asker.ts");
let h: Harness;

function toml(stateDir: string, workdir: string, approvals: string): string {
  return (
    `[server]\nstate_dir = "${stateDir}"\n` +
    `[[workdirs]]\nalias = "repo"\npath = "${workdir}"\nread_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["acp-asker"]\n` +
    `[agent]\nenabled = true\napprovals = "${approvals}"\n` +
    `[[agent.acp_profiles]]\nid = "asker"\ncommand = "${process.execPath}"\nargs = ["${FIXTURE}"]\nuse_proxy = false\n`
  );
}

function config(name: string, approvals: string): string {
  const file = path.join(h.root, name);
  fs.writeFileSync(file, toml(h.stateDir, h.workdirs.repo!, approvals));
  return file;
}

beforeAll(async () => {
  h = await startHarness({ toml: ({ stateDir, workdirs }) => toml(stateDir, workdirs.repo!, "auto") });
});
afterAll(async () => {
  await h.stop();
  cleanup(h.root);
});

async function submit(s: Session, prompt: string): Promise<string> {
  // A finished task releases the workdir's writer lease once its agent's stop is proved: the next
  // submit waits for that (WORKDIR_BUSY until then), bounded by the test's timeout.
  for (;;) {
    const r = await s.call("submit_agent_task", { runtime: "acp-asker", workdir: "repo", prompt });
    if (!r.isError || code(r) !== "WORKDIR_BUSY") return ok(r).task_id as string;
    await Bun.sleep(50);
  }
}

async function answered(s: Session, id: string): Promise<Array<Record<string, unknown>>> {
  const all = ok(await s.call("read_agent_task_events", { task_id: id, limit: 500 })).events as Array<{ event_type: string; payload: Record<string, unknown> }>;
  return all.filter((e) => e.event_type === "question.answered").map((e) => e.payload);
}

async function finalOf(s: Session, id: string): Promise<unknown> {
  const v = await waitFor(s, id, ["succeeded", "failed", "interrupted", "cancelled"]);
  expect([v.status, v.error_code]).toEqual(["succeeded", null]);
  return JSON.parse(v.final_response as string);
}

/** get_agent_task until the human's form came back (the first calls may only see the task starting). */
async function untilHumanAnswer(s: Session, id: string): Promise<Record<string, unknown>> {
  let v = ok(await s.call("get_agent_task", { task_id: id, wait_seconds: 20 }));
  while (!v.human_answer) v = ok(await s.call("get_agent_task", { task_id: id, wait_seconds: 20 }));
  return v;
}

describe.each([["v1"], ["pin"]] as const)("MCP form elicitation, client %s", (mode) => {
  // One serve per client for both tests: each test queues its own answers and reads only the
  // forms shown since it started.
  const answers: ElicitAnswer[] = [];
  let s: Session;
  beforeAll(async () => {
    s = await open(mode, config(`auto-${mode}.toml`, "auto"), { answers, reuseVerdict: true });
  });
  afterAll(() => s.close());
  // A test that failed part-way leaves no answer behind for the next.
  beforeEach(() => {
    answers.length = 0;
  });

  test("the agent's form is shown as its form; an invalid answer is refused and it stays pending; the human's answer reaches the agent", async () => {
    const firstForm = s.forms.length;
    answers.push({ action: "accept", content: { f0: "v2", f1: 12, f2: "stable" } });
    const id = await submit(s, "ask profile");
    // count = 12 is above the agent's maximum of 9: the human's answer is refused with its code.
    let r = await s.call("get_agent_task", { task_id: id, wait_seconds: 20 });
    while (!r.isError) r = await s.call("get_agent_task", { task_id: id, wait_seconds: 20 });
    expect(code(r)).toBe("INVALID_QUESTION_ANSWER");
    expect(r.content[0]!.text).toContain("'count' must be at most 9");
    const form = s.forms[firstForm]!;
    expect(form.message).toBe(`The coding agent of task ${id} asks: Please fill in the profile form`);
    expect(form.requestedSchema).toEqual({
      type: "object",
      properties: {
        f0: { type: "string", title: "Release name", minLength: 2, maxLength: 20 },
        f1: { type: "integer", title: "How many", minimum: 1, maximum: 9 },
        f2: { type: "string", title: "Channel", oneOf: [{ const: "stable", title: "Stable" }, { const: "beta", title: "Beta" }] },
        f3: { type: "array", title: "Targets", items: { type: "string", enum: ["linux", "mac", "windows"] }, minItems: 1 },
        f4: { type: "boolean", title: "Notify", default: false },
        f5: { type: "string", title: "Contact", format: "email" },
      },
      required: ["f0", "f1", "f2"],
    });
    // The same question is still pending (asked of the Bridge directly: get_agent_task would show the form again).
    const still = await h.call("task.get", { task_id: id });
    expect(still.status).toBe("waiting_for_question");
    expect(s.forms.length).toBe(firstForm + 1);

    answers.push({ action: "accept", content: { f0: "v2", f1: 4, f2: "stable", f3: ["mac"], f4: true } });
    const v = await untilHumanAnswer(s, id);
    expect(v.human_answer).toMatchObject({ kind: "question", outcome: "answered", decided_by: "human" });
    expect(await finalOf(s, id)).toEqual({ action: "accept", content: { name: "v2", count: 4, channel: "stable", targets: ["mac"], notify: true } });
    expect(await answered(s, id)).toEqual([{ question_count: 5, action: "accept", decided_by: "human", advice: QUESTION_ADVICE }]);
    expect(answers).toEqual([]);
  }, 90_000);

  test("declining the form reaches the agent as ACP decline", async () => {
    answers.push({ action: "decline" });
    const id = await submit(s, "ask confirm");
    const v = await untilHumanAnswer(s, id);
    expect(v.human_answer).toMatchObject({ kind: "question", outcome: "declined" });
    expect(await finalOf(s, id)).toEqual({ action: "decline" });
    expect(await answered(s, id)).toEqual([{ question_count: 0, action: "decline", decided_by: "human", advice: QUESTION_ADVICE }]);
    expect(answers).toEqual([]);
  }, 60_000);
});

test('the assistant answers with answer_agent_question where approvals = "tools"; a misfit is refused', async () => {
  const s = await open("pin", config("tools.toml", "tools"), { reuseVerdict: true });
  try {
    const id = await submit(s, "ask profile");
    const v = await waitFor(s, id, ["waiting_for_question"]);
    const rid = (v.pending_request as { request_id: string }).request_id;
    const bad = await s.call("answer_agent_question", { task_id: id, request_id: rid, answers: [{ question_id: "name", text: "v3" }] });
    expect(code(bad)).toBe("INVALID_QUESTION_ANSWER");
    expect(bad.content[0]!.text).toContain("'count' is required");
    ok(
      await s.call("answer_agent_question", {
        task_id: id,
        request_id: rid,
        answers: [
          { question_id: "name", text: "v3" },
          { question_id: "count", text: "9" },
          { question_id: "channel", selected_option_ids: ["beta"] },
        ],
      }),
    );
    expect(await finalOf(s, id)).toEqual({ action: "accept", content: { name: "v3", count: 9, channel: "beta" } });
    expect(await answered(s, id)).toEqual([{ question_count: 3, action: "accept", decided_by: "assistant", advice: QUESTION_ADVICE }]);

    const c = await submit(s, "ask confirm");
    const w = await waitFor(s, c, ["waiting_for_question"]);
    ok(await s.call("answer_agent_question", { task_id: c, request_id: (w.pending_request as { request_id: string }).request_id, action: "cancel" }));
    expect(await finalOf(s, c)).toEqual({ action: "cancel" });
  } finally {
    await s.close();
  }
}, 90_000);

test('the operator answers with serverfs tasks answer (and --decline) where approvals = "terminal"', async () => {
  const file = config("terminal.toml", "terminal");
  const s = await open("pin", file, { reuseVerdict: true });
  const cli = async (...args: string[]) => {
    const p = Bun.spawn([process.execPath, CLI, "tasks", ...args, "--config", file], { stdout: "pipe", stderr: "pipe" });
    return { code: await p.exited, stdout: await new Response(p.stdout).text(), stderr: await new Response(p.stderr).text() };
  };
  try {
    const id = await submit(s, "ask profile");
    const rid = ((await waitFor(s, id, ["waiting_for_question"])).pending_request as { request_id: string }).request_id;
    expect(code(await s.call("answer_agent_question", { task_id: id, request_id: rid, action: "decline" }))).toBe("APPROVAL_PATH_NOT_ALLOWED");
    const shown = await cli("show", id);
    expect(shown.stdout).toContain("form: Please fill in the profile form");
    expect(shown.stdout).toContain("count: How many (whole number, ≥ 1, ≤ 9, required)");
    const refused = await cli("answer", id, rid, "channel=beta", "--text", "name=v4");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("INVALID_QUESTION_ANSWER");
    const done = await cli("answer", id, rid, "channel=beta", "targets=linux,mac", "--text", "name=v4", "--text", "count=1", "--text", "contact=a@b.example");
    expect([done.code, done.stderr]).toEqual([0, ""]);
    expect(await finalOf(s, id)).toEqual({ action: "accept", content: { name: "v4", count: 1, channel: "beta", targets: ["linux", "mac"], contact: "a@b.example" } });
    expect(await answered(s, id)).toEqual([{ question_count: 5, action: "accept", decided_by: "operator", advice: QUESTION_ADVICE }]);

    const d = await submit(s, "ask confirm");
    const drid = ((await waitFor(s, d, ["waiting_for_question"])).pending_request as { request_id: string }).request_id;
    expect((await cli("answer", d, drid, "--decline", "x=y")).code).toBe(2);
    expect((await cli("answer", d, drid, "--decline")).code).toBe(0);
    expect(await finalOf(s, d)).toEqual({ action: "decline" });
  } finally {
    await s.close();
  }
}, 90_000);
