// The stdio transport's gate, on a real GatedStdioTransport over PassThrough streams, cut at random
// places: a frame over a per-message bound (values, strings, nesting) is answered under its own id
// with one coded -32600 line (as soon as its id and method are read, when they come first), or
// dropped when it is a notification, and the next frame is served; a frame at the bound is parsed
// as usual; a batch, a line that is not JSON and a non-object each
// get one answer with id null; the era lock refuses the other era's messages; and every request
// handed on is tracked until it is answered, so shutdown can answer the rest. The server is told
// once when it sends its first answer of its own (not a dropped answer to a request the opening
// answered), which is when serve lets its engine optimize again.
import { describe, expect, test } from "bun:test";
import {
  CallToolRequestSchema,
  DiscoverRequestSchema,
  InitializeRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
} from "@modelcontextprotocol/core";
import { PassThrough } from "node:stream";
import type { z } from "zod";
import { FRAME_BOUNDS } from "../../src/mcp/frame-scan.ts";
import { SHUTDOWN_ERROR } from "../../src/mcp/stdio.ts";
import { GatedStdioTransport, type GatedTransportOptions } from "../../src/mcp/transport.ts";
import type { Inbound } from "../../src/mcp/wire.ts";

const REQUESTS = new Map<string, z.ZodType>(
  [InitializeRequestSchema, PingRequestSchema, DiscoverRequestSchema, ListToolsRequestSchema, CallToolRequestSchema].map((s) => [s.shape.method.value, s as unknown as z.ZodType]),
);
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "t", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const INIT = { jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } };

interface Rig {
  t: GatedStdioTransport;
  /** Write `text` to stdin in pieces cut at pseudo-random places, then let the transport read it. */
  feed: (text: string, seed?: number) => Promise<void>;
  delivered: unknown[];
  refused: Exclude<Inbound, { kind: "pass" }>[];
  /** Every line written to stdout, parsed. */
  answers: () => Array<{ jsonrpc: string; id: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } }>;
}

async function rig(extra: Partial<GatedTransportOptions> = {}): Promise<Rig> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let written = "";
  stdout.on("data", (c: Buffer) => (written += c.toString("utf8")));
  const refused: Rig["refused"] = [];
  const t = new GatedStdioTransport(stdin, stdout, { maxFrameBytes: 32 << 20, requests: REQUESTS, onRefused: (v) => refused.push(v), ...extra });
  const delivered: unknown[] = [];
  t.onmessage = (m) => delivered.push(m);
  await t.start();
  const feed = async (text: string, seed = 7): Promise<void> => {
    const bytes = Buffer.from(text);
    let s = seed;
    for (let from = 0; from < bytes.length; ) {
      s = (s * 1103515245 + 12345) % 2 ** 31;
      const to = Math.min(bytes.length, from + 1 + ((s >>> 8) % 70_000));
      stdin.write(Buffer.from(bytes.subarray(from, to)));
      from = to;
    }
    await new Promise((r) => setImmediate(r));
    await t.flushed();
  };
  const answers = () => written.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  return { t, feed, delivered, refused, answers };
}

const line = (o: unknown) => `${JSON.stringify(o)}\n`;
const call = (id: unknown, args: unknown, extra: Record<string, unknown> = {}) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "x", arguments: args, ...extra } });

// Exactly `n` values (the request's own values included), so n = bound passes and n = bound + 1 does not.
function withValues(n: number, id: unknown): Record<string, unknown> {
  const base = call(id, { list: [] as number[] });
  const count = (v: unknown): number => (v === null || typeof v !== "object" ? 1 : 1 + Object.values(v).reduce((a: number, x) => a + count(x), 0));
  const fill = n - count(base);
  (base.params.arguments as { list: number[] }).list = Array.from({ length: fill }, (_, i) => i % 10);
  return base;
}

