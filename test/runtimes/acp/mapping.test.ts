// The update mapper on its own: tool calls are upserts keyed by toolCallId in any order, message
// segments split where the agent changes subject, and everything stays bounded.
import { describe, expect, test } from "bun:test";
import { UpdateMapper } from "../../../src/runtimes/acp/mapping.ts";

const chunk = (text: string, messageId?: string) => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text }, ...(messageId ? { messageId } : {}) });

describe("UpdateMapper", () => {
  test("tool_call_update before any tool_call creates the call; a duplicate tool_call is an update", () => {
    const m = new UpdateMapper();
    expect(m.push({ sessionUpdate: "tool_call_update", toolCallId: "a", status: "in_progress" })).toEqual([
      { type: "tool.started", payload: { tool_call_id: "a", title: null, kind: null, status: "in_progress" } },
    ]);
    expect(m.push({ sessionUpdate: "tool_call", toolCallId: "a", title: "Edit x", kind: "edit", status: "in_progress" })).toEqual([
      { type: "tool.updated", payload: { tool_call_id: "a", title: "Edit x", kind: "edit" } },
    ]);
    expect(m.push({ sessionUpdate: "tool_call", toolCallId: "a", title: "Edit x", kind: "edit", status: "in_progress" })).toEqual([]);
    expect(m.push({ sessionUpdate: "tool_call_update", toolCallId: "a", status: "completed" })).toEqual([
      { type: "tool.completed", payload: { tool_call_id: "a", status: "completed" } },
    ]);
    expect(m.push({ sessionUpdate: "tool_call_update", toolCallId: "a", status: "completed" })).toEqual([]);
  });

  test("a permission request is a creation for an unknown id and an update for a known one", () => {
    const m = new UpdateMapper();
    expect(m.permissionRequested({ toolCallId: "p", title: "Run ls", kind: "execute" })).toEqual([
      { type: "tool.started", payload: { tool_call_id: "p", title: "Run ls", kind: "execute", status: "pending" } },
    ]);
    expect(m.permissionRequested({ toolCallId: "p", title: "Run ls", kind: "execute" })).toEqual([]);
    expect(m.permissionRequested(undefined)).toEqual([]);
  });

  test("message segments: split by tool calls and messageId changes; the final response is the last segment", () => {
    const m = new UpdateMapper();
    expect(m.push(chunk("I will ", "m1"))).toEqual([]);
    expect(m.push(chunk("look.", "m1"))).toEqual([]);
    const atNewId = m.push(chunk("Second ", "m2"));
    expect(atNewId).toEqual([{ type: "agent.message", payload: { text: "I will look." } }]);
    m.push({ sessionUpdate: "tool_call", toolCallId: "t", title: "Read", kind: "read", status: "completed" });
    m.push(chunk("Done: all good."));
    m.push({ sessionUpdate: "usage_update", used: 5, size: 10 }); // not a boundary
    const { events, finalResponse } = m.finish();
    expect(finalResponse).toBe("Done: all good.");
    expect(events).toEqual([{ type: "agent.message", payload: { text: "Done: all good." } }]);
  });

  test("bounded: thoughts capped at 4096 chars, plan entries at 50, titles at 512, no raw fields copied", () => {
    const m = new UpdateMapper();
    m.push({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "t".repeat(5000) } });
    const plan = m.push({
      sessionUpdate: "plan",
      entries: Array.from({ length: 60 }, (_, i) => ({ content: `step ${i}`, priority: "low", status: "pending", _meta: { x: 1 } })),
    });
    expect(plan[0]).toMatchObject({ type: "agent.thought", payload: { truncated: true } });
    expect((plan[0]!.payload.text as string).length).toBe(4096);
    expect((plan[1]!.payload.entries as unknown[]).length).toBe(50);
    expect(plan[1]!.payload).toMatchObject({ truncated: true, entry_count: 60 });
    const tool = m.push({ sessionUpdate: "tool_call", toolCallId: "x", title: "y".repeat(600), rawInput: { secret: "s" }, rawOutput: "o", kind: "bogus" });
    expect(tool[0]!.payload).toEqual({ tool_call_id: "x", title: `${"y".repeat(512)}…`, kind: null, status: "pending" });
  });

  test("text past the 8 MiB result ceiling marks the result too large instead of growing", () => {
    const m = new UpdateMapper();
    const mib = "x".repeat(1024 * 1024);
    for (let i = 0; i < 9; i++) m.push(chunk(mib));
    expect(m.resultTooLarge).toBe(true);
    expect(Buffer.byteLength(m.finish().finalResponse)).toBeLessThanOrEqual(8 * 1024 * 1024);
  });

  test("non-text content and malformed chunks are ignored, not fatal", () => {
    const m = new UpdateMapper();
    expect(m.push({ sessionUpdate: "agent_message_chunk", content: { type: "image", data: "AAAA", mimeType: "image/png" } })).toEqual([]);
    expect(m.push({ sessionUpdate: "agent_message_chunk" })).toEqual([]);
    expect(m.push({ sessionUpdate: "tool_call" })).toEqual([]);
    expect(m.finish().finalResponse).toBe("");
  });
});
