// Task lifecycle against a real Bridge with real fake-provider processes: submit, leases, guard,
// idempotency, continuation, cancel (process trees), failures, limits, timeouts, shutdown.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import { leaseFiles } from "../../src/bridge/deployment.ts";
import { eventually, pidAlive } from "../support/proc.ts";
import { cleanup, closeHarness, startHarness, turnCount, type Harness } from "./helpers.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ aliases: ["repo", "other", "ro"], agent: { max_active_tasks: 16 } });
});
afterAll(() => closeHarness(h));

const guardOf = (alias: string) => leaseFiles(h.registry, alias).guardFile;

async function drain(): Promise<void> {
  // Cancel anything a failed test left running so later tests start from idle workdirs.
  const list = (await h.call("task.list", { limit: 500 })).tasks as Array<{ task_id: string; status: string }>;
  for (const t of list) {
    if (!["succeeded", "failed", "cancelled", "interrupted"].includes(t.status)) {
      await h.call("task.cancel", { task_id: t.task_id });
    }
  }
  for (const t of list) await h.waitFor(t.task_id, (v) => v.pending_request_id === null && !!v.completed_at, 20_000).catch(() => {});
  // Runner cleanup (lease release) follows the terminal write closely; wait for the guard to go.
  await eventually(() => !(fs.existsSync(guardOf("repo")) || fs.existsSync(guardOf("other"))));
}
afterEach(drain);

