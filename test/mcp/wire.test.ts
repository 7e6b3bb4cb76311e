// Wire-level type errors through the real `serverfs serve` process over stdio. Each malformed
// request gets exactly one coded JSON-RPC error (-32602 for params, -32600 for the envelope,
// -32601 for an unknown method) whose message is one short line without a schema dump, and the
// same connection answers a ping right after. Malformed notifications get no answer and break
// nothing; a batch gets one -32600 answer with id null. A refused tools/call still writes its one
// audit line, without the caller's input.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { removeDir, tempDir } from "./helpers.ts";
import { type Frame, RawSession, type Reply } from "./raw-session.ts";

const MARK = "WIREMARK7f3a";

let base: string;
let s: RawSession;
let stderr = "";

beforeAll(async () => {
  base = tempDir();
  fs.mkdirSync(path.join(base, "wd"));
  fs.writeFileSync(path.join(base, "wd", "a.txt"), "alpha\n");
  s = new RawSession(path.join(base, "wd"), base);
  const init = await s.request({
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
  });
  expect(init.result?.serverInfo).toMatchObject({ name: "serverfs" });
  s.send({ jsonrpc: "2.0", method: "notifications/initialized" });
});
afterAll(async () => {
  if (s.proc.exitCode === null) stderr = await s.close();
  removeDir(base);
});

/** The error must be coded, one short line, and free of zod's JSON issue dump. */
function expectCoded(r: Reply, code: number, message: string): void {
  expect(r.result).toBeUndefined();
  expect(r.error?.code).toBe(code);
  expect(r.error?.message).toBe(message);
  expect(r.error!.message).not.toContain("\n");
  expect(r.error!.message.length).toBeLessThanOrEqual(200);
}

const call = (params: unknown): Frame => ({ method: "tools/call", params });

