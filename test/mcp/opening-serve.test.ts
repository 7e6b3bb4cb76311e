// The opening a real serve answers before it loads the full server (src/mcp/opening.ts), through
// the process: from source, or the executable SERVERFS_TEST_SERVE_BIN names (.ci/run's compiled
// lane). A host whose opening is answered early and one whose opening goes to the full server get
// the same bytes; the session after an early opening is the one the SDK would have had (a second
// initialize is refused, tools answer); a signal or the end of stdin right after the opening still
// ends the process in order, with nothing on stderr but JSON lines.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { BIN, FrameServe } from "../support/frame-serve.ts";
import { BUN, CLI } from "../support/proc.ts";
import { removeDir, tempDir } from "../support/temp.ts";

const base = tempDir("serverfs-opening-serve-");
afterAll(() => removeDir(base));
fs.mkdirSync(path.join(base, "docs"));
fs.writeFileSync(path.join(base, "docs", "a.md"), "# a\n");
const config = path.join(base, "serverfs.toml");
fs.writeFileSync(config, `[[workdirs]]\nalias = "docs"\npath = ${JSON.stringify(path.join(base, "docs"))}\nread_only = false\n`);

const init = (id: unknown, capabilities: object = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities, clientInfo: { name: "opening", version: "0" } },
});
const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
const list = (id: unknown) => ({ jsonrpc: "2.0", id, method: "tools/list" });
const call = (id: unknown, name: string, args: object) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });

/** Every line of stderr, parsed: it must hold JSON objects only. */
function logLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** serve given `frames` in one write: its first `lines` stdout lines, byte for byte, and its stderr after stdin closed. */
async function rawSession(frames: object[], lines: number): Promise<{ out: string[]; stderr: string; code: number }> {
  const cmd = BIN ? [path.resolve(BIN)] : [BUN, CLI];
  const proc = Bun.spawn([...cmd, "serve", "--config", config], { cwd: base, stdin: "pipe", stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base } });
  proc.stdin.write(frames.map((f) => `${JSON.stringify(f)}\n`).join(""));
  await proc.stdin.flush();
  const reader = proc.stdout.getReader();
  let got = Buffer.alloc(0);
  const count = () => got.toString("utf8").split("\n").length - 1;
  while (count() < lines) {
    const { value, done } = await reader.read();
    if (done) break;
    got = Buffer.concat([got, value]);
  }
  reader.releaseLock();
  proc.stdin.end();
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  return { out: got.toString("utf8").split("\n").slice(0, lines), stderr, code };
}

describe("serve's early opening", () => {
  test("an opening answered early and one handed to the full server get the same answers", async () => {
    const early = await rawSession([init(1), initialized, list(2)], 2);
    // An experimental capability: the opening hands this initialize to the full server.
    const full = await rawSession([init(1, { experimental: { x: {} } }), initialized, list(2)], 2);
    expect(early.out).toEqual(full.out);
    expect(early.out.map((l) => (JSON.parse(l) as { id: number }).id)).toEqual([1, 2]);
    for (const s of [early, full]) {
      expect(s.code).toBe(0);
      const logs = logLines(s.stderr);
      expect(logs.filter((l) => l.level === "ERROR")).toEqual([]);
      expect(logs.map((l) => l.event)).toContain("shutdown");
    }
  });

  test("after an early opening the session is the SDK's: tools answer, a second initialize is refused, the answered requests are not answered twice", async () => {
    const s = new FrameServe(config, base);
    // tools/call in the same write as the opening: it is the first frame the full server answers.
    await s.send(init(1), initialized, list(2), call(3, "list_directory", { workdir: "docs" }));
    expect((await s.reply(3)).result?.structuredContent?.entries).toEqual([expect.objectContaining({ name: "a.md" })]);
    await s.send(init(4), call(5, "create_text_file", { workdir: "docs", path: "b.md", content: "b\n" }));
    expect((await s.reply(4)).error).toEqual({ code: -32600, message: expect.stringContaining("already initialized") });
    expect((await s.reply(5)).result?.isError).toBeUndefined();
    expect(fs.readFileSync(path.join(base, "docs", "b.md"), "utf8")).toBe("b\n");
    const logs = logLines(await s.close());
    // Each request answered once: the full server's answers to the replayed 1 and 2 were dropped.
    expect(s.replies.map((r) => r.id).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(logs.filter((l) => l.event === "opening_answer_mismatch")).toEqual([]);
    expect(logs.filter((l) => l.event === "tool_call").map((l) => [l.tool, l.success])).toEqual([
      ["list_directory", true],
      ["create_text_file", true],
    ]);
    fs.rmSync(path.join(base, "docs", "b.md"));
  });

  for (const end of ["SIGTERM", "stdin_eof"] as const) {
    test(`${end} right after the opening is answered: the full server comes up, shuts down in order, exit 0`, async () => {
      const s = new FrameServe(config, base);
      await s.send(init(1), initialized, list(2));
      await s.reply(2);
      if (end === "SIGTERM") s.proc.kill("SIGTERM");
      else s.proc.stdin.end();
      expect(await s.proc.exited).toBe(0);
      const logs = logLines(await new Response(s.proc.stderr).text());
      expect(logs.map((l) => l.event)).toEqual(expect.arrayContaining(["startup", "shutdown"]));
      expect(logs.find((l) => l.event === "shutdown")).toMatchObject({ reason: end, pending_requests: 0 });
      expect(logs.filter((l) => l.level === "ERROR")).toEqual([]);
      expect(s.replies.map((r) => r.id)).toEqual([1, 2]);
    });
  }
});
