// The Bridge method table is one declaration: a wrong method, parameter name or parameter type
// does not compile (the `@ts-expect-error` lines fail `tsc --noEmit` if they ever compile), and the
// same mistakes sent anyway are refused at run time with the protocol's exact codes and texts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ServerfsError } from "../../src/errors.ts";
import { BridgeClient } from "../../src/bridge/ipc/client.ts";
import { defineHandlers, dispatchTable, type BridgeHandlers } from "../../src/bridge/rpc/dispatch.ts";
import { PROTOCOL_DEFAULTS, type HandlerParams, type Params, type Result } from "../../src/bridge/rpc/methods.ts";
import { checkParams, METHOD_SHAPES } from "../../src/bridge/rpc/shapes.ts";
import { cleanup, startHarness, type Harness } from "./helpers.ts";

let h: Harness;
let client: BridgeClient;
beforeAll(async () => {
  h = await startHarness();
  client = new BridgeClient({ path: h.bridge.paths.socketPath }, 20_000);
});
afterAll(async () => {
  await h.stop();
  cleanup(h.root);
});

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ServerfsError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("the call unexpectedly succeeded");
}

describe("typed client against a real Bridge", () => {
  test("a wrong parameter type does not compile and is INVALID_REQUEST at run time", async () => {
    // @ts-expect-error task_id is a string
    const r = await refusal(client.call("task.get", { task_id: 5 }));
    expect(r).toEqual({ code: "INVALID_REQUEST", message: "parameter 'task_id' has the wrong type" });
    // @ts-expect-error wait_seconds is an int, not a numeric string
    const w = await refusal(client.call("task.get", { task_id: "agt_x", wait_seconds: "1" }));
    expect(w).toEqual({ code: "INVALID_REQUEST", message: "parameter 'wait_seconds' has the wrong type" });
  });

  test("an unknown method does not compile and is METHOD_NOT_FOUND at run time", async () => {
    // @ts-expect-error not a Bridge method
    const r = await refusal(client.call("task.delete", { task_id: "agt_x" }));
    expect(r).toEqual({ code: "METHOD_NOT_FOUND", message: "unknown method 'task.delete'" });
    // @ts-expect-error an inherited name is not a method either
    const p = await refusal(client.call("hasOwnProperty", {}));
    expect(p).toEqual({ code: "METHOD_NOT_FOUND", message: "unknown method 'hasOwnProperty'" });
  });

  test("an unknown or missing parameter does not compile and is INVALID_REQUEST naming it", async () => {
    // @ts-expect-error task.cancel has no 'force'
    const u = await refusal(client.call("task.cancel", { task_id: "agt_x", force: true }));
    expect(u).toEqual({ code: "INVALID_REQUEST", message: "unknown parameter 'force' for task.cancel" });
    // @ts-expect-error task_id is required
    const m = await refusal(client.call("task.get", {}));
    expect(m).toEqual({ code: "INVALID_REQUEST", message: "missing parameter 'task_id' for task.get" });
  });

  test("results are typed: bridge.status and a submitted task's view need no casts", async () => {
    const status = await client.call("bridge.status", {});
    const pid: number = status.pid;
    expect(pid).toBe(process.pid);
    const submitted = await client.call("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "review", prompt: "complete:typed" });
    const id: string = submitted.task_id;
    expect(submitted.status).toBe("queued");
    let view = await client.call("task.get", { task_id: id, wait_seconds: 1 });
    for (let i = 0; i < 50 && view.status !== "succeeded"; i++) view = await client.call("task.get", { task_id: id, wait_seconds: 1 });
    expect(view.status).toBe("succeeded");
    const events = await client.call("task.events", { task_id: id });
    const first: number = events.events[0]!.event_id;
    expect(first).toBe(1);
    expect(events.next_after_event_id).toBe(events.events[events.events.length - 1]!.event_id);
  });
});

function recordingHandlers(seen: Array<[string, Record<string, unknown>]>): BridgeHandlers {
  const ack = (task_id: string) => ({ task_id, request_id: "req", resolved: true as const, correlation_id: null });
  return defineHandlers({
    "runtime.list": () => ({ runtimes: [] }),
    "runtime.models": (p) => (seen.push(["runtime.models", p]), { runtime: p.runtime, status: "unsupported", scope: "none", source: p.runtime, models: [] }),
    "task.submit": (p) => (seen.push(["task.submit", p]), { task_id: "agt_1", status: "queued", correlation_id: p.correlation_id, idempotency_key: p.idempotency_key }),
    "task.get": () => Promise.reject(new ServerfsError("AGENT_TASK_NOT_FOUND", "no such task")),
    "task.events": (p) => (seen.push(["task.events", p]), { correlation_id: null, events: [], next_after_event_id: p.after_event_id }),
    "task.result.read": (p) => (seen.push(["task.result.read", p]), { text: "", offset_bytes: p.offset_bytes, next_offset_bytes: p.offset_bytes, eof: true, correlation_id: null }),
    "task.approval.respond": (p) => (seen.push(["task.approval.respond", p]), ack(p.task_id)),
    "task.question.answer": (p) => ack(p.task_id),
    "task.message.send": (p) => ({ task_id: p.task_id, accepted: true, correlation_id: null }),
    "task.cancel": (p) => ({ task_id: p.task_id, status: "cancelled", correlation_id: null, workdir_free: true, workdir_hold_reason: null }),
    "task.list": (p) => (seen.push(["task.list", p]), { tasks: [] }),
    "bridge.status": () => ({ version: "v", pid: 1, started_at: "t", active_tasks: 0, running_in_process: 0, rss_bytes: 0, stop_proof: { path: "freeze", reason: "r" }, config_identity: "sha256:x", settings_identity: "sha256:y" }),
  });
}

describe("dispatchTable", () => {
  test("handlers receive complete params: every protocol default filled, the caller's values kept, input untouched", async () => {
    const seen: Array<[string, Record<string, unknown>]> = [];
    const dispatch = dispatchTable(recordingHandlers(seen));
    const sent = { task_id: "agt_1" };
    await dispatch("task.events", sent);
    await dispatch("task.events", { task_id: "agt_1", after_event_id: 7, limit: 3 });
    await dispatch("task.result.read", { task_id: "agt_1" });
    await dispatch("task.list", {});
    await dispatch("runtime.models", { runtime: "codex" });
    await dispatch("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "review", prompt: "p" });
    await dispatch("task.approval.respond", { task_id: "agt_1", request_id: "req" });
    expect(sent).toEqual({ task_id: "agt_1" });
    expect(seen).toEqual([
      ["task.events", { task_id: "agt_1", after_event_id: 0, limit: 100 }],
      ["task.events", { task_id: "agt_1", after_event_id: 7, limit: 3 }],
      ["task.result.read", { task_id: "agt_1", offset_bytes: 0, max_bytes: 65_536 }],
      ["task.list", { limit: 50, status: null }],
      ["runtime.models", { runtime: "codex", workdir: null, task_prompt: null, path: "", profile: "workspace-write" }],
      [
        "task.submit",
        { runtime: "fake", workdir: "repo", path: "", profile: "review", prompt: "p", model: null, continue_from_task_id: null, correlation_id: null, idempotency_key: null, config_identity: null },
      ],
      // Absence is the answer's meaning here: no defaults are invented for decision / option_id.
      ["task.approval.respond", { task_id: "agt_1", request_id: "req" }],
    ]);
  });

  test("refuses before any handler runs, with the protocol's codes; a handler's own error passes through", async () => {
    const seen: Array<[string, Record<string, unknown>]> = [];
    const dispatch = dispatchTable(recordingHandlers(seen));
    const codes = [];
    for (const [method, params] of [
      ["toString", {}],
      ["__proto__", {}],
      ["task.events", { task_id: "agt_1", limit: 1.5 }],
      ["task.events", { task_id: "agt_1", __proto__x: 1 }],
      ["task.list", { status: null }],
      ["task.approval.respond", { task_id: "agt_1", request_id: "r", granted_permission_ids: ["a", 1] }],
      ["task.get", { task_id: "agt_1" }],
    ] as Array<[string, Record<string, unknown>]>) {
      codes.push(await refusal(dispatch(method, params)));
    }
    expect(codes).toEqual([
      { code: "METHOD_NOT_FOUND", message: "unknown method 'toString'" },
      { code: "METHOD_NOT_FOUND", message: "unknown method '__proto__'" },
      { code: "INVALID_REQUEST", message: "parameter 'limit' has the wrong type" },
      { code: "INVALID_REQUEST", message: "unknown parameter '__proto__x' for task.events" },
      { code: "INVALID_REQUEST", message: "parameter 'status' has the wrong type" },
      { code: "INVALID_REQUEST", message: "parameter 'granted_permission_ids' has the wrong type" },
      { code: "AGENT_TASK_NOT_FOUND", message: "no such task" },
    ]);
    expect(seen).toEqual([]);
  });

  test("every protocol default names an optional parameter of its method; a non-null default passes that method's validator", () => {
    const nullDefaults: string[] = [];
    for (const [method, defaults] of Object.entries(PROTOCOL_DEFAULTS)) {
      const shape = METHOD_SHAPES[method as keyof typeof METHOD_SHAPES];
      const required: Record<string, unknown> = {};
      for (const [key, type] of Object.entries(shape.required)) required[key] = type === "array" ? [] : "x";
      for (const [key, value] of Object.entries(defaults)) {
        expect([method, key, Object.hasOwn(shape.optional, key)]).toEqual([method, key, true]);
        if (value === null) nullDefaults.push(`${method}.${key}`);
        else expect(() => checkParams(method, { ...required, [key]: value })).not.toThrow();
      }
    }
    // null stands for "not given"; only task.list's status filter is not nullable on the wire.
    expect(nullDefaults).toEqual([
      "runtime.models.workdir",
      "runtime.models.task_prompt",
      "task.submit.model",
      "task.submit.continue_from_task_id",
      "task.submit.correlation_id",
      "task.submit.idempotency_key",
      "task.submit.config_identity",
      "task.list.status",
    ]);
  });
});

describe("compile-time only", () => {
  test("the table's types", () => {
    // A handler must return its method's result type.
    const wrongResult: BridgeHandlers["task.cancel"] =
      // @ts-expect-error status must be a task status
      () => ({ task_id: "t", status: "gone", correlation_id: null, workdir_free: true, workdir_hold_reason: null });
    // Defaults make keys present for handlers; callers may omit them.
    const full: HandlerParams<"task.events"> = { task_id: "t", after_event_id: 0, limit: 1 };
    // @ts-expect-error a handler's params always carry the defaulted keys
    const partial: HandlerParams<"task.events"> = { task_id: "t" };
    const sent: Params<"task.events"> = { task_id: "t" };
    // @ts-expect-error a nullable string on the wire is still a string or null
    const badModel: Params<"task.submit"> = { runtime: "r", workdir: "w", path: "", profile: "review", prompt: "p", model: 3 };
    const status: Result<"task.get">["status"] = "succeeded";
    // @ts-expect-error every method needs a handler
    defineHandlers({ "runtime.list": () => ({ runtimes: [] }) });
    expect([typeof wrongResult, full.limit, partial.task_id, sent.task_id, badModel.prompt, status]).toEqual(["function", 1, "t", "t", "p", "succeeded"]);
  });
});