// [label, request (id added), exact code, exact message]
const PARAM_CASES: Array<[string, Frame, number, string]> = [
  ["tools/call arguments array", call({ name: "list_workdirs", arguments: [MARK] }), -32602, "Invalid params: 'arguments' must be an object"],
  ["tools/call arguments string", call({ name: "list_workdirs", arguments: MARK }), -32602, "Invalid params: 'arguments' must be an object"],
  ["tools/call arguments number", call({ name: "list_workdirs", arguments: 7 }), -32602, "Invalid params: 'arguments' must be an object"],
  ["tools/call arguments null", call({ name: "list_workdirs", arguments: null }), -32602, "Invalid params: 'arguments' must be an object"],
  ["tools/call name number", call({ name: 5, arguments: {} }), -32602, "Invalid params: 'name' must be a string"],
  ["tools/call name object", call({ name: { x: MARK }, arguments: {} }), -32602, "Invalid params: 'name' must be a string"],
  ["tools/call name missing", call({ arguments: {} }), -32602, "Invalid params: 'name' is required"],
  ["tools/call without params", { method: "tools/call" }, -32602, "Invalid params: 'params' is required"],
  ["tools/call task augmentation", call({ name: "list_workdirs", arguments: {}, task: {} }), -32602, "Invalid params: 'task' is not supported (this server does not create tasks)"],
  ["tools/call task not an object", call({ name: "list_workdirs", arguments: {}, task: 5 }), -32602, "Invalid params: 'task' must be an object"],
  ["tools/call progressToken object", call({ name: "list_workdirs", arguments: {}, _meta: { progressToken: {} } }), -32602, "Invalid params: '_meta.progressToken' has the wrong type"],
  ["tools/call progressToken float", call({ name: "list_workdirs", arguments: {}, _meta: { progressToken: 1.5 } }), -32602, "Invalid params: '_meta.progressToken' has the wrong type"],
  ["tools/call params array", { method: "tools/call", params: ["list_workdirs", {}] }, -32602, "Invalid params: 'params' must be an object"],
  ["resources/read uri number", { method: "resources/read", params: { uri: 5 } }, -32602, "Invalid params: 'uri' must be a string"],
  ["resources/read uri object", { method: "resources/read", params: { uri: { MARK } } }, -32602, "Invalid params: 'uri' must be a string"],
  ["resources/read uri missing", { method: "resources/read", params: {} }, -32602, "Invalid params: 'uri' is required"],
  ["tools/list cursor number", { method: "tools/list", params: { cursor: 5 } }, -32602, "Invalid params: 'cursor' must be a string"],
  ["resources/list cursor object", { method: "resources/list", params: { cursor: {} } }, -32602, "Invalid params: 'cursor' must be a string"],
  ["resources/templates/list cursor", { method: "resources/templates/list", params: { cursor: true } }, -32602, "Invalid params: 'cursor' must be a string"],
  ["tools/list params array", { method: "tools/list", params: [] }, -32602, "Invalid params: 'params' must be an object"],
  ["ping params string", { method: "ping", params: MARK }, -32602, "Invalid params: 'params' must be an object"],
  ["ping params null", { method: "ping", params: null }, -32602, "Invalid params: 'params' must be an object"],
  ["ping params number", { method: "ping", params: 3 }, -32602, "Invalid params: 'params' must be an object"],
  ["_meta string", { method: "tools/list", params: { _meta: MARK } }, -32602, "Invalid params: '_meta' must be an object"],
  ["_meta array", { method: "resources/list", params: { _meta: [] } }, -32602, "Invalid params: '_meta' must be an object"],
  ["initialize protocolVersion number", { method: "initialize", params: { protocolVersion: 5, capabilities: {}, clientInfo: { name: "x", version: "0" } } }, -32602, "Invalid params: 'protocolVersion' must be a string"],
  ["initialize capabilities string", { method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: "all", clientInfo: { name: "x", version: "0" } } }, -32602, "Invalid params: 'capabilities' must be an object"],
  ["initialize clientInfo missing", { method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {} } }, -32602, "Invalid params: 'clientInfo' is required"],
  ["method not a string", { method: 5 }, -32600, "Invalid request: 'method' must be a string"],
  ["jsonrpc missing", { jsonrpc: undefined, method: "ping" }, -32600, 'Invalid request: \'jsonrpc\' must be "2.0"'],
  ["jsonrpc 1.0", { jsonrpc: "1.0", method: "ping" }, -32600, 'Invalid request: \'jsonrpc\' must be "2.0"'],
  ["extra envelope member", { method: "ping", [MARK]: 1 }, -32600, "Invalid request: only jsonrpc, id, method and params are allowed"],
  // Methods serve does not implement stay -32601, whatever their params.
  ["unknown method", { method: "nope/none", params: {} }, -32601, "Method not found"],
  ["unknown method, params array", { method: "nope/none", params: [] }, -32601, "Method not found"],
  ["logging/setLevel (not offered)", { method: "logging/setLevel", params: { level: 5 } }, -32601, "Method not found"],
  ["completion/complete (not offered)", { method: "completion/complete", params: 5 }, -32601, "Method not found"],
  ["prompts/list (not offered)", { method: "prompts/list", params: "x" }, -32601, "Method not found"],
  ["method named __proto__", { method: "__proto__", params: {} }, -32601, "Method not found"],
  ["method named toString", { method: "toString" }, -32601, "Method not found"],
];

describe("malformed requests get one coded line, and the connection carries on", () => {
  for (const [label, frame, code, message] of PARAM_CASES) {
    test(label, async () => {
      expectCoded(await s.request(frame), code, message);
      await s.ping();
    });
  }

  test("a string id is echoed on the refusal", async () => {
    s.send({ jsonrpc: "2.0", id: "str-1", method: "tools/call", params: { name: 1 } });
    expectCoded(await s.reply("str-1"), -32602, "Invalid params: 'name' must be a string");
    await s.ping();
  });

  test("an id that cannot be echoed (object, null, float) gets no reply; nothing else breaks", async () => {
    const before = s.all().length;
    for (const id of [{ a: 1 }, null, 1.5]) s.write(`${JSON.stringify({ jsonrpc: "2.0", id, method: "ping" })}\n`);
    await s.ping();
    // Only the ping's reply arrived.
    expect(s.all().length).toBe(before + 1);
  });

  test("a __proto__ member in params or arguments is inert data", async () => {
    s.write(
      '{"jsonrpc":"2.0","id":"proto-1","method":"tools/call","params":{"__proto__":{"name":5},"name":"list_workdirs","arguments":{}}}\n' +
        '{"jsonrpc":"2.0","id":"proto-2","method":"tools/call","params":{"name":"stat_file","arguments":{"__proto__":{"path":"a.txt"},"workdir":"wd"}}}\n',
    );
    const one = await s.reply("proto-1");
    expect((one.result?.structuredContent as { workdirs: unknown[] }).workdirs.length).toBe(1);
    const two = await s.reply("proto-2");
    expect((two.result?.structuredContent as { code: string }).code).toBe("INVALID_ARGUMENT");
    await s.ping();
  });

  test("arguments that are an object but wrong inside stay the tool's INVALID_ARGUMENT result", async () => {
    const r = await s.request(call({ name: "read_text_file", arguments: { workdir: "wd", path: 5 } }));
    const sc = r.result?.structuredContent as { code: string; message: string };
    expect([r.result?.isError, sc.code]).toEqual([true, "INVALID_ARGUMENT"]);
    expect(sc.message).not.toContain("\n");
  });

  test("a valid request still works after all of the above, and split or joined frames are read right", async () => {
    const a = JSON.stringify({ jsonrpc: "2.0", id: "joined-a", method: "tools/call", params: { name: "read_text_file", arguments: { workdir: "wd", path: "a.txt" } } });
    const b = JSON.stringify({ jsonrpc: "2.0", id: "joined-b", method: "tools/list", params: { cursor: 9 } });
    // Two frames in one write, the second split mid-way, CRLF on the first.
    s.write(`${a}\r\n${b.slice(0, 20)}`);
    await Bun.sleep(30);
    s.write(`${b.slice(20)}\n`);
    const ra = await s.reply("joined-a");
    expect((ra.result?.structuredContent as { content: string }).content).toBe("alpha\n");
    expectCoded(await s.reply("joined-b"), -32602, "Invalid params: 'cursor' must be a string");
  });
});

