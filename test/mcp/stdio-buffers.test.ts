// serve's stdio framing: GatedStdioTransport reads exactly what the SDK's ReadBuffer reads (any
// chunking, CRLF, multi-byte characters cut between chunks, a malformed frame refused once, the
// size cap closing the transport),
// framePieces writes JSON that parses back to the same message without ever building it whole,
// and through the real serve process large answers and requests arrive intact, never mixed with
// the small answers sent around them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ReadBuffer } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { CallToolRequestSchema, PingRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { PassThrough } from "node:stream";
import type { z } from "zod";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { framePieces } from "../../src/mcp/stdio-buffers.ts";
import { GatedStdioTransport } from "../../src/mcp/transport.ts";
import { ok, removeDir, tempDir } from "./helpers.ts";

/** Feed `bytes` to a real GatedStdioTransport over a PassThrough, cut at `cuts`; what it delivers. */
async function drainGated(bytes: Buffer, cuts: number[], maxFrameBytes = 1 << 20): Promise<{ out: unknown[]; closed: boolean }> {
  const stdin = new PassThrough();
  const requests = new Map<string, z.ZodType>([
    ["ping", PingRequestSchema],
    ["tools/call", CallToolRequestSchema],
  ]);
  const out: unknown[] = [];
  const onRefused = (v: { kind: string; reply?: { error: { code: number } } }) => out.push(v.reply?.error.code === -32700 ? "malformed" : v);
  const t = new GatedStdioTransport(stdin, new PassThrough(), { maxFrameBytes, requests, onRefused });
  let closed = false;
  t.onmessage = (m) => out.push(m);
  t.onerror = (e) => out.push(e.message.includes("exceeds") ? "too-large" : "malformed");
  t.onclose = () => {
    closed = true;
  };
  await t.start();
  let from = 0;
  for (const to of [...cuts, bytes.length]) {
    stdin.write(Buffer.from(bytes.subarray(from, to)));
    from = to;
  }
  await new Promise((r) => setImmediate(r));
  return { out, closed };
}

/** What the SDK's own ReadBuffer makes of the same bytes in one piece (the contract kept). */
function sdkReads(bytes: Buffer): unknown[] {
  const buf = new ReadBuffer();
  buf.append(bytes);
  const out: unknown[] = [];
  for (;;) {
    let m: unknown;
    try {
      m = buf.readMessage();
    } catch {
      out.push("malformed");
      continue;
    }
    if (m === null) return out;
    out.push(m);
  }
}

describe("GatedStdioTransport framing", () => {
  const messages = [
    { jsonrpc: "2.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x", arguments: { s: "é😀日\u2028".repeat(500) } } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
  ];
  const wire = Buffer.from(`${JSON.stringify(messages[0])}\r\n${JSON.stringify(messages[1])}\n{not json}\n${JSON.stringify(messages[2])}\n`);

  test("reads what the SDK ReadBuffer reads, for every way of cutting the stream", async () => {
    const want = sdkReads(wire);
    expect(want).toEqual([messages[0], messages[1], "malformed", messages[2]]);
    let seed = 3;
    for (let t = 0; t < 300; t++) {
      const cuts: number[] = [];
      for (let at = 0; ; ) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        at += 1 + ((seed >>> 16) % 900);
        if (at >= wire.length) break;
        cuts.push(at);
      }
      expect((await drainGated(wire, cuts)).out).toEqual(want);
    }
  });

  test("a frame over the cap is reported once and closes the transport, delivering nothing after it", async () => {
    const big = Buffer.from(`${JSON.stringify(messages[0])}\n{"jsonrpc":"2.0",${" ".repeat(200)}\n${JSON.stringify(messages[0])}\n`);
    const { out, closed } = await drainGated(big, [30, 90], 100);
    expect(out).toEqual([messages[0], "too-large"]);
    expect(closed).toBe(true);
  });
});

describe("framePieces", () => {
  test("large strings are written in bounded pieces that parse back to the same message", () => {
    const awkward = `${"😀".repeat(600_000)}"\\\u0000\u2028é`; // surrogate pairs straddle every slice boundary
    const blob = Buffer.alloc(3_000_000, 0xa5).toString("base64");
    const message = { jsonrpc: "2.0", id: 9, result: { content: [{ type: "resource", resource: { blob } }, { type: "text", text: awkward }], structuredContent: { a: 1, s: "\u0000serverfs-not-a-placeholder-0" } } };
    const pieces = [...framePieces(message)];
    expect(pieces.length).toBeGreaterThan(6);
    for (const p of pieces) expect(p.length).toBeLessThanOrEqual(6 * 1024 * 1024 + 64);
    const text = pieces.join("");
    expect(text.endsWith("\n")).toBe(true);
    expect(text.indexOf("\n")).toBe(text.length - 1); // one frame, one line
    expect(JSON.parse(text)).toEqual(message);
    expect([...framePieces({ jsonrpc: "2.0", id: 1, result: {} })]).toEqual(['{"jsonrpc":"2.0","id":1,"result":{}}\n']);
  });
});

describe("through the real serve process", () => {
  let base: string;
  let client: Client;
  beforeAll(async () => {
    base = tempDir();
    fs.mkdirSync(path.join(base, "rw"));
    const toml = path.join(base, "serverfs.toml");
    fs.writeFileSync(toml, `[[workdirs]]\nalias = "rw"\npath = ${JSON.stringify(path.join(base, "rw"))}\nread_only = false\nbinary_transfer_enabled = true\n`);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.resolve(import.meta.dir, "../../src/cli.ts"), "serve", "--config", toml],
      cwd: base,
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base },
      maxBufferSize: 64 * 1024 * 1024,
    } as ConstructorParameters<typeof StdioClientTransport>[0]);
    client = new Client({ name: "stdio-buffers-test", version: "0" });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client.close();
    removeDir(base);
  });
  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;

  test("an 8 MiB upload and download arrive byte-exact while small answers interleave", async () => {
    const data = Buffer.alloc(8 * 1024 * 1024);
    for (let i = 0; i < data.length; i += 4) data.writeUInt32LE((i * 2654435761) >>> 0, i);
    const sha = createHash("sha256").update(data).digest("hex");
    const up = await call("upload_binary_file", { workdir: "rw", path: "big.bin", data_base64: data.toString("base64") });
    expect(ok<{ sha256: string }>(up).sha256).toBe(sha);
    expect(createHash("sha256").update(fs.readFileSync(path.join(base, "rw", "big.bin"))).digest("hex")).toBe(sha);
    const [down, ...small] = await Promise.all([call("download_binary_file", { workdir: "rw", path: "big.bin" }), ...Array.from({ length: 5 }, () => call("list_workdirs", {}))]);
    const blob = (down!.content[0] as { resource: { blob: string } }).resource.blob;
    expect(createHash("sha256").update(Buffer.from(blob, "base64")).digest("hex")).toBe(sha);
    expect(ok<{ sha256: string }>(down!).sha256).toBe(sha);
    for (const s of small) expect(ok<{ workdirs: unknown[] }>(s).workdirs).toHaveLength(1);
  }, 120_000);
});
