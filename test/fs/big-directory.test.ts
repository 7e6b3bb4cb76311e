// Directories larger than what a call may keep: list_directory pages of a directory several
// kernel buffers long are exactly the slices of the full sorted listing, and pages deeper than
// max_walk_entries are INVALID_ARGUMENT; find_files and search_text read a directory larger than
// their remaining walk budget keeping only its smallest entries, and stop and report truncated at
// exactly the entry where a full read would have stopped them.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { compareNames } from "../../src/fs/order.ts";
import { expectCode, single, write } from "./helpers.ts";

const LONG = "l".repeat(180);

describe("list_directory over a large directory", () => {
  test("every page is the slice of the full sorted, filtered listing; has_more is exact", async () => {
    const { svc, root } = single({}, { max_list_entries: 500 });
    // 3 000 entries of ~200 bytes: several getdents64 buffers, in hash-like order
    const names: string[] = [];
    for (let i = 0; i < 3000; i++) names.push(`${LONG}-${String((i * 7919) % 3000).padStart(4, "0")}${i % 10 === 0 ? "\u{1F600}" : i % 10 === 1 ? "\uE000" : ""}`);
    for (const n of names) fs.closeSync(fs.openSync(path.join(root, n), "w"));
    for (let i = 0; i < 40; i++) write(root, `.hidden-${i}`, "x"); // never listed, never counted
    write(root, "id_rsa", "x"); // denied by default
    fs.mkdirSync(path.join(root, "zdir"));
    const full = [...names, "zdir"].sort(compareNames);
    for (const [offset, limit] of [
      [0, 100],
      [0, 500],
      [1234, 77],
      [2900, 100],
      [2901, 100],
      [2950, 500],
      [3001, 5],
      [5000, 10],
    ] as const) {
      const r = await svc.listDirectory({ workdir: "w", offset, limit });
      expect(r.entries.map((e) => e.name)).toEqual(full.slice(offset, offset + limit));
      expect(r).toMatchObject({ offset, limit, returned: Math.max(0, Math.min(limit, full.length - offset)), has_more: offset + limit < full.length });
    }
    const last = await svc.listDirectory({ workdir: "w", offset: 3000, limit: 1 });
    expect(last.entries).toEqual([{ name: "zdir", path: "zdir", type: "directory", size: null, modified_at: expect.any(String) }]);
  });

  test("offset + limit deeper than max_walk_entries is INVALID_ARGUMENT naming offset; the first page always works", async () => {
    const { svc, root } = single({}, { max_walk_entries: 20, max_list_entries: 10, default_list_limit: 10 });
    for (let i = 0; i < 30; i++) write(root, `f${String(i).padStart(2, "0")}`, "");
    expect((await svc.listDirectory({ workdir: "w", offset: 10, limit: 10 })).entries.map((e) => e.name)).toEqual(Array.from({ length: 10 }, (_, i) => `f${10 + i}`));
    const e = await expectCode(svc.listDirectory({ workdir: "w", offset: 11, limit: 10 }), "INVALID_ARGUMENT");
    expect(e.message).toContain("offset + limit must be at most 20 (max_walk_entries); got offset 11 with limit 10");
    await expectCode(svc.listDirectory({ workdir: "w", offset: 2 ** 53 }), "INVALID_ARGUMENT");
    // the default limit counts too, and a limit is clamped before the check
    await expectCode(svc.listDirectory({ workdir: "w", offset: 11 }), "INVALID_ARGUMENT");
    expect((await svc.listDirectory({ workdir: "w", offset: 10, limit: 400 })).returned).toBe(10);
    // a cap smaller than one page still lets the first page through
    const tiny = single({}, { max_walk_entries: 1, max_list_entries: 10, default_list_limit: 10 });
    for (let i = 0; i < 3; i++) write(tiny.root, `t${i}`, "");
    expect(await tiny.svc.listDirectory({ workdir: "w" })).toMatchObject({ returned: 3, has_more: false });
    await expectCode(tiny.svc.listDirectory({ workdir: "w", offset: 1 }), "INVALID_ARGUMENT");
  });
});

/** a/ with 3 files, then big/ with `hidden` hidden files and `files` files: the walk order is a, big, a/*, big/* (sorted). */
function capTree(root: string, files: number, hidden: number): void {
  for (let i = 0; i < 3; i++) write(root, `a/x${i}.txt`, "needle\n");
  for (let i = 0; i < hidden; i++) write(root, `big/.h${i}.txt`, "needle\n");
  for (let i = 0; i < files; i++) write(root, `big/f${String(i).padStart(3, "0")}.txt`, "needle\n");
}

describe("walks over a directory larger than the remaining budget", () => {
  const A = ["a/x0.txt", "a/x1.txt", "a/x2.txt"];
  const big = (n: number) => Array.from({ length: n }, (_, i) => `big/f${String(i).padStart(3, "0")}.txt`);

  test("find_files: hidden entries count, the walk stops at the entry past the cap, truncated", async () => {
    // 2 (a, big) + 3 (a/*) + 5 hidden = 10 walked before big's files: 20 of them fit in 30
    const { svc, root } = single({}, { max_walk_entries: 30 });
    capTree(root, 400, 5);
    expect(await svc.findFiles({ workdir: "w", pattern: "*.txt", limit: 100 })).toEqual({ matches: [...A, ...big(20)].map((p) => ({ path: p })), returned: 23, truncated: true, ignored: 0 });
    // the match limit still stops first when it comes first
    expect(await svc.findFiles({ workdir: "w", pattern: "*.txt", limit: 5 })).toMatchObject({ returned: 5, truncated: true });
  });

  test("find_files: a walk that visits exactly the cap is not truncated", async () => {
    const { svc, root } = single({}, { max_walk_entries: 30 });
    capTree(root, 20, 5);
    expect(await svc.findFiles({ workdir: "w", pattern: "*.txt", limit: 100 })).toEqual({ matches: [...A, ...big(20)].map((p) => ({ path: p })), returned: 23, truncated: false, ignored: 0 });
  });

  test("search_text: the same cap, counted the same way, reported as truncated", async () => {
    const { svc, root } = single({}, { max_walk_entries: 30 });
    capTree(root, 400, 5);
    const r = await svc.searchText({ workdir: "w", query: "needle", limit: 100 });
    expect(r.matches.map((m) => m.path)).toEqual([...A, ...big(20)]);
    expect(r).toMatchObject({ returned: 23, truncated: true });
    const exact = single({}, { max_walk_entries: 30 });
    capTree(exact.root, 20, 5);
    expect(await exact.svc.searchText({ workdir: "w", query: "needle", limit: 100 })).toMatchObject({ returned: 23, truncated: false });
  });
});
