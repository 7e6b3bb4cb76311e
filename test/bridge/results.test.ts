// Results, events and redaction: inline vs spool with exact bytes and SHA-256, UTF-8-safe chunks,
// the 8 MiB cap, event envelopes and truncation, manifest, host-path redaction, retention GC.
import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { canonicalJson } from "../../src/common/canonical-json.ts";
import { cleanup, closeHarness, startHarness, type Harness } from "./helpers.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ agent: { max_active_tasks: 8 } });
});
afterAll(() => closeHarness(h));

const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

describe("spooled results", () => {
  test("50 000 × 界abc is spooled; 65535-byte chunks reproduce the exact bytes and SHA-256", async () => {
    const expected = "界abc".repeat(50_000);
    const id = await h.submit("repeat:50000:界abc");
    const t = await h.waitTerminal(id);
    expect(t.status).toBe("succeeded");
    const bytes = Buffer.byteLength(expected);
    expect(t.result).toEqual({ storage: "spool", size_bytes: bytes, sha256: sha(expected), retrievable: true });
    expect(t.final_response_truncated).toBe(true);
    expect(Buffer.byteLength(t.final_response as string)).toBeLessThanOrEqual(65_536);
    expect(expected.startsWith(t.final_response as string)).toBe(true);
    const file = path.join(h.bridge.paths.spoolDir, `${id}.txt`);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const parts: Buffer[] = [];
    let offset = 0;
    for (;;) {
      const c = await h.call("task.result.read", { task_id: id, offset_bytes: offset, max_bytes: 65_535 });
      parts.push(Buffer.from(c.text as string, "utf8"));
      expect(c.offset_bytes).toBe(offset);
      offset = c.next_offset_bytes as number;
      if (c.eof) break;
    }
    const all = Buffer.concat(parts);
    expect(all.byteLength).toBe(bytes);
    expect(sha(new Uint8Array(all))).toBe((t.result as { sha256: string }).sha256);
    // max_bytes=7 at offset 0: "界abc"=6 bytes, then "界" would be split → ends on a boundary.
    const seven = await h.call("task.result.read", { task_id: id, offset_bytes: 0, max_bytes: 7 });
    expect(seven.text).toBe("界abc");
    expect(seven.next_offset_bytes).toBe(6);
    expect(await h.fail("task.result.read", { task_id: id, offset_bytes: 1, max_bytes: 10 })).toBe("INVALID_RESULT_OFFSET");
    expect(await h.fail("task.result.read", { task_id: id, offset_bytes: 0, max_bytes: 2 })).toBe("INVALID_RESULT_LIMIT");
    expect(await h.fail("task.result.read", { task_id: id, offset_bytes: 0, max_bytes: 65_537 })).toBe("INVALID_RESULT_LIMIT");
    expect(await h.fail("task.result.read", { task_id: id, offset_bytes: 0, max_bytes: 0 })).toBe("INVALID_RESULT_LIMIT");
    expect(await h.fail("task.result.read", { task_id: id, offset_bytes: bytes + 1 })).toBe("INVALID_RESULT_OFFSET");
    expect(await h.fail("task.result.read", { task_id: id, offset_bytes: -1 })).toBe("INVALID_RESULT_OFFSET");
    const end = await h.call("task.result.read", { task_id: id, offset_bytes: bytes });
    expect([end.text, end.eof]).toEqual(["", true]);
    const types = ((await h.call("task.events", { task_id: id })).events as Array<{ event_type: string }>).map((e) => e.event_type);
    expect(types.indexOf("task.result_spooled")).toBeLessThan(types.indexOf("task.completed"));
  });

  test("an inline result is not retrievable through result.read", async () => {
    const id = await h.submit("complete:short");
    await h.waitTerminal(id);
    expect(await h.fail("task.result.read", { task_id: id })).toBe("AGENT_RESULT_NOT_RETRIEVABLE");
  });

  test("8 MiB + 1 → failed/AGENT_RESULT_TOO_LARGE", async () => {
    const t = await h.waitTerminal(await h.submit("repeat:8388609:a"), 60_000);
    expect([t.status, t.error_code]).toEqual(["failed", "AGENT_RESULT_TOO_LARGE"]);
  });

  test("a tampered spool file (not private) is AGENT_RESULT_STORAGE_ERROR; a deleted one NOT_RETRIEVABLE", async () => {
    const id = await h.submit("repeat:70000:abcd");
    await h.waitTerminal(id);
    const file = path.join(h.bridge.paths.spoolDir, `${id}.txt`);
    fs.chmodSync(file, 0o644);
    expect(await h.fail("task.result.read", { task_id: id })).toBe("AGENT_RESULT_STORAGE_ERROR");
    fs.unlinkSync(file);
    expect(await h.fail("task.result.read", { task_id: id })).toBe("AGENT_RESULT_NOT_RETRIEVABLE");
  });
});

