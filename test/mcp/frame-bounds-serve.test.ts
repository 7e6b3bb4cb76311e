// One valid JSON-RPC frame under the byte cap, made of millions of tiny JSON values, through a real
// `serverfs serve` (from source, or the executable SERVERFS_TEST_SERVE_BIN names: .ci/run's
// compiled-binary lane). Once, such a frame took serve from ~55 MB to 370 MB (760 MB where binary
// transfer raises the cap), held the memory afterwards and kept the next request waiting for
// seconds. Now it is refused from its bytes with the exact -32600 line under its own id, a
// notification of the kind is dropped, and other requests are answered meanwhile. The order is
// shown by construction: a search over megabytes of long non-ASCII lines, which it folds
// case-insensitively, and the first MiB of the frame are written together; the frame's refusal
// must arrive while the search is still running (serve answers once the bound is crossed, from
// the frame's first 30 KB, read with the search's own frame), and only then is the rest of the
// frame written; the search still answers with its full result.
// Nothing on disk changes. In the compiled lane (the 120 MB promise is the executable's, not
// `bun src/cli.ts`'s) peak RSS stays at or below 120 MB and RSS is back within 20 MB of idle 2 s
// after the last answer; the default suite asserts no memory figures.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { expectServeMemory, FrameServe as Serve, type FrameReply as Reply } from "../support/frame-serve.ts";
import { isLinux } from "../support/proc.ts";
import { removeDir, tempDir } from "../support/temp.ts";
import { treeSnapshot } from "../support/tree.ts";

const MB = 1024 * 1024;
// a ceiling for a loaded 2-core machine, not a timing assertion
setDefaultTimeout(240_000);

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "bounds", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};
const VALUES = "Invalid request: the message holds more than 10000 JSON values (serve's limit per message)";
const STRINGS = "Invalid request: the message holds more than 10000 strings (serve's limit per message)";
const DEPTH = "Invalid request: the message nests arrays and objects more than 64 levels deep (serve's limit per message)";

/** `{"jsonrpc":"2.0",…}` whose `slot` (a JSON fragment with a `@` where the values go) holds `unit` repeated to about `bytes`. */
function manyValues(head: string, slot: string, unit: string, bytes: number): Buffer {
  const count = Math.floor((bytes - head.length - slot.length - 8) / (unit.length + 1));
  const values = Buffer.alloc(count * (unit.length + 1) - 1, `${unit},`);
  const [before, after] = slot.split("@") as [string, string];
  return Buffer.concat([Buffer.from(`${head}${before}[`), values, Buffer.from(`]${after}\n`)]);
}

/** Long non-ASCII lines: the costliest bytes a case-insensitive search folds, line by line. */
function writeSlowTree(dir: string, totalBytes: number): void {
  const unit = `${"ÄÖÜ".repeat(100)}${"x".repeat(700)}NEEDLE${"y".repeat(18)}`;
  const line = Buffer.from(`${unit.repeat(40)}\n`);
  const perFile = 4 * MB;
  const file = Buffer.concat(Array.from({ length: Math.ceil(perFile / line.length) }, () => line));
  for (let i = 0; i * file.length < totalBytes; i++) fs.writeFileSync(path.join(dir, `slow-${i}.txt`), file);
}

