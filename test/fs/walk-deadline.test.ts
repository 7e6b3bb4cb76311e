// Every walk runs under search_timeout_seconds, checked per directory entry; a walk (and a
// listing of a large directory) gives the event loop back while it runs and ends when its request is cancelled; over-long globs are
// refused before any walking. Service level; test/mcp/glob-walk.test.ts covers the real server.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { expectCode, single, write } from "./helpers.ts";

const LONG_A = "a".repeat(240);
/** 1024 characters, never matches a name ending in a digit, ~1 ms per 250-character name (ends in a class: no literal pre-filter). */
const HEAVY = `${"*?".repeat(510)}*[b]`;

function heavyTree(root: string, n: number): void {
  for (let i = 0; i < n; i++) fs.writeFileSync(path.join(root, `${LONG_A}${String(i).padStart(5, "0")}`), "needle\n");
}

describe("deadline on every entry", () => {
  test("find_files past its deadline is SEARCH_TIMEOUT; an empty directory has nothing to time out", async () => {
    const { svc, root } = single({}, { search_timeout_seconds: 0 });
    fs.mkdirSync(path.join(root, "empty"));
    expect(await svc.findFiles({ workdir: "w", pattern: "*", path: "empty" })).toEqual({ matches: [], returned: 0, truncated: false, ignored: 0 });
    write(root, "a.txt", "x");
    await expectCode(svc.findFiles({ workdir: "w", pattern: "*.txt" }), "SEARCH_TIMEOUT");
    // the walk root is still validated first
    await expectCode(svc.findFiles({ workdir: "w", pattern: "*", path: "missing" }), "PATH_NOT_FOUND");
  });

  test("search_text times out even when its glob matches no file (the deadline no longer waits for a match)", async () => {
    const { svc, root } = single({}, { search_timeout_seconds: 0 });
    for (let i = 0; i < 5; i++) write(root, `d/f${i}.txt`, "needle\n");
    await expectCode(svc.searchText({ workdir: "w", query: "needle", glob: "*.none" }), "SEARCH_TIMEOUT");
    await expectCode(svc.searchText({ workdir: "w", query: "needle", glob: "**/*.none" }), "SEARCH_TIMEOUT");
  });

  test("with a normal budget both walks finish and find the files", async () => {
    const { svc, root } = single();
    for (let i = 0; i < 5; i++) write(root, `d/f${i}.txt`, "needle\n");
    expect((await svc.findFiles({ workdir: "w", pattern: "f[0-2].txt" })).matches.map((m) => m.path)).toEqual(["d/f0.txt", "d/f1.txt", "d/f2.txt"]);
    expect((await svc.searchText({ workdir: "w", query: "needle", glob: "d/f[3-4].*" })).matches.map((m) => m.path)).toEqual(["d/f3.txt", "d/f4.txt"]);
  });
});

describe("over-long globs", () => {
  test("pattern and glob over 1024 UTF-16 units are INVALID_ARGUMENT naming the parameter; 1024 is accepted", async () => {
    const { svc, root } = single();
    write(root, "a.txt", "needle\n");
    const e1 = await expectCode(svc.findFiles({ workdir: "w", pattern: "*".repeat(1025) }), "INVALID_ARGUMENT");
    expect(e1.message).toContain("pattern must be at most 1024 characters");
    const e2 = await expectCode(svc.searchText({ workdir: "w", query: "needle", glob: "*".repeat(1025) }), "INVALID_ARGUMENT");
    expect(e2.message).toContain("glob must be at most 1024 characters");
    // 513 astral characters are 1026 UTF-16 units
    await expectCode(svc.findFiles({ workdir: "w", pattern: "\u{1F600}".repeat(513) }), "INVALID_ARGUMENT");
    expect((await svc.findFiles({ workdir: "w", pattern: `${"*".repeat(1019)}a.txt` })).matches).toEqual([{ path: "a.txt" }]);
    expect((await svc.searchText({ workdir: "w", query: "needle", glob: `${"*".repeat(1019)}a.txt` })).returned).toBe(1);
  });
});

