// directory_tree at the service level, on real trees: the escape classes, the depth bound, the
// entry limit and the walk cap (with truncated exactly where entries were left out), the deadline
// and cancellation, policy filtering of nested entries (the same files find_files sees), symlinks
// never followed (a loop included) and sizes equal to the bytes on disk. Run with both Linux
// resolvers where the kernel-checked open matters.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { forceResolver } from "../../platform/fs/linux.ts";
import { compareNames } from "../../src/fs/order.ts";
import { createFileService, type FileService, type TreeNode } from "../../src/fs/index.ts";
import { expectCode, registry, removeTemp, single, tempDir, workdir, write } from "./helpers.ts";

const linux = process.platform === "linux";

/** Depth-first pre-order paths of a tree's nodes: `dir/` for directories, `name@` for symlinks. */
function flat(node: TreeNode, prefix = ""): string[] {
  const out: string[] = [];
  for (const c of node.children ?? []) {
    const p = `${prefix}${c.name}`;
    out.push(c.type === "directory" ? `${p}/` : c.type === "symlink" ? `${p}@` : p);
    if (c.children !== undefined) out.push(...flat(c, `${p}/`));
  }
  return out;
}

function find(node: TreeNode, rel: string): TreeNode {
  let n = node;
  for (const part of rel.split("/")) {
    const next = n.children?.find((c) => c.name === part);
    if (next === undefined) throw new Error(`no node ${rel}`);
    n = next;
  }
  return n;
}

for (const mode of ["openat2", "walk"] as const) {
  describe.skipIf(!linux)(`directory_tree escape classes (${mode})`, () => {
    let base: string;
    let svc: FileService;
    beforeAll(() => {
      forceResolver(mode);
      base = tempDir();
      const root = path.join(base, "w");
      const other = path.join(base, "other");
      write(root, "sub/f.txt", "inside\n");
      write(root, "real/inner/t.txt", "t\n");
      write(root, ".hidden/h.txt", "h\n");
      write(root, "secret/s.txt", "s\n");
      write(root, ".serverfs-tmp-0123456789abcdef/x", "x\n");
      write(root, "plain.txt", "p\n");
      write(other, "theirs/o.txt", "OTHER-MARKER\n");
      write(base, "outside/o.txt", "OUTSIDE\n");
      fs.symlinkSync("real", path.join(root, "inlink"));
      fs.symlinkSync(path.join(base, "outside"), path.join(root, "out"));
      fs.symlinkSync(other, path.join(root, "to-other"));
      svc = createFileService(registry([workdir("w", root, { extra_deny_globs: ["secret"] }), workdir("o", other)]));
    });
    afterAll(() => {
      svc.close();
      forceResolver(null);
      removeTemp(base);
    });

    test("paths that leave the workdir, pass a symlink or are refused by policy never list anything", async () => {
      const cases: [string, string][] = [
        ["..", "PATH_OUTSIDE_WORKDIR"],
        ["sub/../..", "PATH_OUTSIDE_WORKDIR"],
        ["/etc", "PATH_OUTSIDE_WORKDIR"],
        [path.join(base, "outside"), "PATH_OUTSIDE_WORKDIR"],
        ["~", "PATH_OUTSIDE_WORKDIR"],
        ["inlink", "SYMLINK_NOT_ALLOWED"],
        ["inlink/inner", "SYMLINK_NOT_ALLOWED"],
        ["out", "SYMLINK_NOT_ALLOWED"],
        ["to-other/theirs", "SYMLINK_NOT_ALLOWED"],
        [".hidden", "HIDDEN_PATH_NOT_ALLOWED"],
        ["secret", "DENIED_PATH"],
        [".serverfs-tmp-0123456789abcdef", "RESERVED_PATH"],
        ["plain.txt", "NOT_A_DIRECTORY"],
        ["missing", "PATH_NOT_FOUND"],
      ];
      for (const [p, code] of cases) {
        const e = await expectCode(svc.directoryTree({ workdir: "w", path: p }), code as never);
        // only the caller's own input is echoed, never where the workdir lives
        if (!p.startsWith("/")) expect(e.message).not.toContain(base);
      }
      await expectCode(svc.directoryTree({ workdir: "nope" }), "WORKDIR_NOT_FOUND");
    });

    test("symlinks inside the tree are symlink nodes: never followed into another workdir or outside", async () => {
      const r = await svc.directoryTree({ workdir: "w" });
      expect(flat(r.tree)).toEqual(["inlink@", "out@", "plain.txt", "real/", "real/inner/", "real/inner/t.txt", "sub/", "sub/f.txt", "to-other@"]);
      expect(find(r.tree, "to-other")).toEqual({ name: "to-other", type: "symlink" });
      expect(JSON.stringify(r)).not.toContain("theirs");
      // the other workdir is its own tree
      expect(flat((await svc.directoryTree({ workdir: "o" })).tree)).toEqual(["theirs/", "theirs/o.txt"]);
    });
  });
}

