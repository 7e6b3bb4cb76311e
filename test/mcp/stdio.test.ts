// The real `serverfs serve` process: SDK client over stdio, raw frames on a pipe, stdin EOF (every
// request read before it answered) and signal shutdown timing, stdout purity and stderr hygiene.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as fs from "node:fs";
import * as path from "node:path";
import { bareEnv, connectServe, type ServeClient } from "../support/mcp.ts";
import { CLI } from "../support/proc.ts";
import { removeDir, tempDir } from "./helpers.ts";

const MARK = "STDIOMARK51c2";
let base: string;

beforeAll(() => {
  base = tempDir();
  fs.mkdirSync(path.join(base, "ro"));
  fs.mkdirSync(path.join(base, "rw"));
  fs.writeFileSync(path.join(base, "ro", `f-${MARK}.txt`), `hello ${MARK}\n`);
  // ~400 KiB of text: one answer larger than a pipe buffer.
  fs.writeFileSync(path.join(base, "ro", "big.txt"), `${"y".repeat(799)}\n`.repeat(500));
});
afterAll(() => removeDir(base));

function frames(...msgs: object[]): string {
  return msgs.map((m) => `${JSON.stringify(m)}\n`).join("");
}

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
};
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };

function spawnServe(args: string[]) {
  return Bun.spawn([process.execPath, CLI, "serve", ...args], {
    cwd: base,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base },
  });
}