describe.skipIf(!isLinux)("frames of many tiny values through real serve (Linux: memory from /proc)", () => {
  let base = "";
  beforeAll(() => {
    base = tempDir("sfs-bounds-");
  });
  afterAll(() => removeDir(base));

  /** serve on `workdir`, its connection open, its tools listed and one search served: the idle state. */
  async function open(workdir: string, binary: boolean, era: "2025" | "2026"): Promise<{ s: Serve; idle: number; meta: object }> {
    const config = path.join(base, `serverfs-${era}.toml`);
    fs.writeFileSync(config, `[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(workdir)}\nread_only = true\nbinary_transfer_enabled = ${binary}\n`);
    const s = new Serve(config, base);
    const meta = era === "2026" ? { _meta: META } : {};
    if (era === "2025") {
      await s.send({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bounds", version: "0" } } }, { jsonrpc: "2.0", method: "notifications/initialized" });
    } else {
      await s.send({ jsonrpc: "2.0", id: "init", method: "server/discover", params: meta });
    }
    await s.reply("init");
    await s.send({ jsonrpc: "2.0", id: "list", method: "tools/list", params: meta });
    await s.reply("list");
    await s.send(search("warm", meta, "needle"));
    await s.reply("warm");
    return { s, idle: s.status("VmRSS"), meta };
  }

  const search = (id: string, meta: object, query = "NO SUCH NEEDLE") => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "search_text", arguments: { workdir: "w", query, case_sensitive: false }, ...meta } });

  /**
   * Write the slow search and the first MiB of `frame` (whose id and method come first) in one
   * go, so they reach serve together, and wait for the frame's refusal: serve answers it from the
   * bytes it just read, before the search (which has megabytes to fold) can have finished. Only
   * then is the rest of the frame written.
   */
  async function refusedDuringSearch(s: Serve, meta: object, frame: Buffer, id: unknown): Promise<Reply> {
    await s.write(Buffer.concat([Buffer.from(`${JSON.stringify(search("slow", meta))}\n`), frame.subarray(0, MB)]));
    const refused = await s.reply(id);
    expect(s.position("slow")).toBe(-1);
    await s.write(frame.subarray(MB));
    return refused;
  }

  const noMatches = { matches: [], returned: 0, truncated: false, unreadable: 0, ignored: 0 };

  test("default cap (10 MiB), 2025 era: {} in tool arguments, [] in a notification's _meta", async () => {
    const workdir = path.join(base, "ro");
    fs.mkdirSync(workdir);
    writeSlowTree(workdir, 12 * MB);
    const before = treeSnapshot(workdir);
    const cap = 10 * MB;
    const request = manyValues('{"jsonrpc":"2.0","id":"many","method":"tools/call","params":', '{"name":"list_workdirs","arguments":{"x":@}}}', "{}", cap - 1024);
    const notification = manyValues('{"jsonrpc":"2.0","method":"notifications/progress","params":', '{"progressToken":1,"progress":1,"_meta":{"x":@}}}', "[]", cap - 1024);
    const { s, idle, meta } = await open(workdir, false, "2025");
    expect(await refusedDuringSearch(s, meta, request, "many")).toEqual({ jsonrpc: "2.0", id: "many", error: { code: -32600, message: VALUES } } as Reply);
    await s.write(notification);
    await s.send({ jsonrpc: "2.0", id: "ping", method: "ping" });
    expect(await s.reply("ping")).toEqual({ jsonrpc: "2.0", id: "ping", result: {} } as Reply);
    expect((await s.reply("slow")).result?.structuredContent).toEqual(noMatches);
    // one answer each, none for the notification
    expect(s.replies.map((r) => r.id).sort()).toEqual(["init", "list", "many", "ping", "slow", "warm"]);
    await expectServeMemory(s, idle);
    const stderr = await s.close();
    expect(stderr).toContain('"event":"request_refused","rpc_code":-32600,"method":"tools/call","bound":"values"');
    expect(stderr).toContain('"event":"frame_dropped","reason":"over_bounds","bound":"values"');
    expect(treeSnapshot(workdir)).toEqual(before);
  });

  test("binary transfer raises the cap, 2026 era: strings in _meta, {} at the top level with the id last, a deep frame", async () => {
    const workdir = path.join(base, "bin");
    fs.mkdirSync(workdir);
    writeSlowTree(workdir, 12 * MB);
    const before = treeSnapshot(workdir);
    // the cap with the default 8 MiB transfer limit: base64 doubled, plus 1 MiB
    const cap = 2 * 4 * Math.ceil((8 * MB) / 3) + MB;
    const envelope = JSON.stringify(META).slice(1, -1);
    const strings = manyValues('{"jsonrpc":"2.0","id":7,"method":"tools/list","params":', `{"_meta":{${envelope},"x":@}}}`, '""', cap - 1024);
    // the id written after the values: answered once the whole frame is read
    const topLevel = manyValues('{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_workdirs","arguments":{},"_meta":', `${JSON.stringify(META)}},"junk":@,"id":8}`, "{}", cap - 1024);
    const deep = Buffer.from(`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":${JSON.stringify(META)},"x":${"[".repeat(100_000)}${"]".repeat(100_000)}}}\n`);
    const { s, idle, meta } = await open(workdir, true, "2026");
    expect(await refusedDuringSearch(s, meta, strings, 7)).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32600, message: STRINGS } } as Reply);
    await s.write(topLevel);
    await s.write(deep);
    // (2026-07-28 has no ping: the next request is another tools/list)
    await s.send({ jsonrpc: "2.0", id: "again", method: "tools/list", params: meta });
    expect(await s.reply(8)).toEqual({ jsonrpc: "2.0", id: 8, error: { code: -32600, message: VALUES } } as Reply);
    expect(await s.reply(9)).toEqual({ jsonrpc: "2.0", id: 9, error: { code: -32600, message: DEPTH } } as Reply);
    expect((await s.reply("again")).error).toBeUndefined();
    expect((await s.reply("slow")).result?.structuredContent).toEqual(noMatches);
    expect(s.replies.map((r) => r.id).sort()).toEqual([7, 8, 9, "again", "init", "list", "slow", "warm"] as unknown[]);
    await expectServeMemory(s, idle);
    await s.close();
    expect(treeSnapshot(workdir)).toEqual(before);
  });
});
