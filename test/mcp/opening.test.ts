// The opening answered before the SDK is loaded (src/mcp/opening.ts) says exactly what the SDK
// says: every frame it answers is fed to the real pipeline serve runs after it (the wire gate and
// era lock in a GatedStdioTransport, the SDK's serveStdio, serverfs's handlers), whose answer
// must be the same bytes. Frames of any other shape are handed over, never answered. The replay
// into that pipeline drops the SDK's answers to what was already answered, and says so when one
// differs; the stdin relay hands the transport every byte in order.
import { describe, expect, test } from "bun:test";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { registryFromWorkdirArgs } from "../../src/config/load.ts";
import type { Registry } from "../../src/config/types.ts";
import { createFileService } from "../../src/fs/index.ts";
import { createLogger } from "../../src/log.ts";
import { OPENING_FRAME_BYTES, OPENING_PROTOCOL_VERSIONS, OpeningAnswerer, type OpeningStep, openingPlan } from "../../src/mcp/opening.ts";
import { createMcpServer } from "../../src/mcp/server.ts";
import { StdinRelay } from "../../src/mcp/stdin-relay.ts";
import { GatedStdioTransport } from "../../src/mcp/transport.ts";
import { mulberry32 } from "../support/prng.ts";
import { repetitions } from "../support/stress.ts";

const line = (o: unknown) => `${JSON.stringify(o)}\n`;

async function deployment(specs: string[], binary = false): Promise<Registry> {
  const { registry } = await registryFromWorkdirArgs(specs, "/");
  for (const w of registry.workdirs) w.binary_transfer_enabled = binary;
  return registry;
}

interface Pipeline {
  /** Write `text` to stdin, then wait until `answers` lines have been written to stdout. */
  feed(text: string, answers: number): Promise<string[]>;
  mismatches: number;
  close(): Promise<void>;
}

/** The pipeline serveOverStdio runs, over PassThrough streams; `answered` as serve passes it after an opening. */
function pipeline(registry: Registry, answered?: ReadonlyMap<string | number, string>): Pipeline {
  const files = createFileService(registry);
  const mcp = createMcpServer({ registry, files, logger: createLogger({ sink: () => {} }) });
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let written = "";
  stdout.on("data", (c: Buffer) => (written += c.toString("utf8")));
  const state = { mismatches: 0 };
  const transport = new GatedStdioTransport(stdin, stdout, {
    maxFrameBytes: 32 << 20,
    requests: mcp.requests,
    ...(answered ? { answered, onAnsweredMismatch: () => (state.mismatches += 1) } : {}),
  });
  const entry = serveStdio(mcp.build, { transport });
  const lines = () => written.split("\n").filter((l) => l !== "").map((l) => `${l}\n`);
  return {
    async feed(text, answers) {
      stdin.write(text);
      while (lines().length < answers) await new Promise((r) => setImmediate(r));
      await transport.flushed();
      return lines();
    },
    get mismatches() {
      return state.mismatches;
    },
    async close() {
      await entry.close();
      files.close();
    },
  };
}

function steps(registry: Registry, frames: string[]): OpeningStep[] {
  const answerer = new OpeningAnswerer(openingPlan(registry)!);
  return frames.map((f) => answerer.step(Buffer.from(f.replace(/\n$/, ""))));
}

function answersOf(all: OpeningStep[]): string[] {
  return all.flatMap((s) => (s.kind === "answer" ? [s.text] : []));
}

const init = (id: unknown, params: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "host", version: "1" }, ...params },
});
const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
const list = (id: unknown, extra: Record<string, unknown> = {}) => ({ jsonrpc: "2.0", id, method: "tools/list", ...extra });

/** Answer `frames` from the opening, then through the SDK pipeline: the same bytes. */
async function expectSameAnswers(registry: Registry, frames: string[]): Promise<void> {
  const fast = answersOf(steps(registry, frames));
  const sdk = pipeline(registry);
  try {
    expect(await sdk.feed(frames.join(""), fast.length)).toEqual(fast);
  } finally {
    await sdk.close();
  }
}