describe("events", () => {
  test("envelope: schema_version 1, correlation_id on every event, cursor pagination, INVALID_LIMIT", async () => {
    const id = await h.submit("events:7", { correlation_id: "corr-1" });
    await h.waitTerminal(id);
    const page1 = await h.call("task.events", { task_id: id, limit: 3 });
    const ev1 = page1.events as Array<Record<string, unknown>>;
    expect(ev1.length).toBe(3);
    for (const e of ev1) {
      expect(Object.keys(e).sort()).toEqual(["correlation_id", "created_at", "event_id", "event_type", "payload", "schema_version", "task_id"]);
      expect([e.schema_version, e.correlation_id, e.task_id]).toEqual([1, "corr-1", id]);
    }
    expect(page1.next_after_event_id).toBe(ev1[2]!.event_id);
    const rest = await h.call("task.events", { task_id: id, after_event_id: page1.next_after_event_id, limit: 500 });
    const all = [...ev1, ...(rest.events as Array<Record<string, unknown>>)];
    expect(all.map((e) => e.event_type)).toEqual([
      "task.started",
      "turn.started",
      ...Array.from({ length: 7 }, () => "agent.message"),
      "task.completed",
    ]);
    const ids = all.map((e) => e.event_id as number);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    const empty = await h.call("task.events", { task_id: id, after_event_id: 1e9 });
    expect([empty.events, empty.next_after_event_id]).toEqual([[], 1e9]);
    expect(await h.fail("task.events", { task_id: id, limit: 0 })).toBe("INVALID_LIMIT");
    expect(await h.fail("task.events", { task_id: id, limit: 501 })).toBe("INVALID_LIMIT");
    expect(await h.fail("task.events", { task_id: id, after_event_id: -1 })).toBe("INVALID_LIMIT");
  });

  test("a huge agent.message (quotes, backslashes, CJK) is truncated with size+sha while the spooled result is complete", async () => {
    const t1 = await startHarness({ agent: { result_spool_threshold_bytes: 1024 } });
    try {
      const id = await t1.submit("big-message:200000");
      const t = await t1.waitTerminal(id);
      expect(t.status).toBe("succeeded");
      const full = '界"\\abc'.repeat(Math.ceil(200_000 / 9));
      expect((t.result as { sha256: string; size_bytes: number }).sha256).toBe(sha(full));
      const ev = ((await t1.call("task.events", { task_id: id })).events as Array<{ event_type: string; payload: Record<string, unknown> }>).find(
        (e) => e.event_type === "agent.message",
      )!;
      expect(ev.payload.truncated).toBe(true);
      expect(ev.payload.size_bytes).toBe(Buffer.byteLength(full));
      expect(ev.payload.sha256).toBe(sha(full));
      expect(Buffer.byteLength(JSON.stringify(ev.payload))).toBeLessThanOrEqual(65_536);
      expect(full.startsWith(ev.payload.text as string)).toBe(true);
    } finally {
      await t1.stop();
      cleanup(t1.root);
    }
  });
});

