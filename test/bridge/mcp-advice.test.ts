// Approval advice through MCP → serve → Bridge, with the operator's rules in the one TOML both
// load. Advice is shown in the human's form (text only: nothing preselected), in get_agent_task's
// pending_request, and in the history beside the decision; and it never answers anything: a
// request whose advice is "approve" stays pending until it times out when nobody answers.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { runCliAsync } from "../support/proc.ts";
import { cleanup, startHarness, type Harness } from "./helpers.ts";
import { type ElicitAnswer, ok, open, type Session, waitFor } from "./mcp-clients.ts";

let h: Harness;
/** A second Bridge whose requests expire after a second: only for the test that waits for expiry. */
let expiring: Harness;

const config = (timeout: string) => ({ stateDir, workdirs }: { stateDir: string; workdirs: Record<string, string> }) =>
  `[server]\nstate_dir = "${stateDir}"\n` +
  `[[workdirs]]\nalias = "repo"\npath = "${workdirs.repo}"\nread_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n` +
  `[agent]\nenabled = true\nenable_fake_runtime = true\napprovals = "auto"\n${timeout}` +
  `[[agent.advice_rules]]\nname = "builds"\nkind = "command"\ncommand_prefix = "make build"\nadvise = "allow_once"\nreason = "builds are routine"\n` +
  `[[agent.advice_rules]]\nname = "everything"\nadvise = "allow_always"\n`;

beforeAll(async () => {
  h = await startHarness({ toml: config("") });
  expiring = await startHarness({ toml: config("interaction_timeout_seconds = 1\n") });
});
afterAll(async () => {
  await h.stop();
  cleanup(h.root);
  await expiring.stop();
  cleanup(expiring.root);
});

type Event = { event_type: string; payload: Record<string, unknown> };
async function events(s: Session, id: string, type: string): Promise<Array<Record<string, unknown>>> {
  const all = ok(await s.call("read_agent_task_events", { task_id: id, limit: 500 })).events as Event[];
  return all.filter((e) => e.event_type === type).map((e) => e.payload);
}
const submit = async (s: Session, prompt: string) => ok(await s.call("submit_agent_task", { runtime: "fake", workdir: "repo", prompt })).task_id as string;

describe("advice in the human's form", () => {
  // One serve (a client that declares forms) for both tests: each test queues its own answers and
  // reads only the forms shown since it started.
  const answers: ElicitAnswer[] = [];
  let s: Session;
  beforeAll(async () => {
    s = await open("v1", h.configPath, { answers });
  });
  afterAll(() => s.close());
  // A test that failed part-way leaves no answer behind for the next.
  beforeEach(() => {
    answers.length = 0;
  });

  test("the form shows the advice as text and preselects nothing; a decline leaves the request pending; the history keeps advice beside the decision", async () => {
    const firstForm = s.forms.length;
    answers.push({ action: "decline" });
    const id = await submit(s, "approval:make build");
    let v = ok(await s.call("get_agent_task", { task_id: id, wait_seconds: 20 }));
    while (!v.human_answer) v = ok(await s.call("get_agent_task", { task_id: id, wait_seconds: 20 }));
    const form = s.forms[firstForm]!;
    expect(form.message).toContain('Advice (serverfs rule builds; you decide): "approve once". builds are routine: allow_once');
    const decision = (form.requestedSchema.properties as Record<string, Record<string, unknown>>).decision!;
    expect(decision.default).toBeUndefined();
    expect(JSON.stringify(form.requestedSchema)).not.toContain("default");
    // Declined: the advice to approve decided nothing.
    expect(v.status).toBe("waiting_for_approval");
    const pending = v.pending_request as { advice: unknown };
    expect(pending.advice).toEqual({ option_id: "approve_once", reason: "builds are routine: allow_once", rule: "builds" });
    answers.push({ action: "accept", content: { decision: "deny" } });
    v = ok(await s.call("get_agent_task", { task_id: id }));
    expect((v.human_answer as { outcome: string }).outcome).toBe("answered");
    v = await waitFor(s, id, ["succeeded", "failed"]);
    expect(v.final_response).toBe("approval=deny");
    expect(await events(s, id, "approval.requested")).toEqual([
      { request_id: expect.any(String), expires_at: expect.any(String), advice: { option_id: "approve_once", reason: "builds are routine: allow_once", rule: "builds" } },
    ]);
    expect(await events(s, id, "approval.resolved")).toEqual([
      { decision: "deny", decided_by: "human", advice: { option_id: "approve_once", rule: "builds", followed: false } },
    ]);
    expect(answers).toEqual([]);
  }, 90_000);

  test("a question's advice has option_id null; the form says there is no recommendation", async () => {
    const firstForm = s.forms.length;
    answers.push({ action: "accept", content: { q0: "a" } });
    const id = await submit(s, "question:which one?");
    let v = ok(await s.call("get_agent_task", { task_id: id, wait_seconds: 20 }));
    while (!v.human_answer) v = ok(await s.call("get_agent_task", { task_id: id, wait_seconds: 20 }));
    // The catch-all rule matches questions too, and still names no option.
    expect(s.forms[firstForm]!.message).toContain("Advice (serverfs rule everything; you decide): no recommendation.");
    v = await waitFor(s, id, ["succeeded", "failed"]);
    expect(await events(s, id, "question.answered")).toEqual([
      { question_count: 1, decided_by: "human", advice: { option_id: null, rule: "everything", followed: null } },
    ]);
    expect(answers).toEqual([]);
  }, 90_000);
});