describe("per-message bounds", () => {
  const MESSAGES = {
    values: `Invalid request: the message holds more than ${FRAME_BOUNDS.values} JSON values (serve's limit per message)`,
    strings: `Invalid request: the message holds more than ${FRAME_BOUNDS.strings} strings (serve's limit per message)`,
    depth: `Invalid request: the message nests arrays and objects more than ${FRAME_BOUNDS.depth} levels deep (serve's limit per message)`,
  };

  test("a request one value over the bound is refused under its own id; one at the bound is handed on", async () => {
    const r = await rig();
    await r.feed(line(INIT) + line(withValues(FRAME_BOUNDS.values, 1)) + line(withValues(FRAME_BOUNDS.values + 1, 2)) + line({ jsonrpc: "2.0", id: 3, method: "ping" }));
    expect(r.delivered.map((m) => (m as { id: unknown }).id)).toEqual(["init", 1, 3]);
    expect(r.answers()).toEqual([{ jsonrpc: "2.0", id: 2, error: { code: -32600, message: MESSAGES.values } }]);
    expect(r.refused).toEqual([{ kind: "refuse", reply: r.answers()[0] as never, method: "tools/call", bound: "values" }]);
  });

  test("every place and shape of many tiny values is refused with the bound it broke", async () => {
    const many = (unit: string, n: number) => `[${Array.from({ length: n }, () => unit).join(",")}]`;
    const cases: Array<[string, string, keyof typeof MESSAGES]> = [
      // top level: an extra member (a frame within the bounds would be refused for it, after parsing)
      ["top level", `{"jsonrpc":"2.0","junk":${many("{}", 20_000)},"id":"top","method":"tools/call"}`, "values"],
      ["tool arguments", `{"jsonrpc":"2.0","id":"args","method":"tools/call","params":{"name":"x","arguments":{"a":${many("0", 20_000)}}}}`, "values"],
      ["_meta", `{"jsonrpc":"2.0","id":"meta","method":"tools/list","params":{"_meta":{"a":${many("[]", 20_000)}}}}`, "values"],
      ["strings", `{"jsonrpc":"2.0","id":"str","method":"ping","params":{"a":${many('""', 10_001)}}}`, "strings"],
      ["member names", `{"jsonrpc":"2.0","id":"names","method":"ping","params":{${Array.from({ length: 10_001 }, (_, i) => `"k${i}":1`).join(",")}}}`, "strings"],
      ["nesting", `{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"a":${"[".repeat(70)}${"]".repeat(70)}}}`, "depth"],
      // the id after the params it follows, spelled with an escape: still found and answered
      ["id last, escaped", `{"jsonrpc":"2.0","method":"tools/call","params":{"a":${many("{}", 20_000)}},"\\u0069d":"late"}`, "values"],
    ];
    for (const [label, frame, bound] of cases) {
      const r = await rig();
      await r.feed(`${line(INIT)}${frame}\n${line({ jsonrpc: "2.0", id: "after", method: "ping" })}`, label.length);
      const id = (JSON.parse(frame) as { id?: string }).id ?? "late";
      expect([label, r.answers()]).toEqual([label, [{ jsonrpc: "2.0", id, error: { code: -32600, message: MESSAGES[bound] } }]]);
      expect([label, r.delivered.map((m) => (m as { id: unknown }).id)]).toEqual([label, ["init", "after"]]);
    }
  });

  test("a request whose id and method precede the bound is answered before the rest of it arrives, once", async () => {
    const r = await rig();
    await r.feed(line(INIT));
    const head = `{"jsonrpc":"2.0","id":"early","method":"tools/call","params":{"name":"x","arguments":{"a":[${Array.from({ length: 20_000 }, () => "{}").join(",")}`;
    await r.feed(head);
    expect(r.answers()).toEqual([{ jsonrpc: "2.0", id: "early", error: { code: -32600, message: MESSAGES.values } }]);
    // the rest, whatever it holds (a second id included), is only read up to its newline
    await r.feed(`${",{}".repeat(50_000)}]},"id":"other"}}\n${line({ jsonrpc: "2.0", id: "next", method: "ping" })}`);
    expect(r.answers()).toHaveLength(1);
    expect(r.refused).toHaveLength(1);
    expect(r.delivered.map((m) => (m as { id: unknown }).id)).toEqual(["init", "next"]);
  });

  test("a notification over a bound is dropped and reported, and the connection carries on", async () => {
    const r = await rig();
    const big = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"_meta":{"x":[${Array.from({ length: 20_000 }, () => "{}").join(",")}]}}}`;
    await r.feed(`${line(INIT)}${big}\n${line({ jsonrpc: "2.0", id: 5, method: "ping" })}`);
    expect(r.answers()).toEqual([]);
    expect(r.refused).toEqual([{ kind: "drop", reason: "over_bounds", bound: "values" }]);
    expect(r.delivered.map((m) => (m as { id?: unknown }).id)).toEqual(["init", 5]);
  });
});

describe("frames JSON-RPC answers with id null", () => {
  test("a batch, a line that is not JSON and a value that is not an object each get one answer", async () => {
    const r = await rig();
    // (blank lines between messages are no messages: they get nothing)
    await r.feed(`${line(INIT)}\n \r\n[${JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" })}]\n[]\n{not json\n5\n"x"\nnull\n${line({ jsonrpc: "2.0", id: 10, method: "ping" })}`);
    const batch = { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid request: batches (JSON arrays) are not supported; send one message per line" } };
    const notObject = { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid request: a message must be a JSON object" } };
    expect(r.answers()).toEqual([batch, batch, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the line is not valid JSON" } }, notObject, notObject, notObject]);
    expect(r.delivered.map((m) => (m as { id: unknown }).id)).toEqual(["init", 10]);
  });
});

describe("the era lock", () => {
  const discover = (id: unknown, meta: Record<string, unknown> = META) => ({ jsonrpc: "2.0", id, method: "server/discover", params: { _meta: meta } });

  test("a 2026 connection refuses 2025 requests and drops 2025 notifications", async () => {
    const r = await rig();
    await r.feed(
      line(discover(1)) +
        line({ jsonrpc: "2.0", id: 2, method: "tools/list" }) +
        line({ ...INIT, id: 3 }) +
        line({ jsonrpc: "2.0", method: "notifications/initialized" }) +
        line({ jsonrpc: "2.0", id: 4, method: "tools/list", params: { _meta: META } }),
    );
    expect(r.delivered.map((m) => (m as { id?: unknown }).id)).toEqual([1, 4]);
    expect(r.answers()).toEqual([
      { jsonrpc: "2.0", id: 2, error: { code: -32602, message: "Invalid params: this connection speaks 2026-07-28, fixed by its first message; every request needs the _meta envelope (io.modelcontextprotocol/protocolVersion)" } },
      { jsonrpc: "2.0", id: 3, error: { code: -32022, message: "Unsupported protocol version: this connection speaks 2026-07-28, fixed by its first message; a 2025 initialize needs a new connection", data: { supported: ["2026-07-28"], requested: "2025-06-18" } } },
    ]);
    expect(r.refused.at(-1)).toEqual({ kind: "drop", reason: "wrong_era" });
  });

  test("a 2025 connection refuses 2026 requests, server/discover first, and a second initialize", async () => {
    const r = await rig();
    await r.feed(line(INIT) + line(discover(2)) + line({ jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: META } }) + line({ jsonrpc: "2.0", id: 4, method: "tools/list" }) + line({ ...INIT, id: 5, params: { ...INIT.params, protocolVersion: "2024-11-05" } }));
    expect(r.delivered.map((m) => (m as { id?: unknown }).id)).toEqual(["init", 4]);
    const answers = r.answers();
    expect(answers.map((a) => [a.id, a.error?.code, a.error?.message])).toEqual([
      ...[2, 3].map((id) => [id, -32022, "Unsupported protocol version: this connection speaks the 2025 era, fixed by its first message; a 2026-07-28 request needs a new connection"]),
      // nor can the version be negotiated again
      [5, -32600, "Invalid request: this connection is already initialized; initialize opens a 2025 connection once"],
    ]);
    expect(answers[0]!.error!.data).toMatchObject({ requested: "2026-07-28" });
    expect((answers[0]!.error!.data as { supported: string[] }).supported).toContain("2025-06-18");
  });

  test("an opening refused for its revision or envelope fixes nothing: the client may fall back to initialize", async () => {
    const r = await rig();
    await r.feed(line(discover(1, { ...META, "io.modelcontextprotocol/protocolVersion": "2099-01-01" })) + line(discover(2, { "io.modelcontextprotocol/protocolVersion": "2026-07-28" })) + line(INIT) + line(discover(3)));
    // the first two reach the SDK (it answers them), the fallback opens a 2025 connection
    expect(r.delivered.map((m) => (m as { id?: unknown }).id)).toEqual([1, 2, "init"]);
    expect(r.answers().map((a) => [a.id, a.error?.code])).toEqual([[3, -32022]]);
  });
});

describe("requests handed on are tracked until answered", () => {
  test("shutdown can wait for the answers and answer whatever is left, exactly once", async () => {
    const r = await rig();
    await r.feed(line(INIT) + line({ jsonrpc: "2.0", id: 7, method: "ping" }) + line({ jsonrpc: "2.0", method: "notifications/initialized" }));
    expect(r.t.pendingRequests).toBe(2);
    const waiting = r.t.answeredWithin(60_000);
    await r.t.send({ jsonrpc: "2.0", id: "init", result: {} } as never);
    expect(r.t.pendingRequests).toBe(1);
    // nothing answers id 7: the wait ends unanswered when its time is up
    expect(await r.t.answeredWithin(1)).toBe(false);
    r.t.answerUnanswered(SHUTDOWN_ERROR);
    await r.t.flushed();
    expect(await waiting).toBe(true);
    expect(r.t.pendingRequests).toBe(0);
    r.t.answerUnanswered(SHUTDOWN_ERROR);
    await r.t.flushed();
    expect(r.answers()).toEqual([
      { jsonrpc: "2.0", id: "init", result: {} },
      { jsonrpc: "2.0", id: 7, error: SHUTDOWN_ERROR },
    ]);
  });
});

describe("the server's first answer of its own", () => {
  const LIST = { jsonrpc: "2.0", id: 2, method: "tools/list" };
  const answerText = (id: unknown, result: unknown) => `${JSON.stringify({ result, jsonrpc: "2.0", id })}\n`;

  test("the answers to the opening's requests are dropped and not counted: told once, at the next request's answer", async () => {
    const events: string[] = [];
    const answered = new Map<string | number, string>([
      ["init", answerText("init", { ok: 1 })],
      [2, answerText(2, { tools: [] })],
    ]);
    const r = await rig({ answered, onFirstOwnAnswer: () => events.push("first own answer") });
    await r.feed(line(INIT) + line({ jsonrpc: "2.0", method: "notifications/initialized" }) + line(LIST) + line({ jsonrpc: "2.0", id: 3, method: "ping" }) + line({ jsonrpc: "2.0", id: 4, method: "ping" }));
    await r.t.send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x" } } as never);
    await r.t.send({ result: { ok: 1 }, jsonrpc: "2.0", id: "init" } as never);
    await r.t.send({ result: { tools: [] }, jsonrpc: "2.0", id: 2 } as never);
    expect(events).toEqual([]);
    await r.t.send({ jsonrpc: "2.0", id: 3, result: {} } as never);
    expect(events).toEqual(["first own answer"]);
    await r.t.send({ jsonrpc: "2.0", id: 4, result: {} } as never);
    await r.t.flushed();
    expect(events).toEqual(["first own answer"]);
    // the replayed answers were dropped; only the notification and the pings' answers were written
    expect(r.answers().map((a) => a.id)).toEqual([undefined, 3, 4]);
  });

  test("an answer of the server's own before the replay is over is the one told, once", async () => {
    const events: string[] = [];
    const r = await rig({ answered: new Map([["init", answerText("init", { ok: 1 })]]), onFirstOwnAnswer: () => events.push("first own answer") });
    await r.feed(line(INIT) + line({ jsonrpc: "2.0", id: 9, method: "ping" }));
    await r.t.send({ jsonrpc: "2.0", id: 9, result: {} } as never);
    expect(events).toEqual(["first own answer"]);
    await r.t.send({ result: { ok: 1 }, jsonrpc: "2.0", id: "init" } as never);
    await r.t.flushed();
    expect(events).toEqual(["first own answer"]);
  });

  test("with no answers from the opening: told at the server's first answer (an error too), not at a notification", async () => {
    const events: string[] = [];
    const r = await rig({ onFirstOwnAnswer: () => events.push("first own answer") });
    await r.feed(line(INIT));
    await r.t.send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x" } } as never);
    expect(events).toEqual([]);
    await r.t.send({ jsonrpc: "2.0", id: "init", error: { code: -32602, message: "no" } } as never);
    await r.t.flushed();
    expect(events).toEqual(["first own answer"]);
  });
});