describe("the opening's answers are the SDK's, byte for byte", () => {
  test("every protocol version it echoes, on each --workdir surface", async () => {
    for (const [specs, binary] of [
      [["a=/a"], false],
      [["a=/a:rw", "b=/b"], false],
      [["a=/a"], true],
      [["a=/a:rw"], true],
    ] as const) {
      const registry = await deployment([...specs], binary);
      for (const version of OPENING_PROTOCOL_VERSIONS) {
        const frames = [line(init(1, { protocolVersion: version })), line(initialized), line(list(2))];
        expect(steps(registry, frames).map((s) => s.kind)).toEqual(["answer", "silent", "answer"]);
        await expectSameAnswers(registry, frames);
      }
    }
  });

  test("the versions it echoes are exactly the SDK's 2025-era versions", () => {
    expect([...OPENING_PROTOCOL_VERSIONS]).toEqual(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v < "2026-07-28"));
  });

  test("ids, capabilities and client infos of the shapes it answers", async () => {
    const registry = await deployment(["a=/a:rw"]);
    const cases: Array<[unknown, Record<string, unknown>, unknown]> = [
      [0, {}, 1],
      [-7, { capabilities: { roots: {} } }, "list"],
      [Number.MAX_SAFE_INTEGER, { capabilities: { roots: { listChanged: true } } }, Number.MIN_SAFE_INTEGER],
      ["", { capabilities: { roots: { listChanged: false }, sampling: {}, elicitation: {} } }, " "],
      ["ü\u0000\u2028\"x", { capabilities: { sampling: { context: {}, tools: {} }, elicitation: { form: {}, url: {} } } }, "é"],
      [1e3, { clientInfo: { name: "n", version: "v", title: "t", websiteUrl: "https://example.com", description: "d" } }, 1001],
    ];
    for (const [initId, params, listId] of cases) {
      for (const middle of [[], [line(initialized)], [line({ ...initialized, params: {} })]]) {
        const frames = [line(init(initId, params)), ...middle, line(list(listId, { params: {} }))];
        expect(steps(registry, frames).filter((s) => s.kind === "answer")).toHaveLength(2);
        await expectSameAnswers(registry, frames);
      }
    }
  });

  test("random frames near the opening's shapes: whatever it answers, the SDK answers the same", async () => {
    const seed = 0x5eed0;
    const random = mulberry32(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const values: unknown[] = [{}, [], null, true, 1, 1.5, "s", "2025-06-18", { listChanged: true }, { x: {} }, 2 ** 60];
    const mutate = (o: Record<string, unknown>): Record<string, unknown> => {
      const copy = structuredClone(o);
      const keys = Object.keys(copy);
      const r = random();
      if (r < 0.3) copy[pick([...keys, "extra", "_meta", "task", "cursor"])] = pick(values);
      else if (r < 0.45 && keys.length > 0) delete copy[pick(keys)];
      return copy;
    };
    const registry = await deployment(["a=/a"]);
    let answered = 0;
    let handed = 0;
    for (let i = 0; i < repetitions(60, 600); i++) {
      const base = init(pick([1, "a", 2.5, null, [1]]));
      const params = mutate(base.params);
      if (random() < 0.5) params.capabilities = mutate({ roots: mutate({ listChanged: true }), sampling: {}, elicitation: mutate({ form: {} }) });
      if (random() < 0.3) params.clientInfo = mutate({ name: "h", version: "1" });
      const frames = [line(random() < 0.2 ? mutate(base) : { ...base, params }), line(random() < 0.2 ? mutate(initialized) : initialized), line(random() < 0.2 ? mutate(list(9)) : list(9))];
      const all = steps(registry, frames);
      if (all[0]!.kind !== "answer") {
        handed += 1;
        continue;
      }
      answered += 1;
      // The SDK answers the opening's answered frames the same; what comes after a hand-over is its own.
      const upTo = all.findIndex((s) => s.kind === "handover");
      const kept = upTo === -1 ? frames : frames.slice(0, upTo);
      try {
        await expectSameAnswers(registry, kept);
      } catch (err) {
        throw new Error(`seed ${seed}, case ${i}: ${kept.join("")}\n${String(err)}`);
      }
    }
    expect(answered).toBeGreaterThan(0);
    expect(handed).toBeGreaterThan(0);
  });
});

describe("frames the opening hands over", () => {
  test("anything but the exact shapes, in the opening's order", async () => {
    const registry = await deployment(["a=/a"]);
    const first = (frame: string) => steps(registry, [frame])[0]!.kind;
    const afterInit = (frame: string) => steps(registry, [line(init(1)), frame])[1]!.kind;
    expect(first(line(init(1)))).toBe("answer");
    for (const frame of [
      line(list(1)),
      line(initialized),
      line({ ...init(1), extra: 1 }),
      line({ ...init(1), jsonrpc: "1.0" }),
      line(init(1.5)),
      line(init(2 ** 53)),
      line(init(null)),
      line(init(1, { protocolVersion: "2099-01-01" })),
      line(init(1, { protocolVersion: "2026-07-28" })),
      line(init(1, { _meta: {} })),
      line(init(1, { task: {} })),
      line(init(1, { capabilities: { experimental: {} } })),
      line(init(1, { capabilities: { roots: { listChanged: "yes" } } })),
      line(init(1, { capabilities: { sampling: { context: { a: 1 } } } })),
      line(init(1, { capabilities: { elicitation: { form: { applyDefaults: true } } } })),
      line(init(1, { clientInfo: { name: "h" } })),
      line(init(1, { clientInfo: { name: "h", version: "1", icons: [] } })),
      line({ jsonrpc: "2.0", id: 1, method: "server/discover", params: {} }),
      ` ${line(init(1))}`,
      `${line(init(1)).trimEnd()} \n`,
      "\n",
      "{not json}\n",
      `[${JSON.stringify(init(1))}]\n`,
      line(init(1, { clientInfo: { name: "x".repeat(OPENING_FRAME_BYTES), version: "1" } })),
    ]) {
      expect(first(frame)).toBe("handover");
    }
    expect(afterInit(line(initialized))).toBe("silent");
    for (const frame of [
      line(init(2)),
      line(list(1)),
      line(list("1")),
      line(list(2, { params: { cursor: "c" } })),
      line(list(2, { params: { _meta: { progressToken: 1 } } })),
      line({ ...initialized, id: 3 }),
      line({ ...initialized, params: { _meta: {} } }),
      line({ jsonrpc: "2.0", id: 2, method: "ping" }),
      line({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "list_workdirs", arguments: {} } }),
    ]) {
      expect(afterInit(frame)).toBe("handover");
    }
    const all = steps(registry, [line(init(1)), line(initialized), line(initialized), line(list(2))]);
    expect(all.map((s) => s.kind)).toEqual(["answer", "silent", "handover", "handover"]);
    const listed = steps(registry, [line(init(1)), line(list(2)), line(list(3))]);
    expect(listed.map((s) => s.kind)).toEqual(["answer", "answer", "handover"]);
  });

  test("a \\r before the newline is the transport's too: answered the same", async () => {
    const registry = await deployment(["a=/a"]);
    const frames = [`${line(init(1)).trimEnd()}\r\n`, `${line(list(2)).trimEnd()}\r\n`];
    expect(steps(registry, frames).map((s) => s.kind)).toEqual(["answer", "answer"]);
    await expectSameAnswers(registry, frames);
  });

  test("no plan without default limits or with the Agent Bridge enabled", async () => {
    const registry = await deployment(["a=/a"]);
    expect(openingPlan(registry)).toBeDefined();
    expect(openingPlan({ ...registry, limits: { ...registry.limits, max_list_entries: registry.limits.max_list_entries + 1 } })).toBeUndefined();
    expect(openingPlan({ ...registry, agent: { ...registry.agent, enabled: true } })).toBeUndefined();
  });
});

