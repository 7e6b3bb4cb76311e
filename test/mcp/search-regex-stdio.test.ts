// search_text regex mode through the real `serverfs serve` process over stdio (raw JSON-RPC
// frames): patterns that are catastrophic for a backtracking engine, over tens of MB of `a`s and
// `x`s, end with their results or with SEARCH_TIMEOUT at search_timeout_seconds, while requests
// sent after them are answered first; refused patterns and out-of-range context_lines come back
// as INVALID_ARGUMENT, and nothing on disk changes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { rawServe, type RawReply } from "../support/raw-serve.ts";
import { removeDir, tempDir } from "./helpers.ts";

const LINE = 4095;
const LINES = 10_240; // 40 MiB per file
let base: string;
let wd: string;

beforeAll(() => {
  base = tempDir("serverfs-regex-");
  wd = path.join(base, "wd");
  fs.mkdirSync(wd);
  fs.writeFileSync(path.join(wd, "as.txt"), `${"a".repeat(LINE)}\n`.repeat(LINES));
  fs.writeFileSync(path.join(wd, "xs.txt"), `${"x".repeat(LINE)}\n`.repeat(LINES));
  fs.writeFileSync(path.join(wd, "plain.txt"), "needle\n");
  fs.writeFileSync(path.join(base, "serverfs.toml"), `[limits]\nsearch_timeout_seconds = 1\n\n[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(wd)}\n`);
}, 60_000);

type Reply = RawReply;

const spawned: { kill(signal?: number): void; exitCode: number | null }[] = [];
afterAll(() => {
  for (const p of spawned) if (p.exitCode === null) p.kill(9);
  removeDir(base);
});

const serve = () => rawServe(["--config", path.join(base, "serverfs.toml")], base, spawned);

const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
const sc = (replies: Reply[], id: number) => replies.find((r) => r.id === id)?.result?.structuredContent as Record<string, unknown>;
const order = (replies: Reply[], ids: number[]) => replies.map((r) => r.id).filter((id) => ids.includes(id));

/** A search that ran to its end without a match, or stopped at the deadline with the coded error. */
function noMatchOrTimeout(r: Record<string, unknown>): void {
  if ("code" in r) expect(r).toMatchObject({ code: "SEARCH_TIMEOUT", message: expect.stringContaining("search exceeded its time limit") });
  else expect(r).toEqual({ matches: [], returned: 0, truncated: false, unreadable: 0, ignored: 0 });
}

describe("regex search through serve over stdio", () => {
  let server: ReturnType<typeof serve>;
  let before: string[];
  beforeAll(async () => {
    before = fs.readdirSync(wd).map((n) => `${n} ${fs.statSync(path.join(wd, n)).size} ${fs.statSync(path.join(wd, n)).mtimeMs}`);
    server = serve();
    await server.ready;
  });
  afterAll(async () => {
    expect(await server.close()).toBe(0);
    expect(fs.readdirSync(wd).map((n) => `${n} ${fs.statSync(path.join(wd, n)).size} ${fs.statSync(path.join(wd, n)).mtimeMs}`)).toEqual(before);
  });

  test("(a+)+[^a] over 40 MB of a's: stat_file and list_directory sent after it are answered first", async () => {
    server.send(call(10, "search_text", { workdir: "w", query: "(a+)+[^a]", regex: true, glob: "as.txt" }), call(11, "stat_file", { workdir: "w", path: "plain.txt" }), call(12, "list_directory", { workdir: "w" }));
    await server.until([10, 11, 12]);
    expect(order(server.replies, [10, 11, 12])).toEqual([11, 12, 10]);
    expect(sc(server.replies, 11)).toMatchObject({ path: "plain.txt", type: "file", size: 7 });
    expect((sc(server.replies, 12).entries as { name: string }[]).map((e) => e.name)).toEqual(["as.txt", "plain.txt", "xs.txt"]);
    noMatchOrTimeout(sc(server.replies, 10));
  });

  test("^(a+)+\\s and (x+x+)+y end with no match or SEARCH_TIMEOUT; (a+)+$ returns its capped matches", async () => {
    server.send(
      call(20, "search_text", { workdir: "w", query: "^(a+)+\\s", regex: true, glob: "as.txt" }),
      call(21, "search_text", { workdir: "w", query: "(x+x+)+y", regex: true, glob: "xs.txt", case_sensitive: false }),
      call(22, "search_text", { workdir: "w", query: "(a+)+$", regex: true, limit: 3, context_lines: 1 }),
      call(23, "stat_file", { workdir: "w", path: "xs.txt" }),
    );
    await server.until([20, 21, 22, 23]);
    expect(order(server.replies, [20, 23])).toEqual([23, 20]);
    noMatchOrTimeout(sc(server.replies, 20));
    noMatchOrTimeout(sc(server.replies, 21));
    const r = sc(server.replies, 22);
    if ("code" in r) expect(r.code).toBe("SEARCH_TIMEOUT");
    else {
      const capped = "a".repeat(2048);
      expect(r).toMatchObject({ returned: 3, truncated: true });
      expect(r.matches).toEqual([1, 2, 3].map((line) => ({ path: "as.txt", line, text: capped, text_truncated: true, before: [], after: [] })));
    }
  });

  test("refused patterns and out-of-range context_lines are INVALID_ARGUMENT", async () => {
    server.send(
      call(30, "search_text", { workdir: "w", query: "(?<=a)b", regex: true }),
      call(31, "search_text", { workdir: "w", query: "(a)\\1", regex: true }),
      call(32, "search_text", { workdir: "w", query: "(abc", regex: true }),
      call(33, "search_text", { workdir: "w", query: "needle", context_lines: 11 }),
      call(34, "search_text", { workdir: "w", query: "^needle$", regex: true, context_lines: 10, glob: "plain.txt" }),
    );
    await server.until([30, 31, 32, 33, 34]);
    expect(sc(server.replies, 30)).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("lookbehind") });
    expect(sc(server.replies, 31)).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("backreference") });
    expect(sc(server.replies, 32)).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("missing closing )") });
    expect(sc(server.replies, 33)).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("context_lines") });
    expect(sc(server.replies, 34)).toEqual({ matches: [{ path: "plain.txt", line: 1, text: "needle", before: [], after: [] }], returned: 1, truncated: false, unreadable: 0, ignored: 0 });
  });
});
