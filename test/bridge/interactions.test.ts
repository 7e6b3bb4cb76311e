// Human interactions through a real Bridge and real provider processes: approvals (decision and
// ACP-style option_id), permissions, questions, staleness, cancel while waiting, expiry.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import { leaseFiles } from "../../src/bridge/deployment.ts";
import { eventually, pidAlive } from "../support/proc.ts";
import { cleanup, closeHarness, startHarness, type Harness } from "./helpers.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ aliases: ["repo", "other"], agent: { max_active_tasks: 8 } });
});
afterAll(() => closeHarness(h));
afterEach(async () => {
  const list = (await h.call("task.list", { limit: 500 })).tasks as Array<{ task_id: string; status: string }>;
  for (const t of list) if (!["succeeded", "failed", "cancelled", "interrupted"].includes(t.status)) await h.call("task.cancel", { task_id: t.task_id });
  await eventually(() => !(fs.existsSync(leaseFiles(h.registry, "repo").guardFile) || fs.existsSync(leaseFiles(h.registry, "other").guardFile)));
});

async function pending(taskId: string): Promise<Record<string, unknown>> {
  const t = await h.waitFor(taskId, (v) => v.pending_request_id !== null);
  return t.pending_request as Record<string, unknown>;
}

describe("approvals with decision", () => {
  test("round trip; duplicate → REQUEST_ALREADY_RESOLVED; late → REQUEST_STALE", async () => {
    const id = await h.submit("approval:rm -rf build");
    const req = await pending(id);
    const t = await h.call("task.get", { task_id: id });
    expect(t.status).toBe("waiting_for_approval");
    expect(req.kind).toBe("approval");
    expect(req.status).toBe("pending");
    expect((req.payload as Record<string, unknown>).available_decisions).toEqual(["approve_once", "approve_session", "deny", "cancel_task"]);
    expect((req.payload as Record<string, unknown>).command_display).toBe("rm -rf build");
    const rid = req.request_id as string;
    expect(await h.call("task.approval.respond", { task_id: id, request_id: rid, decision: "approve_once" })).toEqual({
      task_id: id,
      request_id: rid,
      resolved: true,
      correlation_id: null,
    });
    expect(await h.fail("task.approval.respond", { task_id: id, request_id: rid, decision: "deny" })).toBe("REQUEST_ALREADY_RESOLVED");
    const done = await h.waitTerminal(id);
    expect(done.final_response).toBe("approval=approve_once");
    const types = ((await h.call("task.events", { task_id: id })).events as Array<{ event_type: string }>).map((e) => e.event_type);
    expect(types).toEqual(expect.arrayContaining(["approval.requested", "approval.resolved", "approval.observed", "task.completed"]));
    expect(await h.fail("task.approval.respond", { task_id: id, request_id: rid, decision: "deny" })).toBe("REQUEST_ALREADY_RESOLVED");
  });

  test("two approvals in sequence", async () => {
    const id = await h.submit("approval-twice:make");
    const a = await pending(id);
    await h.call("task.approval.respond", { task_id: id, request_id: a.request_id, decision: "approve_session" });
    const b = await h.waitFor(id, (v) => v.pending_request_id !== null && v.pending_request_id !== a.request_id);
    await h.call("task.approval.respond", { task_id: id, request_id: b.pending_request_id, decision: "deny" });
    expect((await h.waitTerminal(id)).final_response).toBe("approvals=approve_session,deny");
  });

  test("validation order: unknown request, cross-task id, bad decision, permissions", async () => {
    const a = await h.submit("approval-perms:curl", { workdir: "repo" });
    const b = await h.submit("approval:ls", { workdir: "other" });
    const ra = (await pending(a)).request_id as string;
    const rb = (await pending(b)).request_id as string;
    expect(await h.fail("task.approval.respond", { task_id: a, request_id: "req_nope", decision: "deny" })).toBe("REQUEST_NOT_FOUND");
    expect(await h.fail("task.approval.respond", { task_id: a, request_id: rb, decision: "deny" })).toBe("REQUEST_STALE");
    expect(await h.fail("task.approval.respond", { task_id: a, request_id: ra, decision: "approve" })).toBe("INVALID_APPROVAL_DECISION");
    expect(await h.fail("task.approval.respond", { task_id: a, request_id: ra })).toBe("INVALID_APPROVAL_DECISION");
    expect(await h.fail("task.approval.respond", { task_id: a, request_id: ra, decision: "deny", option_id: "x" })).toBe("INVALID_APPROVAL_DECISION");
    expect(await h.fail("task.approval.respond", { task_id: a, request_id: ra, option_id: "opt-allow-once" })).toBe("INVALID_APPROVAL_DECISION");
    expect(await h.fail("task.approval.respond", { task_id: a, request_id: ra, decision: "approve_once", granted_permission_ids: ["root"] })).toBe(
      "PERMISSION_OUTSIDE_POLICY",
    );
    expect(await h.fail("task.approval.respond", { task_id: a, request_id: ra, decision: "approve_once", granted_permission_ids: [1] })).toBe("INVALID_REQUEST");
    expect(await h.fail("task.approval.respond", { task_id: "", request_id: ra, decision: "deny" })).toBe("INVALID_REQUEST");
    // A question id answered as approval and vice versa.
    expect(await h.fail("task.question.answer", { task_id: a, request_id: ra, answers: [{ question_id: "q1", selected_option_ids: ["a"] }] })).toBe(
      "INVALID_QUESTION_ANSWER",
    );
    await h.call("task.approval.respond", { task_id: a, request_id: ra, decision: "approve_once", granted_permission_ids: ["net"] });
    expect((await h.waitTerminal(a)).final_response).toBe("decision=approve_once granted=net");
    await h.call("task.approval.respond", { task_id: b, request_id: rb, decision: "deny" });
    expect((await h.waitTerminal(b)).final_response).toBe("approval=deny");
  });

  test("cancel while waiting stales the request and leaves no waiter", async () => {
    const id = await h.submit("approval:sleep");
    const rid = (await pending(id)).request_id as string;
    expect((await h.call("task.cancel", { task_id: id })).status).toBe("cancelled");
    const t = await h.call("task.get", { task_id: id });
    expect([t.status, t.pending_request_id]).toEqual(["cancelled", null]);
    expect(h.bridge.service.store.getInteraction(rid)!.status).toBe("stale");
    expect(await h.fail("task.approval.respond", { task_id: id, request_id: rid, decision: "approve_once" })).toBe("REQUEST_STALE");
  });

  test("decision cancel_task cancels the task", async () => {
    const id = await h.submit("approval:deploy");
    const rid = (await pending(id)).request_id as string;
    expect((await h.call("task.approval.respond", { task_id: id, request_id: rid, decision: "cancel_task" })).resolved).toBe(true);
    expect((await h.waitTerminal(id)).status).toBe("cancelled");
  });

  test("host paths in an approval payload are redacted", async () => {
    const id = await h.submit("approval-path:x");
    const req = await pending(id);
    const payload = req.payload as { file_changes: Array<{ path: string }>; blocked_path: string };
    expect(payload.file_changes).toEqual([{ path: "secret.txt" }]);
    expect(payload.blocked_path).toBe("<outside-workdir>");
    expect(JSON.stringify(req)).not.toContain(h.root);
    await h.call("task.approval.respond", { task_id: id, request_id: req.request_id, decision: "deny" });
    await h.waitTerminal(id);
  });
});