describe("advice for the assistant", () => {
  /** One serve (a client without forms) on the first Bridge for the tests that use it. */
  let assistant: Session;
  beforeAll(async () => {
    assistant = await open("v1", h.configPath);
  });
  afterAll(() => assistant.close());

  test("advice that recommends approving never answers: unanswered, the request expires and the task is interrupted", async () => {
    const s = await open("v1", expiring.configPath);
    try {
      const id = await submit(s, "approval:curl https://example.com");
      // Nobody answers. The advice recommends approving; the request still only expires.
      const v = await waitFor(s, id, ["succeeded", "failed", "interrupted"], 20);
      expect({ status: v.status, code: v.error_code }).toEqual({ status: "interrupted", code: "AGENT_INTERACTION_TIMED_OUT" });
      expect(v.usage).toBeNull();
      // The operator's catch-all rule comes before the built-in network rule: first match wins.
      expect((await events(s, id, "approval.requested")).map((e) => e.advice)).toEqual([
        { option_id: "approve_session", reason: "the configured rule matched (any request): allow_always", rule: "everything" },
      ]);
      expect(await events(s, id, "approval.resolved")).toEqual([]);
      expect(await events(s, id, "approval.observed")).toEqual([]);
      expect(await events(s, id, "interaction.expired")).toHaveLength(1);
    } finally {
      await s.close();
    }
  }, 90_000);

  test("get_agent_task reports the agent's latest usage", async () => {
    const s = assistant;
    const id = await submit(s, "usage:");
    const v = await waitFor(s, id, ["succeeded", "failed"]);
    expect(v.final_response).toBe("usage");
    const usage = v.usage as Record<string, unknown>;
    expect({ used: usage.used, size: usage.size, cost: usage.cost }).toEqual({ used: 1500, size: 8000, cost: { amount: 0.25, currency: "USD" } });
    const show = await runCliAsync(["tasks", "show", id, "--config", h.configPath]);
    expect(show.stdout).toMatch(/^usage {18}1500 of 8000 tokens in context, cost 0\.25 USD \(at .+\)$/m);
  }, 90_000);

  test("serverfs tasks list and show print the pending advice", async () => {
    const s = assistant;
    const id = await submit(s, "approval:make build");
    let v = ok(await s.call("get_agent_task", { task_id: id, wait_seconds: 20 }));
    while (v.status !== "waiting_for_approval") v = ok(await s.call("get_agent_task", { task_id: id, wait_seconds: 20 }));
    const list = await runCliAsync(["tasks", "list", "--config", h.configPath]);
    expect(list.stdout).toMatch(new RegExp(`${id}[^\\n]*approve_once \\[builds\\]`));
    const show = await runCliAsync(["tasks", "show", id, "--config", h.configPath]);
    expect(show.stdout).toContain("  advice: option approve_once: builds are routine: allow_once [builds]");
    const json = JSON.parse((await runCliAsync(["tasks", "list", "--json", "--config", h.configPath])).stdout) as { tasks: Array<Record<string, unknown>> };
    expect(json.tasks.find((t) => t.task_id === id)!.pending_advice).toEqual({ option_id: "approve_once", reason: "builds are routine: allow_once", rule: "builds" });
    await runCliAsync(["tasks", "cancel", id, "--config", h.configPath]);
  }, 90_000);
});