/** Read stdout until a response with `id` arrives; returns every line seen so far. */
async function readUntil(reader: { read(): Promise<{ value?: Uint8Array; done: boolean }> }, id: number, seen: string[]): Promise<void> {
  const decoder = new TextDecoder();
  let partial = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stdout ended before response ${id}`);
    partial += decoder.decode(value, { stream: true });
    const parts = partial.split("\n");
    partial = parts.pop()!;
    for (const line of parts) {
      seen.push(line);
      if ((JSON.parse(line) as { id?: number }).id === id) return;
    }
  }
}

describe("serve over stdio with the SDK client", () => {
  let client: Client;
  let serve: ServeClient;

  beforeAll(async () => {
    serve = await connectServe({
      args: ["--workdir", `ro=${path.join(base, "ro")}`, "--workdir", `rw=${path.join(base, "rw")}:rw`],
      cwd: base,
      captureStderr: true,
      env: bareEnv(base),
      clientName: "stdio-test",
      listTools: false,
    });
    client = serve.client;
  });
  afterAll(async () => {
    await client.close();
  });

  test("initialize, tools/list and tools/call work against the real process", async () => {
    expect(client.getServerVersion()?.name).toBe("serverfs");
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(15);
    const res = (await client.callTool({ name: "read_text_file", arguments: { workdir: "ro", path: `f-${MARK}.txt` } })) as CallToolResult;
    expect(res.isError).toBeFalsy();
    expect((res.structuredContent as { content: string }).content).toBe(`hello ${MARK}\n`);
    const created = (await client.callTool({
      name: "create_text_file",
      arguments: { workdir: "rw", path: `n-${MARK}.txt`, content: `secret ${MARK}` },
    })) as CallToolResult;
    expect(created.isError).toBeFalsy();
    expect(fs.readFileSync(path.join(base, "rw", `n-${MARK}.txt`), "utf8")).toBe(`secret ${MARK}`);
    const failed = (await client.callTool({ name: "search_text", arguments: { workdir: "ro", query: MARK, path: "nope" } })) as CallToolResult;
    expect((failed.structuredContent as { code: string }).code).toBe("PATH_NOT_FOUND");
  });

  test("stderr holds one JSON object per line: startup security mode and audit lines, no content, query or host path", async () => {
    // Give the last audit line time to arrive through the pipe.
    for (let i = 0; i < 50 && (serve.stderr().match(/"tool_call"/g) ?? []).length < 3; i++) await Bun.sleep(20);
    const lines = serve.stderr().trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    const startup = lines.find((l) => l.event === "startup")!;
    expect(startup).toMatchObject({
      workdirs: 2,
      read_write_workdirs: 1,
      allow_hidden: false,
      default_deny_enabled: true,
      extra_deny_rule_count: 0,
      tools: 15,
    });
    expect(lines.filter((l) => l.event === "tool_call")).toHaveLength(3);
    expect(serve.stderr()).not.toContain(MARK);
    expect(serve.stderr()).not.toContain(base);
  });
});

describe("process lifecycle", () => {
  test("stdin EOF: buffered answers are delivered in full, stdout holds only JSON-RPC frames, exit 0 within 1 s", async () => {
    const proc = spawnServe(["--workdir", `ro=${path.join(base, "ro")}`]);
    const reader = proc.stdout.getReader();
    const seen: string[] = [];
    proc.stdin.write(frames(INIT, INITIALIZED, { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }));
    proc.stdin.flush();
    await readUntil(reader, 2, seen);
    // Ask for a large page and close stdin in the same breath: the answer must still arrive whole.
    proc.stdin.write(
      frames({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "read_text_file", arguments: { workdir: "ro", path: "big.txt", max_lines: 500 } },
      }),
    );
    proc.stdin.flush();
    proc.stdin.end();
    await readUntil(reader, 3, seen);
    const code = await proc.exited;
    let rest = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(code).toBe(0);
    for (const line of [...seen, ...rest.split("\n").filter((l) => l !== "")]) {
      const msg = JSON.parse(line) as { jsonrpc: string };
      expect(msg.jsonrpc).toBe("2.0");
    }
    const big = JSON.parse(seen.at(-1)!) as { result: { structuredContent: { content: string; bytes_returned: number } } };
    expect(big.result.structuredContent.bytes_returned).toBe(400_000);
    expect(big.result.structuredContent.content).toBe(`${"y".repeat(799)}\n`.repeat(500));
    const stderr = await new Response(proc.stderr).text();
    expect(stderr).toContain('"event":"shutdown"');
    expect(stderr).toContain('"reason":"stdin_eof"');
  });

  test("stdin EOF with requests in flight: each request read before the EOF gets exactly one answer, a search its full result", async () => {
    // Searches, a listing, a ping and a resource read sent with the EOF in one write: none of them
    // had reached its handler when the EOF was seen (the old drain waited only for handlers
    // already running). Each is small work, far inside the 5 s grace, so each gets its own answer.
    const dir = path.join(base, "eof-search");
    fs.mkdirSync(dir, { recursive: true });
    const unit = `${"ÄÖÜ".repeat(100)}${"x".repeat(700)}NEEDLE${"y".repeat(18)}`;
    for (let i = 0; i < 2; i++) fs.writeFileSync(path.join(dir, `s${i}.txt`), `${unit}\n`.repeat(20));
    fs.writeFileSync(path.join(dir, "hit.txt"), "a needle here\n");
    const proc = spawnServe(["--workdir", `s=${dir}`]);
    const search = (id: number, query: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "search_text", arguments: { workdir: "s", query, case_sensitive: false } } });
    proc.stdin.write(
      frames(
        INIT,
        INITIALIZED,
        search(2, "no such text"),
        { jsonrpc: "2.0", id: 3, method: "tools/list", params: {} },
        search(4, "a NEEDLE here"),
        { jsonrpc: "2.0", id: 5, method: "ping" },
        { jsonrpc: "2.0", id: 6, method: "resources/read", params: { uri: "serverfs://s/hit.txt" } },
      ),
    );
    proc.stdin.end();
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    const answers = out.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { id: number; result?: Record<string, unknown>; error?: unknown });
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3, 4, 5, 6]);
    for (const a of answers) expect(a.error).toBeUndefined();
    const byId = new Map(answers.map((a) => [a.id, a.result]));
    expect(byId.get(2)?.structuredContent).toEqual({ matches: [], returned: 0, truncated: false, unreadable: 0, ignored: 0 });
    expect(byId.get(4)?.structuredContent).toEqual({ matches: [{ path: "hit.txt", line: 1, text: "a needle here" }], returned: 1, truncated: false, unreadable: 0, ignored: 0 });
    expect((byId.get(6)?.contents as Array<{ text: string }>)[0]!.text).toBe("a needle here\n");
    const stderr = await new Response(proc.stderr).text();
    expect(stderr).toContain('"reason":"stdin_eof"');
  });

  test("a workdir root that is missing or a symlink is reported at start-up by alias and code, never by path; the others serve", async () => {
    const link = path.join(base, "root-link");
    fs.symlinkSync(path.join(base, "ro"), link);
    try {
      const proc = spawnServe([
        "--workdir", `ok=${path.join(base, "ro")}`,
        "--workdir", `gone=${path.join(base, "missing-root")}`,
        "--workdir", `linked=${link}`,
      ]);
      const reader = proc.stdout.getReader();
      const seen: string[] = [];
      proc.stdin.write(
        frames(INIT, INITIALIZED, {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "list_directory", arguments: { workdir: "ok" } },
        }),
      );
      proc.stdin.flush();
      await readUntil(reader, 2, seen);
      expect(JSON.parse(seen.at(-1)!).result.isError).toBeUndefined();
      proc.stdin.end();
      expect(await proc.exited).toBe(0);
      const stderr = await new Response(proc.stderr).text();
      const warnings = stderr
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.event === "workdir_unavailable")
        .map((l) => [l.level, l.workdir, l.error_code]);
      expect(warnings).toEqual([
        ["WARNING", "gone", "PATH_NOT_FOUND"],
        ["WARNING", "linked", "SYMLINK_NOT_ALLOWED"],
      ]);
      expect(stderr).not.toContain(base);
    } finally {
      fs.unlinkSync(link);
    }
  });

  test("the root checks run after the opening is answered, and still before an immediate EOF exits", async () => {
    const spec = ["--workdir", `ok=${path.join(base, "ro")}`, "--workdir", `gone=${path.join(base, "missing-root")}`];
    const warned = async (stderr: string) =>
      stderr
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.event === "workdir_unavailable" || l.event === "startup" || l.event === "shutdown")
        .map((l) => [l.event, l.workdir ?? null, l.error_code ?? null]);
    // stdin closed before any request: the warning is still logged, before the shutdown line.
    const closed = spawnServe(spec);
    closed.stdin.end();
    expect(await closed.exited).toBe(0);
    expect(await warned(await new Response(closed.stderr).text())).toEqual([
      ["startup", null, null],
      ["workdir_unavailable", "gone", "PATH_NOT_FOUND"],
      ["shutdown", null, null],
    ]);
    // A client that stays connected sees it while connected (not only at shutdown).
    const open = spawnServe(spec);
    const reader = open.stdout.getReader();
    open.stdin.write(frames(INIT));
    open.stdin.flush();
    await readUntil(reader, 1, []);
    const errReader = open.stderr.getReader();
    const decoder = new TextDecoder();
    let stderr = "";
    while (!stderr.includes("workdir_unavailable")) {
      const { value, done } = await errReader.read();
      if (done) break;
      stderr += decoder.decode(value, { stream: true });
    }
    expect(stderr).not.toContain('"event":"shutdown"');
    open.kill("SIGTERM");
    expect(await open.exited).toBe(0);
    for (;;) {
      const { value, done } = await errReader.read();
      if (done) break;
      stderr += decoder.decode(value, { stream: true });
    }
    expect(await warned(stderr)).toEqual([
      ["startup", null, null],
      ["workdir_unavailable", "gone", "PATH_NOT_FOUND"],
      ["shutdown", null, null],
    ]);
  });

  test("SIGTERM exits cleanly with code 0", async () => {
    const proc = spawnServe(["--workdir", `ro=${path.join(base, "ro")}`]);
    const reader = proc.stdout.getReader();
    proc.stdin.write(frames(INIT));
    proc.stdin.flush();
    await readUntil(reader, 1, []);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const stderr = await new Response(proc.stderr).text();
    expect(stderr).toContain('"reason":"SIGTERM"');
  });

  test("--config FILE starts from a serverfs.toml", async () => {
    const toml = path.join(base, "serverfs.toml");
    fs.writeFileSync(
      toml,
      `[[workdirs]]\nalias = "docs"\npath = ${JSON.stringify(path.join(base, "ro"))}\n\n[[workdirs]]\nalias = "out"\npath = ${JSON.stringify(path.join(base, "rw"))}\nread_only = false\n`,
    );
    const proc = spawnServe(["--config", toml]);
    const reader = proc.stdout.getReader();
    const seen: string[] = [];
    proc.stdin.write(
      frames(INIT, INITIALIZED, {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "list_workdirs", arguments: {} },
      }),
    );
    proc.stdin.flush();
    await readUntil(reader, 2, seen);
    proc.stdin.end();
    expect(await proc.exited).toBe(0);
    const msg = JSON.parse(seen.at(-1)!) as { result: { structuredContent: { workdirs: Array<{ alias: string; access: string }> } } };
    expect(msg.result.structuredContent.workdirs.map((w) => [w.alias, w.access])).toEqual([
      ["docs", "read-only"],
      ["out", "read-write"],
    ]);
  });

  test("usage and configuration errors: one line on stderr, exit 2, nothing on stdout", async () => {
    for (const args of [[], ["--workdir", "x"], ["--config", path.join(base, "missing.toml")], ["--bogus"]]) {
      const proc = Bun.spawn([process.execPath, CLI, "serve", ...args], { cwd: base, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
      expect({ args, code }).toEqual({ args, code: 2 });
      expect(out).toBe("");
      expect(err.startsWith("serverfs: serve: ")).toBe(true);
      expect(err).not.toContain("    at ");
    }
  });
});

describe("frames at the edges", () => {
  test("an 8 MiB upload and download travel through the real stdio transport intact", async () => {
    const dir = path.join(base, "bin8");
    fs.mkdirSync(dir);
    const toml = path.join(base, "bin8.toml");
    fs.writeFileSync(
      toml,
      `[[workdirs]]\nalias = "b"\npath = ${JSON.stringify(dir)}\nread_only = false\nbinary_transfer_enabled = true\n`,
    );
    const payload = Buffer.alloc(8 * 1024 * 1024);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 131 + (i >> 11)) & 0xff;
    const { client } = await connectServe({
      args: ["--config", toml],
      cwd: base,
      // An 8 MiB download is a ~10.7 MiB frame: above the SDK client's default 10 MiB read buffer.
      maxBufferSize: 32 * 1024 * 1024,
      env: bareEnv(base),
      clientName: "big",
      listTools: false,
    });
    try {
      const up = (await client.callTool({
        name: "upload_binary_file",
        arguments: { workdir: "b", path: "big.bin", data_base64: payload.toString("base64") },
      })) as CallToolResult;
      expect(up.isError).toBeFalsy();
      expect(fs.readFileSync(path.join(dir, "big.bin")).equals(payload)).toBe(true);
      const down = (await client.callTool({ name: "download_binary_file", arguments: { workdir: "b", path: "big.bin" } })) as CallToolResult;
      const block = down.content[0]!;
      if (block.type !== "resource" || !("blob" in block.resource)) throw new Error("expected a blob");
      expect(Buffer.from(block.resource.blob, "base64").equals(payload)).toBe(true);
      const over = (await client.callTool({
        name: "upload_binary_file",
        arguments: { workdir: "b", path: "over.bin", data_base64: Buffer.alloc(8 * 1024 * 1024 + 1).toString("base64") },
      })) as CallToolResult;
      expect((over.structuredContent as { code: string }).code).toBe("BINARY_PAYLOAD_TOO_LARGE");
      expect(fs.existsSync(path.join(dir, "over.bin"))).toBe(false);
    } finally {
      await client.close();
    }
  });

  test("a line that is not JSON gets one -32700 answer (id null), is logged without its bytes, and the session carries on", async () => {
    const proc = spawnServe(["--workdir", `ro=${path.join(base, "ro")}`]);
    const reader = proc.stdout.getReader();
    const seen: string[] = [];
    proc.stdin.write(`garbage ${MARK} not json\n`);
    proc.stdin.write(frames(INIT, INITIALIZED, { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }));
    proc.stdin.flush();
    await readUntil(reader, 2, seen);
    proc.stdin.end();
    expect(await proc.exited).toBe(0);
    for (const line of seen) expect((JSON.parse(line) as { jsonrpc: string }).jsonrpc).toBe("2.0");
    expect(seen.map((l) => JSON.parse(l) as { id: unknown; error?: unknown }).filter((r) => r.id === null)).toEqual([
      { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the line is not valid JSON" } } as never,
    ]);
    const stderr = await new Response(proc.stderr).text();
    expect(stderr).toContain('"event":"request_refused","rpc_code":-32700');
    expect(stderr).not.toContain(MARK);
  });

  test("a frame over the size cap closes the session and the process exits instead of hanging", async () => {
    const proc = spawnServe(["--workdir", `ro=${path.join(base, "ro")}`]);
    const reader = proc.stdout.getReader();
    proc.stdin.write(frames(INIT));
    proc.stdin.flush();
    await readUntil(reader, 1, []);
    const chunk = "a".repeat(1024 * 1024);
    try {
      for (let i = 0; i < 12; i++) {
        proc.stdin.write(chunk);
        await proc.stdin.flush();
      }
    } catch (err) {
      // The server may already be gone before the last megabytes are written.
      expect((err as { code?: string }).code).toBe("EPIPE");
    }
    // stdin stays open: only the oversized frame can end the session. The guard only keeps a
    // hung server from outliving the test (it is under the test's timeout); it bounds no speed.
    const code = await Promise.race([proc.exited, Bun.sleep(20_000).then(() => "hung")]);
    if (code === "hung") proc.kill("SIGKILL");
    expect(code).toBe(0);
    const stderr = await new Response(proc.stderr).text();
    expect(stderr).toContain('"reason":"transport_closed"');
  });
});

test("a client that stops reading stdout (EPIPE) ends the process; stderr stays JSON lines", async () => {
  const proc = spawnServe(["--workdir", `ro=${path.join(base, "ro")}`]);
  const reader = proc.stdout.getReader();
  proc.stdin.write(frames(INIT));
  proc.stdin.flush();
  await readUntil(reader, 1, []);
  await reader.cancel();
  // Answers nobody can read; stdin stays open, so only the broken stdout can end the session.
  for (let i = 0; i < 40; i++) proc.stdin.write(frames({ jsonrpc: "2.0", id: 10 + i, method: "tools/list", params: {} }));
  proc.stdin.flush();
  // a hang guard under the test's timeout, not a speed bound
  const code = await Promise.race([proc.exited, Bun.sleep(20_000).then(() => "hung")]);
  if (code === "hung") proc.kill("SIGKILL");
  expect(code).toBe(0);
  const stderr = await new Response(proc.stderr).text();
  expect(stderr).toContain('"reason":"stdout_closed"');
  for (const line of stderr.trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow();
});
