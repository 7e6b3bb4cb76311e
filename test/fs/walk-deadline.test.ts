// Every walk runs under search_timeout_seconds, checked per directory entry; a walk (and a
// listing of a large directory) gives the event loop back while it runs and ends when its request is cancelled; over-long globs are
// refused before any walking. Service level; test/mcp/glob-walk.test.ts covers the real server.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { setSearchWorkerEnabled } from "../../src/fs/search/search-pool.ts";
import { loopTurnsDuring, withFastClock } from "./fast-clock.ts";
import { expectCode, single, testNative, write } from "./helpers.ts";
import { slowDirectoryReads } from "./slow-native.ts";

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
  // Each proof makes the walk's slow side slow by construction, never by counting on the machine:
  // directory walks read through a backend that charges SLOW_MS of the walk's own clock per entry
  // (slow-native.ts), and file scans run under a clock that runs fast (fast-clock.ts). The other
  // side records how far the walk had got, so "it ran while the walk was unfinished" is observed.
  /** 0.1 ms per entry: one 256-entry step of a directory read holds the thread past the 25 ms yield line. */
  const SLOW_MS = 0.1;
  /** Eight steps of a directory read: seven yields at the least. */
  const N = 2048;

  function flatTree(root: string, n: number): void {
    for (let i = 0; i < n; i++) fs.writeFileSync(path.join(root, `f${String(i).padStart(5, "0")}`), "needle\n");
  }

  function slowService(): { svc: ReturnType<typeof single>["svc"]; seen: () => number } {
    const slow = slowDirectoryReads(testNative(), SLOW_MS);
    const { svc, root } = single({}, {}, slow.native);
    flatTree(root, N);
    return { svc, seen: slow.seen };
  }

  test("list_directory of a large directory lets a timer in before it answers", async () => {
    const { svc, seen } = slowService();
    let seenByTimer = -1;
    const list = svc.listDirectory({ workdir: "w", offset: N - 2 }).then((r) => ({ r, seenAtAnswer: seen() }));
    setTimeout(() => (seenByTimer = seen()), 0);
    const { r, seenAtAnswer } = await list;
    expect(r.entries.map((e) => e.name)).toEqual([`f0${N - 2}`, `f0${N - 1}`]);
    expect(r.has_more).toBe(false);
    expect(seenAtAnswer).toBe(N);
    // the timer ran while the listing had read some of the directory but not all of it
    expect(seenByTimer).toBeGreaterThan(0);
    expect(seenByTimer).toBeLessThan(N);
  });

  test("search: one large file on the slow (non-ASCII, case-insensitive) path is paced inside the file", async () => {
    const { svc, root } = single({}, { search_timeout_seconds: 3600 });
    const line = `${"é".repeat(30)} xyz\n`;
    write(root, "big.txt", line.repeat(Math.floor((8 << 20) / Buffer.byteLength(line))));
    // one file scanned on this thread (no search worker): every turn it gives back is a yield inside that file
    setSearchWorkerEnabled(false);
    let turns;
    try {
      turns = await withFastClock(() => loopTurnsDuring(svc.searchText({ workdir: "w", query: "ÉÉ nomatch", case_sensitive: false })));
    } finally {
      setSearchWorkerEnabled(true);
    }
    expect(turns.result.returned).toBe(0);
    expect(turns.count).toBeGreaterThanOrEqual(2);
    const hit = await svc.searchText({ workdir: "w", query: "ÉÉ XYZ", case_sensitive: false, limit: 2 });
    expect(hit).toMatchObject({ returned: 2, truncated: true });
    expect(hit.matches.map((m) => m.line)).toEqual([1, 2]);
  });

  for (const tool of ["find", "search"] as const) {
    test(`${tool}: a timer set after the walk started fires before the walk ends`, async () => {
      const { svc, seen } = slowService();
      let seenByTimer = -1;
      const walk = (tool === "find" ? svc.findFiles({ workdir: "w", pattern: "*.none" }) : svc.searchText({ workdir: "w", query: "needle", glob: "*.none" })).then((r) => ({
        returned: r.returned,
        seenAtAnswer: seen(),
      }));
      setTimeout(() => (seenByTimer = seen()), 0);
      expect(await walk).toEqual({ returned: 0, seenAtAnswer: N });
      expect(seenByTimer).toBeGreaterThan(0);
      expect(seenByTimer).toBeLessThan(N);
    });

    test(`${tool}: cancelling the request mid-walk ends it with SEARCH_FAILED`, async () => {
      const { svc, seen } = slowService();
      const ac = new AbortController();
      const walk = tool === "find" ? svc.findFiles({ workdir: "w", pattern: "*.none" }, ac.signal) : svc.searchText({ workdir: "w", query: "needle", glob: "*.none" }, ac.signal);
      let seenAtAbort = -1;
      setTimeout(() => {
        seenAtAbort = seen();
        ac.abort();
      }, 0);
      const err = await expectCode(walk, "SEARCH_FAILED");
      expect(err.message).toContain("cancelled");
      // it was cancelled part-way, and read no further once it was
      expect(seenAtAbort).toBeGreaterThan(0);
      expect(seenAtAbort).toBeLessThan(N);
      expect(seen()).toBe(seenAtAbort);
    });
  }

  test("read_text_file: skipping to a far start_line is paced and cancellable, and the page is still exact", async () => {
    const { svc, root } = single();
    const lines = 4_000_000; // 8 MB of "x\n": 128 reads of 64 KiB
    write(root, "log.txt", "x\n".repeat(lines - 1) + "last\n");
    const turns = await withFastClock(() => loopTurnsDuring(svc.readTextFile({ workdir: "w", path: "log.txt", start_line: lines })));
    expect(turns.result).toMatchObject({ start_line: lines, content: "last\n", has_more: false });
    expect(turns.count).toBeGreaterThanOrEqual(2);
    const ac = new AbortController();
    const err = await withFastClock(async () => {
      const cancelled = svc.readTextFile({ workdir: "w", path: "log.txt", start_line: lines + 1 }, ac.signal);
      setImmediate(() => ac.abort());
      return expectCode(cancelled, "READ_FAILED");
    });
    expect(err.message).toContain("cancelled");
  });
});
