// find_files: basename fnmatch, regular files only, policy skip-and-prune, walk cap, limits, and
// descriptor use bounded by depth (EMFILE → RESOURCE_EXHAUSTED) proved in child processes.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { expectCode, mkfifo, single, write } from "./helpers.ts";

describe("find_files", () => {
  test("basename fnmatch, case-sensitive, regular files only, content irrelevant", async () => {
    const { svc, root } = single();
    write(root, "a.txt", "x");
    write(root, "B.TXT", "x");
    write(root, "nul.txt", Buffer.from([0, 1, 2]));
    write(root, "bad.txt", Buffer.from([0xff]));
    write(root, "deep/er/c.txt", "x");
    fs.mkdirSync(path.join(root, "dir.txt"));
    fs.symlinkSync("a.txt", path.join(root, "link.txt"));
    mkfifo(path.join(root, "fifo.txt"));
    const r = await svc.findFiles({ workdir: "w", pattern: "*.txt" });
    expect(r.matches.map((m) => m.path).sort()).toEqual(["a.txt", "bad.txt", "deep/er/c.txt", "nul.txt"]);
    expect(r).toMatchObject({ returned: 4, truncated: false });
    expect((await svc.findFiles({ workdir: "w", pattern: "*.TXT" })).matches).toEqual([{ path: "B.TXT" }]);
    expect((await svc.findFiles({ workdir: "w", pattern: "deep/*" })).matches).toEqual([]); // basename only
    expect((await svc.findFiles({ workdir: "w", pattern: "c.txt", path: "deep" })).matches).toEqual([{ path: "deep/er/c.txt" }]);
    await expectCode(svc.findFiles({ workdir: "w", pattern: "*", path: "a.txt" }), "NOT_A_DIRECTORY");
    await expectCode(svc.findFiles({ workdir: "w", pattern: "*", path: "missing" }), "PATH_NOT_FOUND");
  });

  test("hidden skipped and not descended unless allowed; VCS dirs are not special; denied pruned", async () => {
    const { svc, root } = single();
    write(root, ".git/config.txt", "x");
    write(root, ".hidden/in.txt", "x");
    write(root, "node/.cache/c.txt", "x");
    write(root, "keys/x.pem", "x");
    write(root, "ok.txt", "x");
    expect((await svc.findFiles({ workdir: "w", pattern: "*" })).matches.map((m) => m.path).sort()).toEqual(["ok.txt"]);
    const h = single({ allow_hidden: true });
    for (const f of [".git/config.txt", ".hidden/in.txt", ".ssh/id.txt", "ok.txt"]) write(h.root, f, "x");
    expect((await h.svc.findFiles({ workdir: "w", pattern: "*.txt" })).matches.map((m) => m.path).sort()).toEqual([".git/config.txt", ".hidden/in.txt", "ok.txt"]);
  });

  test("limit and walk cap truncate", async () => {
    const { svc, root } = single({}, { max_search_results: 3 });
    for (let i = 0; i < 6; i++) write(root, `d/f${i}.txt`, "x");
    expect(await svc.findFiles({ workdir: "w", pattern: "*.txt", limit: 2 })).toMatchObject({ returned: 2, truncated: true });
    expect(await svc.findFiles({ workdir: "w", pattern: "*.txt", limit: 50 })).toMatchObject({ returned: 3, truncated: true });
    expect(await svc.findFiles({ workdir: "w", pattern: "f5.txt" })).toMatchObject({ returned: 1, truncated: false });
    const cap = single({}, { max_walk_entries: 1 });
    write(cap.root, "a.txt", "x");
    write(cap.root, "b.txt", "x");
    expect(await cap.svc.findFiles({ workdir: "w", pattern: "*.txt" })).toEqual({ matches: [{ path: "a.txt" }], returned: 1, truncated: true, ignored: 0 });
  });

  test.skipIf(process.platform !== "linux" || Bun.which("prlimit") === null)("descriptor use is bounded by depth; EMFILE is RESOURCE_EXHAUSTED", () => {
    const { root } = single();
    let rel = "";
    for (let i = 0; i < 120; i++) rel = path.join(rel, `l${i}`);
    write(root, path.join(rel, "leaf.txt"), "leaf\n");
    const child = (mode: string, nofile: number) => {
      const p = Bun.spawnSync(["prlimit", `--nofile=${nofile}`, process.execPath, path.join(import.meta.dir, "fixtures/find-child.ts"), mode, root]);
      return JSON.parse(p.stdout.toString().trim().split("\n").pop() as string);
    };
    // 120 levels deep under a 64-descriptor ceiling: one directory descriptor at a time suffices
    expect(child("walk", 64)).toMatchObject({ find: 1, search: 1, list: 1 });
    const exhausted = child("exhaust", 64);
    expect(exhausted.held).toBeGreaterThan(0);
    expect(exhausted).toMatchObject({ find: "RESOURCE_EXHAUSTED", search: "RESOURCE_EXHAUSTED", list: "RESOURCE_EXHAUSTED" });
  });
});
