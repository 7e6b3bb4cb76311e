// Form questions from a real ACP agent (test/fixtures/acp/form-asker.ts, on the SDK over stdio)
// through the real Bridge service: the capability serverfs advertises, the pending question built
// from the agent's schema, an invalid answer refused with the question still pending, accept /
// decline / cancel reaching the agent, schemas outside the subset and URL mode declined with their
// coded reasons, and `$/cancel_request` withdrawing a pending permission or question (stale, a
// late answer REQUEST_STALE, the history saying withdrawn).
import { afterEach, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { startAcpRig, waitInteraction, type ServiceRig } from "../service-rig.ts";
import { profileFor } from "./harness.ts";

/** What the advisor says of every question (docs/agent-bridge.md, "Approval advice"): nothing to pick. */
const QUESTION_ADVICE = { followed: null, option_id: null, rule: "builtin:question" };

let rig: ServiceRig | null = null;
afterEach(async () => {
  await rig?.stop();
  rig = null;
});

const asker = () => profileFor("form-asker.ts", [], { id: "asker" });
const RT = "acp-asker";

async function start(): Promise<ServiceRig> {
  rig = await startAcpRig([asker()]);
  return rig;
}

async function finalOf(r: ServiceRig, id: string): Promise<unknown> {
  const done = await r.waitTerminal(id);
  expect({ status: done.status, error: done.error_code }).toEqual({ status: "succeeded", error: null });
  return JSON.parse(done.final_response as string);
}

describe("ACP form elicitation through the Bridge", () => {
  test("serverfs advertises form elicitation and never URL mode; the runtime says it asks questions", async () => {
    const r = await start();
    const id = await r.submit(RT, "caps");
    expect(await finalOf(r, id)).toEqual({ form: {} });
    const info = ((await r.call("runtime.list")).runtimes as Array<Record<string, unknown>>)[0]!;
    expect(info.interactive_question).toBe(true);
  });

  test("a valid form is a pending question; an invalid answer is refused and it stays pending; the typed answer reaches the agent", async () => {
    const r = await start();
    const id = await r.submit(RT, "ask profile");
    const pending = await waitInteraction(r, id, "waiting_for_question", 30_000);
    expect(pending.kind).toBe("question");
    const form = pending.payload.form as { message: string; schema: { properties: Array<{ name: string }>; required: string[] } };
    expect(form.message).toBe("Please fill in the profile form");
    expect(form.schema.properties.map((p) => p.name)).toEqual(["name", "count", "channel", "targets", "notify", "contact"]);
    expect(form.schema.required).toEqual(["name", "count", "channel"]);
    const questions = pending.payload.questions as Array<Record<string, unknown>>;
    expect(questions.find((q) => q.question_id === "channel")).toEqual({
      question_id: "channel",
      prompt: "Channel (one choice, required)",
      options: [
        { option_id: "stable", label: "Stable" },
        { option_id: "beta", label: "Beta" },
      ],
      multi_select: false,
      allow_free_text: false,
    });
    const base = { task_id: id, request_id: pending.request_id };
    // Out of range, too short, missing a required property, an unknown property, a bad email, decline by a tool without action: all refused.
    const refusals = [
      [{ question_id: "name", text: "v1" }, { question_id: "count", text: "12" }, { question_id: "channel", selected_option_ids: ["beta"] }],
      [{ question_id: "name", text: "v" }, { question_id: "count", text: "2" }, { question_id: "channel", selected_option_ids: ["beta"] }],
      [{ question_id: "name", text: "v1" }, { question_id: "count", text: "2" }],
      [{ question_id: "name", text: "v1" }, { question_id: "count", text: "2" }, { question_id: "channel", selected_option_ids: ["beta"] }, { question_id: "ghost", text: "x" }],
      [{ question_id: "name", text: "v1" }, { question_id: "count", text: "2" }, { question_id: "channel", selected_option_ids: ["beta"] }, { question_id: "contact", text: "not-an-address" }],
      [{ question_id: "name", text: "v1" }, { question_id: "count", text: "two" }, { question_id: "channel", selected_option_ids: ["beta"] }],
    ];
    for (const answers of refusals) expect(await r.fail("task.question.answer", { ...base, answers })).toBe("INVALID_QUESTION_ANSWER");
    expect(await r.fail("task.question.answer", { ...base, answers: [{ question_id: "name", text: "v1" }], action: "decline" })).toBe("INVALID_QUESTION_ANSWER");
    expect(await r.fail("task.question.answer", { ...base, answers: [], action: "maybe" })).toBe("INVALID_QUESTION_ANSWER");
    const still = await r.call("task.get", { task_id: id });
    expect([still.status, (still.pending_request as { request_id: string }).request_id]).toEqual(["waiting_for_question", pending.request_id]);

    await r.call("task.question.answer", {
      ...base,
      decided_by: "operator",
      answers: [
        { question_id: "name", text: "v1.2" },
        { question_id: "count", text: "3" },
        { question_id: "channel", selected_option_ids: ["beta"] },
        { question_id: "targets", selected_option_ids: ["linux", "windows"] },
        { question_id: "notify", selected_option_ids: ["true"] },
        { question_id: "contact", text: "ops@example.com" },
      ],
    });
    expect(await finalOf(r, id)).toEqual({
      action: "accept",
      content: { name: "v1.2", count: 3, channel: "beta", targets: ["linux", "windows"], notify: true, contact: "ops@example.com" },
    });
    const answered = (await r.events(id)).filter((e) => e.event_type === "question.answered").map((e) => e.payload);
    expect(answered).toEqual([{ question_count: 6, action: "accept", decided_by: "operator", advice: QUESTION_ADVICE }]);
    expect(await r.fail("task.question.answer", { ...base, answers: [], action: "decline" })).toMatch(/^REQUEST_(STALE|ALREADY_RESOLVED)$/);
  });

  test.each([["decline"], ["cancel"]] as const)("%s reaches the agent as ACP's own action", async (action) => {
    const r = await start();
    const id = await r.submit(RT, "ask confirm");
    const pending = await waitInteraction(r, id, "waiting_for_question", 30_000);
    expect(pending.payload.questions).toEqual([]);
    await r.call("task.question.answer", { task_id: id, request_id: pending.request_id, answers: [], action });
    expect(await finalOf(r, id)).toEqual({ action });
    const answered = (await r.events(id)).filter((e) => e.event_type === "question.answered").map((e) => e.payload);
    expect(answered).toEqual([{ question_count: 0, action, advice: QUESTION_ADVICE }]);
  });

  test.each([
    ["ask pattern", "ELICITATION_SCHEMA_UNSUPPORTED", "unsupported_keyword"],
    ["ask nested", "ELICITATION_SCHEMA_UNSUPPORTED", "nested_schema"],
    ["url", "ELICITATION_MODE_UNSUPPORTED", "url_mode_closed"],
  ])("%s is declined with its coded reason, never asked", async (prompt, code, reason) => {
    const r = await start();
    const id = await r.submit(RT, prompt);
    const answer = (await finalOf(r, id)) as { action: string; meta: { serverfs: Record<string, unknown> } };
    expect(answer.action).toBe("decline");
    expect(answer.meta.serverfs).toMatchObject({ code, reason });
    const events = await r.events(id);
    expect(events.filter((e) => e.event_type === "acp.elicitation_declined").map((e) => e.payload)).toEqual([{ code, reason }]);
    expect(events.some((e) => e.event_type === "question.requested")).toBe(false);
  });

  test.each([
    ["withdraw-permission", "waiting_for_approval", "task.approval.respond", { option_id: "yes" }],
    ["withdraw-form", "waiting_for_question", "task.question.answer", { answers: [], action: "cancel" }],
  ] as const)("$/cancel_request from the agent: %s goes stale, leaves every pending list, and a late answer is stale", async (script, status, method, answer) => {
    const r = await start();
    const id = await r.submit(RT, script);
    const pending = await waitInteraction(r, id, status, 30_000);
    fs.writeFileSync(path.join(r.workdir, "withdraw-now"), "");
    // The agent heard -32800 for its withdrawn request and finished its turn.
    const done = await r.waitTerminal(id);
    expect([done.status, done.final_response, done.pending_request_id, done.pending_request]).toEqual(["succeeded", "withdrawn -32800", null, undefined]);
    const listed = (await r.call("task.list", {})).tasks as Array<{ task_id: string; pending_request_id: string | null }>;
    expect(listed.find((t) => t.task_id === id)!.pending_request_id).toBeNull();
    const stale = (await r.events(id)).filter((e) => e.event_type === "interaction.stale").map((e) => e.payload);
    expect(stale).toEqual([{ request_id: pending.request_id, reason: "withdrawn" }]);
    const row = r.store.getInteraction(pending.request_id)!;
    expect([row.status, row.resolution_json]).toEqual(["stale", JSON.stringify({ withdrawn: true })]);
    expect(await r.fail(method, { task_id: id, request_id: pending.request_id, ...answer })).toBe("REQUEST_STALE");
  });
});