describe.skipIf(!linux)("directory_tree bounds", () => {
  test("max_depth: 1 lists the entries only, deeper directories have no children; above 10 is clamped", async () => {
    const { svc, root, base } = single();
    const chain = Array.from({ length: 12 }, (_, i) => `d${i + 1}`);
    write(root, `${chain.join("/")}/leaf.txt`, "leaf\n");
    write(root, "top.txt", "t\n");
    const one = await svc.directoryTree({ workdir: "w", max_depth: 1 });
    expect(one).toMatchObject({ max_depth: 1, returned: 2, truncated: false, depth_limited: true });
    expect(one.tree.children).toEqual([{ name: "d1", type: "directory" }, { name: "top.txt", type: "file", size: 2 }]);
    const dflt = await svc.directoryTree({ workdir: "w" });
    expect(flat(dflt.tree)).toEqual(["d1/", "d1/d2/", "d1/d2/d3/", "top.txt"]);
    expect(find(dflt.tree, "d1/d2/d3").children).toBeUndefined();
    const deep = await svc.directoryTree({ workdir: "w", max_depth: 99 });
    expect(deep.max_depth).toBe(10);
    expect(flat(deep.tree).filter((p) => p.endsWith("/")).length).toBe(10);
    expect(find(deep.tree, chain.slice(0, 10).join("/")).children).toBeUndefined();
    // from a sub-directory, depth counts from there: the leaf is reachable
    const sub = await svc.directoryTree({ workdir: "w", path: chain.slice(0, 10).join("/"), max_depth: 3 });
    expect(flat(sub.tree)).toEqual(["d11/", "d11/d12/", "d11/d12/leaf.txt"]);
    expect(sub).toMatchObject({ depth_limited: false, truncated: false, path: chain.slice(0, 10).join("/") });
    expect(sub.tree.name).toBe("d10");
    await expectCode(svc.directoryTree({ workdir: "w", max_depth: 0 }), "INVALID_ARGUMENT");
    await expectCode(svc.directoryTree({ workdir: "w", max_depth: 1.5 }), "INVALID_ARGUMENT");
    svc.close();
    removeTemp(base);
  });

  describe("a 3 000-file fixture tree", () => {
    let fix: ReturnType<typeof single>;
    const dirs = Array.from({ length: 30 }, (_, i) => `d${String(i).padStart(2, "0")}`);
    beforeAll(() => {
      fix = single({}, { max_list_entries: 500 });
      for (const d of dirs) {
        fs.mkdirSync(path.join(fix.root, d));
        for (let i = 0; i < 100; i++) fs.writeFileSync(path.join(fix.root, d, `f${String((i * 37) % 100).padStart(3, "0")}`), "x".repeat(i));
        for (let i = 0; i < 5; i++) fs.writeFileSync(path.join(fix.root, d, `.h${i}`), ""); // never shown, still counted by the walk cap
      }
    });
    afterAll(() => {
      fix.svc.close();
      removeTemp(fix.base);
    });

    test("the entry limit is filled level by level and every directory it cut says truncated", async () => {
      const r = await fix.svc.directoryTree({ workdir: "w" });
      expect(r).toMatchObject({ limit: 500, returned: 500, truncated: true, depth_limited: false });
      expect(r.tree.truncated).toBeUndefined();
      expect(r.tree.children!.map((c) => c.name)).toEqual(dirs);
      // 30 top-level entries, then 100 + 100 + 100 + 100 + 70 files
      for (const d of dirs.slice(0, 4)) {
        const n = find(r.tree, d);
        expect(n.truncated).toBeUndefined();
        expect(n.children!.map((c) => c.name)).toEqual(Array.from({ length: 100 }, (_, i) => `f${String(i).padStart(3, "0")}`));
      }
      const cut = find(r.tree, "d04");
      expect(cut.truncated).toBe(true);
      expect(cut.children!.map((c) => c.name)).toEqual(Array.from({ length: 70 }, (_, i) => `f${String(i).padStart(3, "0")}`));
      for (const d of dirs.slice(5)) expect(find(r.tree, d)).toEqual({ name: d, type: "directory", children: [], truncated: true });
      // a smaller limit: only the first level, partly
      const small = await fix.svc.directoryTree({ workdir: "w", limit: 3 });
      expect(small).toMatchObject({ returned: 3, truncated: true });
      expect(small.tree).toEqual({
        name: "",
        type: "directory",
        truncated: true,
        children: dirs.slice(0, 3).map((name) => ({ name, type: "directory", children: [], truncated: true })),
      });
      // a limit above max_list_entries is clamped
      expect((await fix.svc.directoryTree({ workdir: "w", limit: 100000 })).limit).toBe(500);
    });

    test("the walk cap counts every name seen, hidden ones too, and stops after the directory that reaches it", async () => {
      const svc = createFileService(registry([workdir("w", fix.root)], { max_walk_entries: 250 }));
      const r = await svc.directoryTree({ workdir: "w" });
      // root: 30 seen; d00 and d01: 105 each (240); d02 reaches the cap (345 > 250) and is still listed
      expect(r).toMatchObject({ returned: 330, truncated: true });
      for (const d of dirs.slice(0, 3)) expect(find(r.tree, d).children).toHaveLength(100);
      for (const d of dirs.slice(3)) expect(find(r.tree, d)).toEqual({ name: d, type: "directory", truncated: true });
      svc.close();
    });

    test("sizes are the bytes on disk", async () => {
      const r = await fix.svc.directoryTree({ workdir: "w", path: "d07" });
      expect(r.returned).toBe(100);
      for (const c of r.tree.children!) {
        expect(c.type).toBe("file");
        expect(c.size).toBe(fs.statSync(path.join(fix.root, "d07", c.name)).size);
      }
      expect(new Set(r.tree.children!.map((c) => c.size)).size).toBe(100);
    });
  });

  test("a directory far larger than the answer yields exactly its smallest names", async () => {
    const { svc, root, base } = single({}, { max_list_entries: 500 });
    const names: string[] = [];
    for (let i = 0; i < 20_000; i++) names.push(`n-${String((i * 7919) % 20_000).padStart(5, "0")}-${"x".repeat(100)}`);
    for (const n of names) fs.closeSync(fs.openSync(path.join(root, n), "w"));
    const r = await svc.directoryTree({ workdir: "w", limit: 10 });
    expect(r.tree.children!.map((c) => c.name)).toEqual([...names].sort(compareNames).slice(0, 10));
    expect(r).toMatchObject({ returned: 10, truncated: true });
    expect(r.tree.truncated).toBe(true);
    svc.close();
    removeTemp(base);
  });

  test("past search_timeout_seconds the walk is SEARCH_TIMEOUT; a cancelled walk is SEARCH_FAILED", async () => {
    const { svc, root, base } = single({}, { search_timeout_seconds: 0 });
    fs.mkdirSync(path.join(root, "empty"));
    expect((await svc.directoryTree({ workdir: "w", path: "empty" })).tree).toEqual({ name: "empty", type: "directory", children: [] });
    for (let i = 0; i < 300; i++) write(root, `d/f${i}`, "");
    await expectCode(svc.directoryTree({ workdir: "w" }), "SEARCH_TIMEOUT");
    const ok = createFileService(registry([workdir("w", root)]));
    const ac = new AbortController();
    ac.abort();
    const e = await expectCode(ok.directoryTree({ workdir: "w" }, ac.signal), "SEARCH_FAILED");
    expect(e.message).toContain("tree was cancelled");
    svc.close();
    ok.close();
    removeTemp(base);
  });
});