describe("malformed notifications, stray responses and batches", () => {
  test("notifications and responses get no reply, a batch gets one, and the next request is answered", async () => {
    const before = s.all().length;
    const bad: Frame[] = [
      { method: "notifications/cancelled", params: { requestId: { MARK } } },
      { method: "notifications/cancelled", params: [] },
      { method: "notifications/progress", params: { progressToken: {}, progress: "x" } },
      { method: "notifications/initialized", params: MARK },
      { method: "notifications/roots/list_changed", params: 5 },
      { method: 7 },
      { method: "notifications/unknown", params: [] },
      // Stray or malformed responses (serve sends no requests of its own).
      { id: 424242, result: {} },
      { id: 424243, error: MARK },
      { id: 424244 },
    ];
    for (const n of bad) s.send({ jsonrpc: "2.0", ...n });
    s.write(`[${JSON.stringify({ jsonrpc: "2.0", id: 424245, method: "ping" })}]\n`);
    await s.ping();
    const added = s.all().slice(before);
    expect(added.length).toBe(2);
    expect(added[0]).toEqual({ jsonrpc: "2.0", id: null as never, error: { code: -32600, message: "Invalid request: batches (JSON arrays) are not supported; send one message per line" } });
    expect(s.proc.exitCode).toBeNull();
  });
});

describe("the era is final", () => {
  test("on this 2025 connection, server/discover and any request with the 2026 envelope are refused; 2025 requests carry on", async () => {
    const META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
    for (const method of ["server/discover", "tools/list"]) {
      const r = await s.request({ method, params: { _meta: META } });
      expectCoded(r, -32022, "Unsupported protocol version: this connection speaks the 2025 era, fixed by its first message; a 2026-07-28 request needs a new connection");
      expect(r.error?.data).toMatchObject({ requested: "2026-07-28" });
    }
    expect(((await s.request({ method: "tools/list", params: {} })).result?.tools as unknown[]).length).toBeGreaterThan(0);
  });
});

describe("logs", () => {
  test("one tool_call audit line per refused tools/call; no caller input on stderr", async () => {
    stderr = await s.close();
    const lines = stderr.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    const refusedCalls = PARAM_CASES.filter(([, f, code]) => f.method === "tools/call" && code === -32602).length + 1; // + the string-id case
    const audits = lines.filter((l) => l.event === "tool_call" && l.error_code === "INVALID_PARAMS");
    expect(audits.length).toBe(refusedCalls);
    for (const a of audits) expect(a).toEqual({ ts: a.ts, level: "INFO", event: "tool_call", success: false, error_code: "INVALID_PARAMS", duration_ms: 0 });
    expect(stderr).not.toContain(MARK);
    expect(stderr).not.toContain("nope/none");
    expect(lines.some((l) => l.event === "request_refused" && l.method === "resources/read" && l.rpc_code === -32602)).toBe(true);
    expect(lines.filter((l) => l.level === "ERROR")).toEqual([]);
  });
});