describe("submit", () => {
  test("returns queued before completion; the view never shows native ids or the fingerprint", async () => {
    const r = await h.call("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "sleep:300" });
    expect(r).toEqual({ task_id: r.task_id, status: "queued", correlation_id: null, idempotency_key: null });
    expect(r.task_id).toMatch(/^agt_[0-9a-f]{24}$/);
    const t = await h.waitTerminal(r.task_id as string);
    expect(t.status).toBe("succeeded");
    expect(t.final_response).toBe("slept=300");
    const text = JSON.stringify(t);
    expect(text).not.toContain("fake-session");
    expect(text).not.toContain("native_");
    expect(text).not.toContain("request_fingerprint");
    expect(text).not.toContain(h.root);
    expect(t.result).toEqual({ storage: "inline", size_bytes: 9, sha256: expect.any(String), retrievable: false });
    expect(t.started_at).not.toBeNull();
    expect(t.completed_at).not.toBeNull();
  });

  test("authorization codes, in order, before anything runs", async () => {
    const base = { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "complete:x" };
    expect(await h.fail("task.submit", { ...base, workdir: "nope" })).toBe("WORKDIR_NOT_FOUND");
    expect(await h.fail("task.submit", { ...base, runtime: "codex" })).toBe("AGENT_RUNTIME_NOT_ALLOWED");
    expect(await h.fail("task.submit", { ...base, profile: "yolo" })).toBe("AGENT_PROFILE_NOT_ALLOWED");
    expect(await h.fail("task.submit", { ...base, path: "../x" })).toBe("INVALID_WORKDIR_PATH");
    expect(await h.fail("task.submit", { ...base, path: "/etc" })).toBe("INVALID_WORKDIR_PATH");
    expect(await h.fail("task.submit", { ...base, path: "a\\b" })).toBe("INVALID_WORKDIR_PATH");
    expect(await h.fail("task.submit", { ...base, path: "missing" })).toBe("WORKDIR_PATH_NOT_FOUND");
    fs.symlinkSync("/etc", `${h.workdirs.repo}/escape`);
    expect(await h.fail("task.submit", { ...base, path: "escape" })).toBe("INVALID_WORKDIR_PATH");
    fs.unlinkSync(`${h.workdirs.repo}/escape`);
    expect(await h.fail("task.submit", { ...base, prompt: "x".repeat(65_537) })).toBe("AGENT_PROMPT_TOO_LARGE");
    expect(await h.fail("task.submit", { ...base, correlation_id: "界".repeat(86) })).toBe("INVALID_REQUEST");
    expect(await h.fail("task.submit", { ...base, correlation_id: "a\nb" })).toBe("INVALID_REQUEST");
    expect(await h.fail("task.submit", { ...base, idempotency_key: "" })).toBe("INVALID_REQUEST");
    expect(await h.fail("task.submit", { ...base, model: " gpt" })).toBe("INVALID_REQUEST");
    expect(await h.fail("task.submit", { ...base, prompt: 5 })).toBe("INVALID_REQUEST");
    expect(turnCount(h.turnLog)).toBe(1);
  });

  test("a second workspace-write submit while the first runs is WORKDIR_BUSY; after cancel the lease is free", async () => {
    const first = await h.submit("wait:");
    await h.waitFor(first, (t) => t.status === "running");
    expect(fs.existsSync(guardOf("repo"))).toBe(true);
    expect(await h.fail("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "complete:2" })).toBe(
      "WORKDIR_BUSY",
    );
    // review tasks take no lease.
    const review = await h.submit("complete:review", { profile: "review" });
    expect((await h.waitTerminal(review)).status).toBe("succeeded");
    const c = await h.call("task.cancel", { task_id: first });
    // The answer comes after the proved stop: the guard is already gone.
    expect(c).toEqual({ task_id: first, status: "cancelled", correlation_id: null, workdir_free: true, workdir_hold_reason: null });
    expect(fs.existsSync(guardOf("repo"))).toBe(false);
    // Repeated cancel is safe.
    expect(await h.call("task.cancel", { task_id: first })).toEqual(c);
    const next = await h.submit("complete:after");
    expect((await h.waitTerminal(next)).final_response).toBe("after");
  });

  test("two concurrent submits to one workdir: exactly one winner and one WORKDIR_BUSY", async () => {
    const p = { runtime: "fake", workdir: "other", path: "", profile: "workspace-write", prompt: "sleep:500" };
    const results = await Promise.allSettled([h.call("task.submit", p), h.call("task.submit", p)]);
    const ok = results.filter((r) => r.status === "fulfilled");
    const busy = results.filter((r) => r.status === "rejected" && (r.reason as { code: string }).code === "WORKDIR_BUSY");
    expect(ok.length).toBe(1);
    expect(busy.length).toBe(1);
    await h.waitTerminal((ok[0] as PromiseFulfilledResult<Record<string, unknown>>).value.task_id as string);
  });
});

describe("idempotency", () => {
  test("a storm of 50 identical concurrent submits converges on one task and one provider turn", async () => {
    const before = turnCount(h.turnLog);
    const p = { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "sleep:200", idempotency_key: "storm-1" };
    const replies = await Promise.all(Array.from({ length: 50 }, () => h.call("task.submit", p)));
    const ids = new Set(replies.map((r) => r.task_id));
    expect(ids.size).toBe(1);
    const id = [...ids][0] as string;
    expect((await h.waitTerminal(id)).status).toBe("succeeded");
    // A retry after completion returns the same task with its current status.
    expect(await h.call("task.submit", p)).toEqual({ task_id: id, status: "succeeded", correlation_id: null, idempotency_key: "storm-1" });
    expect(turnCount(h.turnLog) - before).toBe(1);
    const lines = fs.readFileSync(h.turnLog, "utf8").split("\n").filter((l) => l.startsWith(id));
    expect(lines.length).toBe(1);
  });

  test("reusing a key with any changed field is AGENT_IDEMPOTENCY_CONFLICT", async () => {
    const base = { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "complete:k", idempotency_key: "conf-1", correlation_id: "c1" };
    const id = (await h.call("task.submit", base)).task_id as string;
    await h.waitTerminal(id);
    fs.mkdirSync(`${h.workdirs.repo}/sub`, { recursive: true });
    const variants = [
      { prompt: "complete:k2" },
      { workdir: "other" },
      { path: "sub" },
      { profile: "review" },
      { correlation_id: "c2" },
      { model: "m1" },
      { continue_from_task_id: id },
    ];
    for (const v of variants) expect(await h.fail("task.submit", { ...base, ...v })).toBe("AGENT_IDEMPOTENCY_CONFLICT");
    // "." and "" normalise to the same path, so that is the same request.
    expect((await h.call("task.submit", { ...base, path: "." })).task_id).toBe(id);
  });
});

describe("continuation", () => {
  test("same native session, new task id; the wrong runtime/workdir/state is refused", async () => {
    const first = await h.submit("complete:one");
    await h.waitTerminal(first);
    const second = await h.submit("complete:two", { continue_from_task_id: first });
    expect(second).not.toBe(first);
    expect((await h.waitTerminal(second)).status).toBe("succeeded");
    const db = h.bridge.service.store;
    expect(db.get(second)!.native_session_id).toBe(`fake-session-${first}`);
    expect(await h.fail("task.submit", { runtime: "fake", workdir: "other", path: "", profile: "workspace-write", prompt: "x", continue_from_task_id: first })).toBe(
      "AGENT_SESSION_NOT_RESUMABLE",
    );
    expect(await h.fail("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "x", continue_from_task_id: "agt_000000000000000000000000" })).toBe(
      "AGENT_TASK_NOT_FOUND",
    );
    const running = await h.submit("wait:", { workdir: "other" });
    await h.waitFor(running, (t) => t.status === "running");
    expect(await h.fail("task.submit", { runtime: "fake", workdir: "other", path: "", profile: "review", prompt: "x", continue_from_task_id: running })).toBe(
      "AGENT_SESSION_NOT_RESUMABLE",
    );
    const review = await h.submit("complete:r", { profile: "review" });
    await h.waitTerminal(review);
    expect(await h.fail("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "x", continue_from_task_id: review })).toBe(
      "AGENT_PROFILE_NOT_ALLOWED",
    );
  });
});

describe("cancel and process trees", () => {
  test("cancel stops the provider and its grandchildren (including setsid ones), then frees lease and guard", async () => {
    const id = await h.submit("spawn:3");
    const events = async () => ((await h.call("task.events", { task_id: id })).events as Array<{ event_type: string; payload: Record<string, unknown> }>);
    let pids: number[] = [];
    while (pids.length === 0) {
      const spawned = (await events()).find((e) => e.event_type === "agent.message" && Array.isArray(e.payload.pids));
      if (spawned) pids = spawned.payload.pids as number[];
      else await Bun.sleep(25);
    }
    expect(pids.length).toBe(3);
    expect(pids.every(pidAlive)).toBe(true);
    const c = await h.call("task.cancel", { task_id: id });
    expect(c.status).toBe("cancelled");
    await eventually(() => !(pids.some(pidAlive) || fs.existsSync(guardOf("repo"))));
    expect(pids.filter(pidAlive)).toEqual([]);
    expect(fs.existsSync(guardOf("repo"))).toBe(false);
    const t = await h.call("task.get", { task_id: id });
    expect(t.status).toBe("cancelled");
    expect((await events()).map((e) => e.event_type)).toContain("task.cancelled");
  });

  test("normal completion also stops leftover grandchildren before the guard is cleared", async () => {
    const id = await h.submit("spawn-complete:2");
    const t = await h.waitTerminal(id);
    expect(t.status).toBe("succeeded");
    const pids = String(t.final_response).replace("spawned=", "").split(",").map(Number);
    await eventually(() => !(pids.some(pidAlive) || fs.existsSync(guardOf("repo"))));
    expect(pids.filter(pidAlive)).toEqual([]);
    expect(fs.existsSync(guardOf("repo"))).toBe(false);
  });
});

describe("failures and limits", () => {
  test("provider error → failed/AGENT_PROVIDER_ERROR with a redacted message; guard and lease released", async () => {
    const id = await h.submit(`fail:could not open ${h.workdirs.repo}/x.txt`);
    const t = await h.waitTerminal(id);
    expect(t.status).toBe("failed");
    expect(t.error_code).toBe("AGENT_PROVIDER_ERROR");
    expect(t.error_message).toBe("could not open <workdir>/x.txt");
    await eventually(() => !(fs.existsSync(guardOf("repo"))));
    expect(fs.existsSync(guardOf("repo"))).toBe(false);
  });

  test("provider crash → failed/AGENT_PROVIDER_DISCONNECTED", async () => {
    const t = await h.waitTerminal(await h.submit("crash:"));
    expect([t.status, t.error_code]).toEqual(["failed", "AGENT_PROVIDER_DISCONNECTED"]);
  });

  test("steering: message reaches the provider; size bound; terminal and unknown tasks refused", async () => {
    const id = await h.submit("steer:");
    await h.waitFor(id, (t) => t.status === "running");
    expect(await h.fail("task.message.send", { task_id: id, message: "x".repeat(65_537) })).toBe("AGENT_MESSAGE_TOO_LARGE");
    // The provider may not be listening yet right after `running`; retry until accepted.
    let accepted: Record<string, unknown> | null = null;
    while (!accepted) {
      try {
        accepted = await h.call("task.message.send", { task_id: id, message: "go left" });
      } catch {
        await Bun.sleep(20);
      }
    }
    expect(accepted).toEqual({ task_id: id, accepted: true, correlation_id: null });
    const t = await h.waitTerminal(id);
    expect(t.final_response).toBe("steered=go left");
    expect(await h.fail("task.message.send", { task_id: id, message: "late" })).toBe("AGENT_TASK_TERMINAL");
    const ev = (await h.call("task.events", { task_id: id })).events as Array<{ event_type: string; payload: Record<string, unknown> }>;
    expect(ev.find((e) => e.event_type === "user.message")?.payload).toEqual({ bytes: 7 });
    expect(JSON.stringify(ev)).not.toContain("go left");
  });

  test("review profile on a read-only workdir works; workspace-write there is refused", async () => {
    // "ro" is configured writable in this harness; flip it through a fresh registry check instead.
    const { authorize } = await import("../../src/bridge/service/authorize.ts");
    const reg = { ...h.registry, workdirs: h.registry.workdirs.map((w) => (w.alias === "ro" ? { ...w, read_only: true } : w)) };
    expect(() => authorize(reg, "fake", "ro", "workspace-write", "")).toThrow(expect.objectContaining({ code: "AGENT_PROFILE_NOT_ALLOWED" }));
    expect(authorize(reg, "fake", "ro", "review", "").workdir.alias).toBe("ro");
  });
});

describe("limits that need their own Bridge", () => {
  test("max_active_tasks: the next submit is AGENT_TASK_LIMIT_REACHED", async () => {
    const small = await startHarness({ aliases: ["a", "b", "c"], agent: { max_active_tasks: 2 } });
    try {
      const one = await small.submit("wait:", { workdir: "a" });
      const two = await small.submit("wait:", { workdir: "b" });
      const code = await small.fail("task.submit", { runtime: "fake", workdir: "c", path: "", profile: "workspace-write", prompt: "complete:x" });
      expect(code).toBe("AGENT_TASK_LIMIT_REACHED");
      // The refused submit left no lease behind on c.
      await small.call("task.cancel", { task_id: one });
      const three = await small.submit("complete:c", { workdir: "c" });
      expect((await small.waitTerminal(three)).status).toBe("succeeded");
      await small.call("task.cancel", { task_id: two });
    } finally {
      await small.stop();
      cleanup(small.root);
    }
  });

  test("task deadline: interrupted/AGENT_TASK_TIMED_OUT and the provider is gone", async () => {
    const t1 = await startHarness({ agent: { task_timeout_seconds: 1 } });
    try {
      const id = await t1.submit("wait:");
      const t = await t1.waitTerminal(id);
      expect([t.status, t.error_code]).toEqual(["interrupted", "AGENT_TASK_TIMED_OUT"]);
      await eventually(() => !(fs.existsSync(leaseFiles(t1.registry, "repo").guardFile)));
      expect(fs.existsSync(leaseFiles(t1.registry, "repo").guardFile)).toBe(false);
    } finally {
      await t1.stop();
      cleanup(t1.root);
    }
  });

  test("event count bound: the task fails with AGENT_EVENT_LIMIT_REACHED", async () => {
    const t1 = await startHarness({ limits: { max_events_per_task: 5 } });
    try {
      const t = await t1.waitTerminal(await t1.submit("events:10"));
      expect([t.status, t.error_code]).toEqual(["failed", "AGENT_EVENT_LIMIT_REACHED"]);
      const ev = (await t1.call("task.events", { task_id: t.task_id, limit: 500 })).events as unknown[];
      expect(ev.length).toBeLessThanOrEqual(6);
    } finally {
      await t1.stop();
      cleanup(t1.root);
    }
  });

  test("message bound of 3 bytes (max_message_bytes=3)", async () => {
    const t1 = await startHarness({ limits: { max_message_bytes: 3 } });
    try {
      const id = await t1.submit("steer:");
      await t1.waitFor(id, (t) => t.status === "running");
      expect(await t1.fail("task.message.send", { task_id: id, message: "abcd" })).toBe("AGENT_MESSAGE_TOO_LARGE");
      await t1.call("task.cancel", { task_id: id });
    } finally {
      await t1.stop();
      cleanup(t1.root);
    }
  });

  test("shutdown with a running task → interrupted/BRIDGE_SHUTDOWN, provider tree stopped, lease free", async () => {
    const t1 = await startHarness();
    const id = await t1.submit("spawn:2");
    let pids: number[] = [];
    while (pids.length === 0) {
      const ev = (await t1.call("task.events", { task_id: id })).events as Array<{ payload: Record<string, unknown> }>;
      const p = ev.find((e) => Array.isArray(e.payload.pids));
      if (p) pids = p.payload.pids as number[];
      else await Bun.sleep(25);
    }
    await t1.stop();
    const { Database } = await import("bun:sqlite");
    const db = new Database(t1.bridge.paths.dbPath, { readonly: true });
    const row = db.query("SELECT status, error_code FROM tasks WHERE task_id = ?").get(id) as { status: string; error_code: string };
    db.close();
    expect([row.status, row.error_code]).toEqual(["interrupted", "BRIDGE_SHUTDOWN"]);
    expect(pids.filter(pidAlive)).toEqual([]);
    expect(fs.existsSync(leaseFiles(t1.registry, "repo").guardFile)).toBe(false);
    cleanup(t1.root);
  });
});

describe("a provider that ignores cancellation", () => {
  test("cancel is terminal at once; the provider (deaf to cancel and SIGTERM) is killed; lease and guard freed", async () => {
    const id = await h.submit("stubborn:");
    let pids: number[] = [];
    while (pids.length === 0) {
      const ev = (await h.call("task.events", { task_id: id })).events as Array<{ payload: Record<string, unknown> }>;
      const p = ev.find((e) => Array.isArray(e.payload.pids));
      if (p) pids = p.payload.pids as number[];
      else await Bun.sleep(25);
    }
    expect(pids.length).toBe(1);
    expect((await h.call("task.cancel", { task_id: id })).status).toBe("cancelled");
    await eventually(() => !(pids.some(pidAlive) || fs.existsSync(guardOf("repo"))));
    expect(pids.filter(pidAlive)).toEqual([]);
    expect(fs.existsSync(guardOf("repo"))).toBe(false);
    const next = await h.submit("complete:after-stubborn");
    expect((await h.waitTerminal(next)).status).toBe("succeeded");
  });
});

describe("cancel before the provider exists", () => {
  test("cancel right after submit: cancelled, never succeeds, lease and guard freed", async () => {
    const p = { runtime: "fake", workdir: "other", path: "", profile: "workspace-write", prompt: "complete:too-late" };
    const [sub] = await Promise.all([h.call("task.submit", p)]);
    const id = sub.task_id as string;
    expect((await h.call("task.cancel", { task_id: id })).status).toBe("cancelled");
    const t = await h.waitFor(id, (v) => v.completed_at !== null);
    expect([t.status, t.final_response]).toEqual(["cancelled", null]);
    await eventually(() => !(fs.existsSync(guardOf("other"))));
    expect(fs.existsSync(guardOf("other"))).toBe(false);
    const next = await h.submit("complete:fine", { workdir: "other" });
    expect((await h.waitTerminal(next)).status).toBe("succeeded");
  });
});