describe("redaction and manifest", () => {
  test("paths in events and results become workdir-relative or <outside-workdir>", async () => {
    const id = await h.submit("paths:");
    const t = await h.waitTerminal(id);
    expect(t.final_response).toBe("wrote <workdir>/result.txt.");
    const ev = ((await h.call("task.events", { task_id: id })).events as Array<{ event_type: string; payload: Record<string, unknown> }>).find(
      (e) => e.event_type === "agent.message",
    )!;
    expect(ev.payload).toEqual({ text: "look at <workdir>/secret.txt and <outside-workdir>!", cwd: "." });
    const everything = JSON.stringify(await h.call("task.events", { task_id: id, limit: 500 })) + JSON.stringify(t);
    expect(everything).not.toContain(h.root);
  });

  test("the manifest is immutable canonical JSON with no host path; its SHA recomputes", async () => {
    const id = await h.submit("complete:m", { correlation_id: "c-9", idempotency_key: "k-9" });
    const t = await h.waitTerminal(id);
    const m = t.manifest as Record<string, unknown>;
    expect(m.schema_version).toBe(3);
    // Advice is on and advisory only; with no operator rules only the built-ins are in force.
    expect(m.advisor).toMatchObject({ enabled: true, mode: "advisory", answers_requests: false, rules: [] });
    expect((m.advisor as { builtin_rules: string[] }).builtin_rules).toContain("builtin:outside-workdir");
    expect(m.model).toEqual({ requested: null });
    expect(m.protocol_version).toBe(1);
    expect(m.workspace).toEqual({ alias: "repo", slot: null, relative_cwd: "", profile: "workspace-write" });
    expect([m.correlation_id, m.idempotency_key, m.deadline_at]).toEqual(["c-9", "k-9", t.deadline_at]);
    expect(createHash("sha256").update(canonicalJson(m)).digest("hex")).toBe(t.manifest_sha256 as string);
    expect(JSON.stringify(m)).not.toContain(h.root);
  });
});

describe("retention", () => {
  test("GC deletes row, events, requests and spool file; guard-referenced tasks survive", async () => {
    // Both tasks are aged past retention by moving the clock (the harness's Bridge runs in this
    // process, so its Date is this test's), not by sleeping past a 1 s retention: on a loaded
    // machine the GC that follows each run, or the one at a submit, could then delete a task
    // before the guard below names it, or before the gc() this test counts.
    const t1 = await startHarness({ agent: { retention_seconds: 60 } });
    try {
      const spooled = await t1.submit("repeat:70000:abcd");
      await t1.waitTerminal(spooled);
      const kept = await t1.submit("complete:kept", { idempotency_key: "gc-key" });
      await t1.waitTerminal(kept);
      // Pretend `kept` still has unresolved recovery state: a guard naming it.
      const { leaseFiles } = await import("../../src/bridge/deployment.ts");
      const guard = leaseFiles(t1.registry, "repo").guardFile;
      fs.writeFileSync(guard, JSON.stringify({ schema_version: 1, task_id: kept, key: "alias:repo" }), { mode: 0o600 });
      setSystemTime(new Date(Date.now() + 120_000));
      const db = t1.bridge.service.store.db;
      expect(t1.bridge.service.gc()).toBe(1);
      expect(await t1.fail("task.get", { task_id: spooled })).toBe("AGENT_TASK_NOT_FOUND");
      expect((db.query("SELECT COUNT(*) AS n FROM events WHERE task_id = ?").get(spooled) as { n: number }).n).toBe(0);
      expect(fs.existsSync(path.join(t1.bridge.paths.spoolDir, `${spooled}.txt`))).toBe(false);
      expect((await t1.call("task.get", { task_id: kept })).status).toBe("succeeded");
      fs.unlinkSync(guard);
      expect(t1.bridge.service.gc()).toBe(1);
      // The idempotency key is free again once its task is gone.
      const again = await t1.submit("complete:kept", { idempotency_key: "gc-key" });
      expect(again).not.toBe(kept);
    } finally {
      setSystemTime();
      await t1.stop();
      cleanup(t1.root);
    }
  });
});

describe("runtimes", () => {
  test("runtime.list and runtime.models for the fake runtime; unknown runtime; advice mode shape", async () => {
    const list = (await h.call("runtime.list")).runtimes as Array<Record<string, unknown>>;
    expect(list).toEqual([
      {
        name: "fake",
        available: true,
        version: "phase-a",
        persistent_session: true,
        live_steer: true,
        interactive_approval: true,
        interactive_question: true,
        in_flight_recovery: "none",
        model_override: false,
        model_discovery: "unsupported",
      },
    ]);
    expect(await h.call("runtime.models", { runtime: "fake" })).toEqual({ runtime: "fake", status: "unsupported", scope: "none", source: "fake", models: [] });
    expect(await h.fail("runtime.models", { runtime: "codex" })).toBe("AGENT_RUNTIME_UNAVAILABLE");
    expect(await h.fail("runtime.models", { runtime: "fake", workdir: "repo" })).toBe("INVALID_REQUEST");
    const advice = await h.call("runtime.models", { runtime: "fake", workdir: "repo", task_prompt: "fix the bug" });
    expect(advice.model_advice).toEqual({ status: "disabled", automatic: false });
  });
});