describe("approvals with response_options (ACP path)", () => {
  test("exact offered option round-trips; forged or mismatched answers are refused", async () => {
    const id = await h.submit("approval-options:npm i");
    const req = await pending(id);
    const payload = req.payload as Record<string, unknown>;
    expect(payload.response_options).toEqual([
      { option_id: "opt-allow-once", label: "Allow once", kind: "allow_once" },
      { option_id: "opt-allow-always", label: "Always allow", kind: "allow_always" },
      { option_id: "opt-reject", label: "Reject", kind: "reject_once" },
    ]);
    expect(payload.available_decisions).toEqual(["approve_once", "approve_session", "deny", "cancel_task"]);
    const rid = req.request_id as string;
    expect(await h.fail("task.approval.respond", { task_id: id, request_id: rid, option_id: "opt-forged" })).toBe("INVALID_APPROVAL_DECISION");
    expect(await h.fail("task.approval.respond", { task_id: id, request_id: rid, decision: "approve_session" })).toBe("INVALID_APPROVAL_DECISION");
    expect(await h.fail("task.approval.respond", { task_id: id, request_id: rid, decision: "cancel_task", option_id: "opt-reject" })).toBe(
      "INVALID_APPROVAL_DECISION",
    );
    await h.call("task.approval.respond", { task_id: id, request_id: rid, option_id: "opt-allow-always" });
    // allow_always is reported as what it is: the option id reaches the provider verbatim.
    expect((await h.waitTerminal(id)).final_response).toBe("option=opt-allow-always decision=approve_session");
    const ev = (await h.call("task.events", { task_id: id })).events as Array<{ event_type: string; payload: Record<string, unknown> }>;
    expect(ev.find((e) => e.event_type === "approval.resolved")!.payload).toEqual({
      decision: "approve_session",
      option_id: "opt-allow-always",
      option_kind: "allow_always",
      // "npm i" reaches the network: the advice was to reject, and the history shows it was not followed.
      advice: { option_id: "opt-reject", rule: "builtin:network", followed: false },
    });
  });

  test("decision cancel_task is still accepted on an option request", async () => {
    const id = await h.submit("approval-options:x");
    const rid = (await pending(id)).request_id as string;
    await h.call("task.approval.respond", { task_id: id, request_id: rid, decision: "cancel_task" });
    expect((await h.waitTerminal(id)).status).toBe("cancelled");
  });
});