describe.skipIf(!linux)("directory_tree policy and symlinks", () => {
  test("nested hidden, denied and reserved entries are left out: the files shown are exactly find_files' files", async () => {
    for (const allow_hidden of [false, true]) {
      const { svc, root, base } = single({ allow_hidden, extra_deny_globs: ["build", "a/private/**"] });
      write(root, "a/ok.txt", "1");
      write(root, "a/.cfg/inner.txt", "2");
      write(root, "a/b/id_rsa", "3");
      write(root, "a/b/.env", "4");
      write(root, "a/b/keep.md", "5");
      write(root, "a/build/out.js", "6");
      write(root, "a/private/p.txt", "7");
      write(root, "a/private-not/q.txt", "8");
      write(root, "a/.serverfs-tmp-00000000000000aa", "9");
      write(root, ".git/HEAD", "ref\n");
      write(root, ".git/objects/ab/cd", "obj");
      const r = await svc.directoryTree({ workdir: "w", max_depth: 10 });
      const files = flat(r.tree).filter((p) => !p.endsWith("/"));
      const found = (await svc.findFiles({ workdir: "w", pattern: "*", limit: 100 })).matches.map((m) => m.path);
      expect(files.sort()).toEqual(found.sort());
      expect(files.sort()).toEqual(
        allow_hidden
          ? [".git/HEAD", ".git/objects/ab/cd", "a/.cfg/inner.txt", "a/b/keep.md", "a/ok.txt", "a/private-not/q.txt"]
          : ["a/b/keep.md", "a/ok.txt", "a/private-not/q.txt"],
      );
      const dirsShown = flat(r.tree).filter((p) => p.endsWith("/"));
      expect(dirsShown).not.toContain("a/build/");
      expect(dirsShown).not.toContain("a/private/");
      svc.close();
      removeTemp(base);
    }
  });

  test("symlink loops are listed as symlinks and the walk ends", async () => {
    const { svc, root, base } = single();
    write(root, "a/f.txt", "abc");
    fs.symlinkSync("..", path.join(root, "a/up"));
    fs.symlinkSync(".", path.join(root, "a/self"));
    fs.symlinkSync("loop2", path.join(root, "loop1"));
    fs.symlinkSync("loop1", path.join(root, "loop2"));
    fs.symlinkSync(root, path.join(root, "a/root"));
    const r = await svc.directoryTree({ workdir: "w", max_depth: 10 });
    expect(flat(r.tree)).toEqual(["a/", "a/f.txt", "a/root@", "a/self@", "a/up@", "loop1@", "loop2@"]);
    expect(r).toMatchObject({ returned: 7, truncated: false, depth_limited: false });
    await expectCode(svc.directoryTree({ workdir: "w", path: "a/up" }), "SYMLINK_NOT_ALLOWED");
    await expectCode(svc.directoryTree({ workdir: "w", path: "loop1" }), "SYMLINK_NOT_ALLOWED");
    svc.close();
    removeTemp(base);
  });

  test("fifos and sockets are 'other' nodes without a size, and nothing is opened through them", async () => {
    const { svc, root, base } = single();
    Bun.spawnSync(["mkfifo", path.join(root, "pipe")]);
    const r = await svc.directoryTree({ workdir: "w" });
    expect(r.tree.children).toEqual([{ name: "pipe", type: "other" }]);
    svc.close();
    removeTemp(base);
  });
});
