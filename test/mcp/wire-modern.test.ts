// The 2026-07-28 era on the wire, in raw frames through the real `serverfs serve`: the
// server/discover opening, the per-request envelope, `resultType`, the cache hints on lists, a
// deterministic tools/list, and the same one-line coded refusals as the 2025 era. The era is final:
// a 2025-era `initialize` or a request without the envelope is refused, even right after the
// opening `server/discover`, and the connection stays 2026; a forged elicitation state is refused
// before any tool runs.
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { removeDir, tempDir } from "./helpers.ts";
import { type Frame, RawSession, type Reply } from "./raw-session.ts";
import { FILE_MUTATION_TOOLS, FILE_READ_TOOLS } from "../support/tool-names.ts";

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

let base: string;
let s: RawSession;

const req = (method: string, params: Record<string, unknown> = {}): Frame => ({ method, params: { ...params, _meta: META } });

function coded(r: Reply, code: number, message: string): void {
  expect(r.result).toBeUndefined();
  expect([r.error?.code, r.error?.message]).toEqual([code, message]);
}

beforeAll(async () => {
  base = tempDir();
  fs.mkdirSync(path.join(base, "wd"));
  fs.writeFileSync(path.join(base, "wd", "a.txt"), "alpha\n");
  s = new RawSession(path.join(base, "wd"), base);
});
afterAll(async () => {
  if (s.proc.exitCode === null) await s.close();
  removeDir(base);
});

test("server/discover advertises 2026-07-28, the tools and the server's identity", async () => {
  const r = await s.request(req("server/discover"));
  expect(r.result?.resultType).toBe("complete");
  expect(r.result?.supportedVersions).toContain("2026-07-28");
  expect(r.result?.capabilities).toMatchObject({ tools: {}, resources: {} });
  expect((r.result?._meta as Record<string, unknown>)["io.modelcontextprotocol/serverInfo"]).toMatchObject({ name: "serverfs" });
});

test("tools/list: resultType, ttlMs and cacheScope, byte-identical on every call", async () => {
  const a = await s.request(req("tools/list"));
  const b = await s.request(req("tools/list"));
  expect([a.result?.resultType, a.result?.ttlMs, a.result?.cacheScope]).toEqual(["complete", 300_000, "private"]);
  expect(JSON.stringify(b.result)).toBe(JSON.stringify(a.result));
  expect((a.result?.tools as Array<{ name: string }>).map((t) => t.name)).toEqual([
    ...FILE_READ_TOOLS,
    ...FILE_MUTATION_TOOLS,
  ]);
  const t = await s.request(req("resources/templates/list"));
  expect([t.result?.ttlMs, t.result?.cacheScope]).toEqual([300_000, "private"]);
});

test("tools/call and resources/read answer with resultType; coded results stay coded", async () => {
  const r = await s.request(req("tools/call", { name: "read_text_file", arguments: { workdir: "wd", path: "a.txt" } }));
  expect(r.result?.resultType).toBe("complete");
  expect((r.result?.structuredContent as { content: string }).content).toBe("alpha\n");
  const miss = await s.request(req("tools/call", { name: "read_text_file", arguments: { workdir: "wd", path: "nope" } }));
  expect([miss.result?.isError, (miss.result?.structuredContent as { code: string }).code]).toEqual([true, "PATH_NOT_FOUND"]);
  const res = await s.request(req("resources/read", { uri: "serverfs://wd/a.txt" }));
  expect([res.result?.ttlMs, (res.result?.contents as Array<{ text: string }>)[0]!.text]).toEqual([0, "alpha\n"]);
});

test("malformed 2026 requests get the same one-line coded refusals", async () => {
  coded(await s.request(req("tools/call", { name: "list_workdirs", arguments: ["x"] })), -32602, "Invalid params: 'arguments' must be an object");
  coded(await s.request(req("tools/call", { name: 5, arguments: {} })), -32602, "Invalid params: 'name' must be a string");
  coded(await s.request(req("resources/read", { uri: 9 })), -32602, "Invalid params: 'uri' must be a string");
  coded(await s.request({ method: "tools/call", params: [1] }), -32602, "Invalid params: 'params' must be an object");
  coded(await s.request(req("tasks/list")), -32601, "Method not found");
  const unknown = await s.request(req("tools/call", { name: "nope", arguments: {} }));
  expect(unknown.error?.code).toBe(-32602);
});

test("a forged elicitation state is refused before any tool runs", async () => {
  const r = await s.request(req("tools/call", { name: "list_workdirs", arguments: {}, requestState: "forged", inputResponses: {} }));
  expect([r.error?.code, r.error?.message]).toEqual([-32602, "Invalid or expired requestState"]);
});

test("a 2025 initialize on the pinned 2026 connection is refused; the connection carries on", async () => {
  const r = await s.request({ method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
  expect(r.result).toBeUndefined();
  expect(typeof r.error?.code).toBe("number");
  expect((await s.request(req("tools/list"))).result?.resultType).toBe("complete");
});

test("right after server/discover, a request without the envelope cannot turn the connection into a 2025 one", async () => {
  const fresh = new RawSession(path.join(base, "wd"), base);
  try {
    expect((await fresh.request(req("server/discover"))).result?.supportedVersions).toContain("2026-07-28");
    coded(
      await fresh.request({ method: "tools/list" }),
      -32602,
      "Invalid params: this connection speaks 2026-07-28, fixed by its first message; every request needs the _meta envelope (io.modelcontextprotocol/protocolVersion)",
    );
    fresh.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const init = await fresh.request({ method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
    expect([init.error?.code, init.error?.message, init.error?.data]).toEqual([
      -32022,
      "Unsupported protocol version: this connection speaks 2026-07-28, fixed by its first message; a 2025 initialize needs a new connection",
      { supported: ["2026-07-28"], requested: "2025-06-18" },
    ]);
    // still 2026: discover answers, and results carry the 2026 members
    expect((await fresh.request(req("server/discover"))).result?.resultType).toBe("complete");
    expect((await fresh.request(req("tools/list"))).result?.resultType).toBe("complete");
  } finally {
    await fresh.close();
  }
});