describe("the replay after an opening", () => {
  test("the SDK's answers to the answered requests are dropped, and the session goes on", async () => {
    const registry = await deployment(["a=/a"]);
    const frames = [line(init(1)), line(initialized), line(list(2))];
    const answered = new Map(steps(registry, frames).flatMap((s) => (s.kind === "answer" ? [[s.id, s.text] as const] : [])));
    const p = pipeline(registry, answered);
    try {
      const out = await p.feed([...frames, line({ jsonrpc: "2.0", id: 3, method: "ping" }), line(init(4))].join(""), 2);
      // Only the answers after the opening: the ping's, and the refusal of a second initialize
      // (the era lock saw the replayed one).
      expect(out.map((l) => JSON.parse(l)).sort((a, b) => a.id - b.id)).toEqual([
        { result: {}, jsonrpc: "2.0", id: 3 },
        { jsonrpc: "2.0", id: 4, error: { code: -32600, message: expect.stringContaining("already initialized") } },
      ]);
      expect(p.mismatches).toBe(0);
    } finally {
      await p.close();
    }
  });

  test("an answer that differs from the one written is reported, and still not written again", async () => {
    const registry = await deployment(["a=/a"]);
    const p = pipeline(registry, new Map([[1, "not the SDK's answer\n"]]));
    try {
      expect(await p.feed([line(init(1)), line({ jsonrpc: "2.0", id: 2, method: "ping" })].join(""), 1)).toEqual([line({ result: {}, jsonrpc: "2.0", id: 2 })]);
      expect(p.mismatches).toBe(1);
    } finally {
      await p.close();
    }
  });
});

describe("the stdin relay", () => {
  test("chunks and errors read before the transport attached reach it in order, then the rest as they come; the tap sees each once", async () => {
    const source = new PassThrough();
    const relay = new StdinRelay(source);
    const tapped: string[] = [];
    relay.tap((c) => tapped.push(c.toString()));
    source.write("a");
    source.write("b");
    await new Promise((r) => setImmediate(r));
    source.emit("error", new Error("boom"));
    source.write("c");
    await new Promise((r) => setImmediate(r));
    relay.untap();
    const seen: string[] = [];
    relay.on("data", (c) => seen.push(c.toString()));
    relay.on("error", (e) => seen.push(`error:${e.message}`));
    // Not from inside on(): the transport attaches its error listener right after the data one.
    expect(seen).toEqual([]);
    await Promise.resolve();
    expect(seen).toEqual(["a", "b", "error:boom", "c"]);
    source.write("d");
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(["a", "b", "error:boom", "c", "d"]);
    expect(tapped).toEqual(["a", "b", "c"]);
    expect(relay.listenerCount("data")).toBe(1);
  });

  test("it stays the source's only reader: nothing is emitted to a stream with no data listener", () => {
    const source = new EventEmitter() as EventEmitter & { pause(): void; resume(): void };
    source.pause = () => {};
    source.resume = () => {};
    const relay = new StdinRelay(source as unknown as NodeJS.ReadableStream);
    expect(source.listenerCount("data")).toBe(1);
    const listener = () => {};
    relay.on("data", listener);
    relay.off("data", listener);
    expect(source.listenerCount("data")).toBe(1);
    relay.close();
    expect(source.listenerCount("data")).toBe(0);
  });
});