describe("walks share the event loop", () => {
  test("list_directory of a large directory lets a timer in before it answers", async () => {
    // A 512-character deny glob costs ~0.3 ms per long name: seconds of work made cheap to set up.
    const { svc, root } = single({ extra_deny_globs: [`${"*?".repeat(254)}*[b]`] });
    heavyTree(root, 400);
    const order: string[] = [];
    const list = svc.listDirectory({ workdir: "w", offset: 398 }).then((r) => {
      order.push(`list:${r.entries.map((e) => e.name.slice(240)).join(",")}:${r.has_more}`);
    });
    setTimeout(() => order.push("timer"), 0);
    await list;
    expect(order).toEqual(["timer", "list:00398,00399:false"]);
  });

  test("search: one large file on the slow (non-ASCII, case-insensitive) path is paced inside the file", async () => {
    const { svc, root } = single();
    const line = `${"é".repeat(30)} xyz\n`;
    write(root, "big.txt", line.repeat(Math.floor((8 << 20) / Buffer.byteLength(line))));
    const order: string[] = [];
    const search = svc.searchText({ workdir: "w", query: "ÉÉ nomatch", case_sensitive: false }).then((r) => {
      order.push(`search:${r.returned}`);
    });
    setTimeout(() => order.push("timer"), 0);
    await search;
    expect(order).toEqual(["timer", "search:0"]);
    const hit = await svc.searchText({ workdir: "w", query: "ÉÉ XYZ", case_sensitive: false, limit: 2 });
    expect(hit).toMatchObject({ returned: 2, truncated: true });
    expect(hit.matches.map((m) => m.line)).toEqual([1, 2]);
  });

  for (const tool of ["find", "search"] as const) {
    test(`${tool}: a timer set after the walk started fires before the walk ends`, async () => {
      const { svc, root } = single();
      heavyTree(root, 400);
      const order: string[] = [];
      const walk = (tool === "find" ? svc.findFiles({ workdir: "w", pattern: HEAVY }) : svc.searchText({ workdir: "w", query: "needle", glob: HEAVY })).then((r) => {
        order.push(`walk:${r.returned}`);
      });
      setTimeout(() => order.push("timer"), 0);
      await walk;
      expect(order).toEqual(["timer", "walk:0"]);
    });

    test(`${tool}: cancelling the request mid-walk ends it with SEARCH_FAILED`, async () => {
      const { svc, root } = single();
      heavyTree(root, 400);
      const ac = new AbortController();
      const walk = tool === "find" ? svc.findFiles({ workdir: "w", pattern: HEAVY }, ac.signal) : svc.searchText({ workdir: "w", query: "needle", glob: HEAVY }, ac.signal);
      setTimeout(() => ac.abort(), 0);
      const err = await expectCode(walk, "SEARCH_FAILED");
      expect(err.message).toContain("cancelled");
    });
  }

  test("read_text_file: skipping to a far start_line is paced and cancellable, and the page is still exact", async () => {
    const { svc, root } = single();
    const lines = 4_000_000; // 8 MB of "x\n": far more than 25 ms of scanning on any machine here
    write(root, "log.txt", "x\n".repeat(lines - 1) + "last\n");
    const order: string[] = [];
    const read = svc.readTextFile({ workdir: "w", path: "log.txt", start_line: lines }).then((r) => {
      order.push(`read:${r.start_line}:${JSON.stringify(r.content)}:${r.has_more}`);
    });
    setTimeout(() => order.push("timer"), 0);
    await read;
    expect(order).toEqual(["timer", `read:${lines}:"last\\n":false`]);
    const ac = new AbortController();
    const cancelled = svc.readTextFile({ workdir: "w", path: "log.txt", start_line: lines + 1 }, ac.signal);
    setTimeout(() => ac.abort(), 0);
    const err = await expectCode(cancelled, "READ_FAILED");
    expect(err.message).toContain("cancelled");
  });
});