describe("questions", () => {
  test("answer validation, then a valid answer reaches the provider", async () => {
    const id = await h.submit("question:Which one?");
    const req = await pending(id);
    expect(req.kind).toBe("question");
    const rid = req.request_id as string;
    const bad: unknown[][] = [
      [],
      [{ question_id: "q9", selected_option_ids: ["a"] }],
      [{ question_id: "q1", selected_option_ids: ["a"] }, { question_id: "q1", selected_option_ids: ["b"] }],
      [{ question_id: "q1", selected_option_ids: ["z"] }],
      [{ question_id: "q1", selected_option_ids: ["a", "a"] }],
      [{ question_id: "q1", selected_option_ids: ["a", "b"] }],
      [{ question_id: "q1", selected_option_ids: [] }],
      [{ question_id: "q1", text: "" }],
      [{ question_id: "q1", text: 5 }],
      [{ question_id: "q1", selected_option_ids: ["a"], extra: 1 }],
      ["q1"],
    ];
    for (const answers of bad) expect(await h.fail("task.question.answer", { task_id: id, request_id: rid, answers })).toBe("INVALID_QUESTION_ANSWER");
    expect(await h.fail("task.approval.respond", { task_id: id, request_id: rid, decision: "deny" })).toBe("INVALID_APPROVAL_DECISION");
    await h.call("task.question.answer", { task_id: id, request_id: rid, answers: [{ question_id: "q1", selected_option_ids: ["b"], text: "because" }] });
    const t = await h.waitTerminal(id);
    expect(JSON.parse(t.final_response as string)).toEqual({ answers: [{ question_id: "q1", selected_option_ids: ["b"], text: "because" }] });
  });
});

describe("one pending request per task (REQUEST_PENDING)", () => {
  test("a second interaction raised while one is pending is refused; the first stays intact and answerable", async () => {
    const id = await h.submit("interaction-pair:make");
    const t = await h.waitFor(id, (v) => v.pending_request_id !== null);
    const first = t.pending_request as Record<string, unknown>;
    expect([t.status, first.kind, first.status]).toEqual(["waiting_for_approval", "approval", "pending"]);
    // The refusal reached the provider's adapter as REQUEST_PENDING ...
    let ev = (await h.call("task.events", { task_id: id, limit: 500 })).events as Array<{ event_type: string; payload: Record<string, unknown> }>;
    while (!ev.some((e) => e.event_type === "interaction.error")) {
      await Bun.sleep(20);
      ev = (await h.call("task.events", { task_id: id, limit: 500 })).events as typeof ev;
    }
    expect(ev.filter((e) => e.event_type === "interaction.error").map((e) => e.payload)).toEqual([{ code: "REQUEST_PENDING" }]);
    // ... and nothing of the second request exists: no row, no event, no status change.
    const rows = h.bridge.service.store.db.query("SELECT request_id, kind, status FROM interactions WHERE task_id = ?").all(id);
    expect(rows).toEqual([{ request_id: first.request_id, kind: "approval", status: "pending" }]);
    expect(ev.filter((e) => e.event_type.endsWith(".requested")).map((e) => e.event_type)).toEqual(["approval.requested"]);
    const again = await h.call("task.get", { task_id: id });
    expect([again.status, again.pending_request_id]).toEqual(["waiting_for_approval", first.request_id]);
    // The first request is still answered normally; the provider then finishes with both outcomes.
    await h.call("task.approval.respond", { task_id: id, request_id: first.request_id, decision: "approve_once" });
    const done = await h.waitTerminal(id);
    expect([done.status, done.final_response]).toEqual(["succeeded", "first=approve_once second=REQUEST_PENDING"]);
  });
});

describe("expiry", () => {
  test("task deadline while waiting: expires_at == deadline_at, interrupted/AGENT_TASK_TIMED_OUT, late answer stale", async () => {
    const t1 = await startHarness({ agent: { task_timeout_seconds: 1 } });
    try {
      const id = await t1.submit("approval:x");
      const t = await t1.waitFor(id, (v) => v.pending_request_id !== null);
      expect((t.pending_request as Record<string, unknown>).expires_at).toBe(t.deadline_at);
      const rid = t.pending_request_id as string;
      const done = await t1.waitTerminal(id);
      expect([done.status, done.error_code]).toEqual(["interrupted", "AGENT_TASK_TIMED_OUT"]);
      expect(await t1.fail("task.approval.respond", { task_id: id, request_id: rid, decision: "approve_once" })).toBe("REQUEST_STALE");
    } finally {
      await t1.stop();
      cleanup(t1.root);
    }
  });

  test("interaction timeout (1 s, task 30 s): interrupted/AGENT_INTERACTION_TIMED_OUT, lease released", async () => {
    const t1 = await startHarness({ agent: { task_timeout_seconds: 30, interaction_timeout_seconds: 1 } });
    try {
      const id = await t1.submit("question:q");
      const rid = (await t1.waitFor(id, (v) => v.pending_request_id !== null)).pending_request_id as string;
      const done = await t1.waitTerminal(id);
      expect([done.status, done.error_code]).toEqual(["interrupted", "AGENT_INTERACTION_TIMED_OUT"]);
      const types = ((await t1.call("task.events", { task_id: id })).events as Array<{ event_type: string }>).map((e) => e.event_type);
      expect(types).toEqual(expect.arrayContaining(["interaction.expired", "task.interrupted"]));
      expect(await t1.fail("task.question.answer", { task_id: id, request_id: rid, answers: [{ question_id: "q1", selected_option_ids: ["a"] }] })).toBe(
        "REQUEST_STALE",
      );
      // The provider was a contained process, so its stop is proved: the next write task may run.
      await eventually(() => !(fs.existsSync(leaseFiles(t1.registry, "repo").guardFile)));
      const next = await t1.submit("complete:next");
      expect((await t1.waitTerminal(next)).status).toBe("succeeded");
    } finally {
      await t1.stop();
      cleanup(t1.root);
    }
  });

  // The races below are real ones: the stored expiry has passed but the Bridge's timer has not fired
  // yet (a busy event loop, a suspended host). The test moves the stored time back instead of waiting.
  async function eventsOf(hh: Harness, id: string): Promise<Array<{ event_type: string; payload: Record<string, unknown> }>> {
    hh.bridge.service.events.flush();
    return (await hh.call("task.events", { task_id: id, limit: 500 })).events as Array<{ event_type: string; payload: Record<string, unknown> }>;
  }
  const past = () => new Date(Date.now() - 1000).toISOString();

  test("response to an expired approval before its timer fired: REQUEST_STALE, task interrupted/AGENT_INTERACTION_TIMED_OUT, provider stopped", async () => {
    const t1 = await startHarness({ agent: { task_timeout_seconds: 60, interaction_timeout_seconds: 30 } });
    try {
      const id = await t1.submit("approval:x");
      const rid = (await t1.waitFor(id, (v) => v.pending_request_id !== null)).pending_request_id as string;
      const db = t1.bridge.service.store.db;
      db.query("UPDATE interactions SET expires_at = ? WHERE request_id = ?").run(past(), rid);
      expect(await t1.fail("task.approval.respond", { task_id: id, request_id: rid, decision: "approve_once" })).toBe("REQUEST_STALE");
      const done = await t1.waitTerminal(id, 10_000);
      expect([done.status, done.error_code, done.pending_request_id]).toEqual(["interrupted", "AGENT_INTERACTION_TIMED_OUT", null]);
      expect(t1.bridge.service.store.getInteraction(rid)!.status).toBe("stale");
      // Never a synthetic deny: the provider saw no decision, only its stop.
      const ev = await eventsOf(t1, id);
      expect(ev.map((e) => e.event_type)).toEqual(expect.arrayContaining(["interaction.expired", "task.interrupted"]));
      expect(ev.some((e) => e.event_type === "approval.resolved" || e.event_type === "approval.observed")).toBe(false);
      expect(await t1.fail("task.approval.respond", { task_id: id, request_id: rid, decision: "approve_once" })).toBe("REQUEST_STALE");
      await eventually(() => !(fs.existsSync(leaseFiles(t1.registry, "repo").guardFile)));
      expect(fs.existsSync(leaseFiles(t1.registry, "repo").guardFile)).toBe(false);
      const pid = Number(fs.readFileSync(t1.turnLog, "utf8").trim().split(" ")[1]);
      expect(pidAlive(pid)).toBe(false);
    } finally {
      await t1.stop();
      cleanup(t1.root);
    }
  });

  test("answer to a question whose expiry is the passed task deadline: REQUEST_STALE, interrupted/AGENT_TASK_TIMED_OUT", async () => {
    const t1 = await startHarness({ agent: { task_timeout_seconds: 60, interaction_timeout_seconds: 60 } });
    try {
      const id = await t1.submit("question:q");
      const rid = (await t1.waitFor(id, (v) => v.pending_request_id !== null)).pending_request_id as string;
      const when = past();
      const db = t1.bridge.service.store.db;
      db.query("UPDATE interactions SET expires_at = ? WHERE request_id = ?").run(when, rid);
      db.query("UPDATE tasks SET deadline_at = ? WHERE task_id = ?").run(when, id);
      expect(await t1.fail("task.question.answer", { task_id: id, request_id: rid, answers: [{ question_id: "q1", selected_option_ids: ["a"] }] })).toBe(
        "REQUEST_STALE",
      );
      const done = await t1.waitTerminal(id, 10_000);
      expect([done.status, done.error_code]).toEqual(["interrupted", "AGENT_TASK_TIMED_OUT"]);
      expect(t1.bridge.service.store.getInteraction(rid)!.status).toBe("stale");
    } finally {
      await t1.stop();
      cleanup(t1.root);
    }
  });

  test("a waiter created on an already-expired request fails with AGENT_INTERACTION_EXPIRED; the request is never pending", async () => {
    const t1 = await startHarness({ agent: { task_timeout_seconds: 60 } });
    try {
      const id = await t1.submit("approval-on-message:");
      await t1.waitFor(id, (v) => v.status === "running");
      // The task deadline passes; its timer (armed for 60 s) has not fired. Then the provider asks.
      t1.bridge.service.store.db.query("UPDATE tasks SET deadline_at = ? WHERE task_id = ?").run(past(), id);
      await t1.call("task.message.send", { task_id: id, message: "make" });
      const done = await t1.waitTerminal(id, 10_000);
      expect([done.status, done.error_code, done.pending_request_id]).toEqual(["interrupted", "AGENT_TASK_TIMED_OUT", null]);
      let ev = await eventsOf(t1, id);
      while (!ev.some((e) => e.event_type === "interaction.error")) {
        await Bun.sleep(20);
        ev = await eventsOf(t1, id);
      }
      const expired = ev.find((e) => e.event_type === "interaction.expired")!;
      expect(expired.payload).toMatchObject({ kind: "approval", on_arrival: true });
      // What the adapter's waiter got:
      expect(ev.find((e) => e.event_type === "interaction.error")!.payload).toEqual({ code: "AGENT_INTERACTION_EXPIRED" });
      expect(ev.some((e) => e.event_type === "approval.requested")).toBe(false);
      const row = t1.bridge.service.store.getInteraction(expired.payload.request_id as string)!;
      expect([row.status, row.kind, row.resolution_json]).toEqual(["stale", "approval", null]);
      expect(await t1.fail("task.approval.respond", { task_id: id, request_id: row.request_id, decision: "approve_once" })).toBe("REQUEST_STALE");
      const pid = Number(fs.readFileSync(t1.turnLog, "utf8").trim().split(" ")[1]);
      await eventually(() => !(pidAlive(pid)));
      expect(pidAlive(pid)).toBe(false);
    } finally {
      await t1.stop();
      cleanup(t1.root);
    }
  });
});
