// cross_mounts with real mounts: a tmpfs at workdir/mnt, a bind mount of a directory on the SAME
// filesystem at workdir/bind (a device-number check alone would miss it) and a file bind mount at
// workdir/fbind.txt. The mounts are made by a child in its own mount namespace (`unshare -m`), so
// they disappear with it even if a test fails; both resolver modes run.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { mountsTree, tempDir, unshareMounts, write } from "./helpers.ts";

// Linux only: mount namespaces, openat2 and the fallback walk are Linux facilities.
const linux = process.platform === "linux";
const FIXTURE = path.join(import.meta.dir, "fixtures/mounts-child.ts");
const REFUSED = { code: "MOUNT_CROSSING_NOT_ALLOWED" };

type Outcome = { value?: unknown; code?: string };
type Run = { openat2: boolean; false: Record<string, Outcome | boolean>; true: Record<string, Outcome | boolean> };

function runChild(mode: "openat2" | "walk", base: string): Run {
  const p = Bun.spawnSync([...unshareMounts(), process.execPath, FIXTURE, mode, base], { stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`mount child failed (${p.exitCode}): ${p.stderr.toString().slice(0, 2000)}`);
  return JSON.parse(p.stdout.toString().trim().split("\n").pop() as string) as Run;
}

for (const mode of ["openat2", "walk"] as const) {
  describe.skipIf(!linux)(`cross_mounts with real mounts (${mode})`, () => {
    let base: string;
    let run: Run;
    let parentView: string[];

    beforeAll(() => {
      base = mountsTree();
      parentView = fs.readdirSync(path.join(base, "root")).sort();
      run = runChild(mode, base);
    });
    afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

    test("the resolver mode is the one under test", () => {
      expect(run.openat2).toBe(mode === "openat2");
    });

    test("cross_mounts = false: every direct access through a mount point is MOUNT_CROSSING_NOT_ALLOWED", () => {
      const r = run.false;
      for (const op of [
        "read:mnt/file.txt", "stat:mnt/file.txt", "stat:mnt", "list:mnt", "list:mnt/deep", "resource:mnt/file.txt",
        "download:mnt/file.txt", "find:mnt", "search:mnt", "tree:mnt", "read:bind/b.txt", "list:bind", "stat:fbind.txt", "read:fbind.txt",
        "create:mnt/new.txt", "mkdir:mnt/newdir", "create:bind/new.txt",
      ]) {
        expect({ op, outcome: r[op] }).toEqual({ op, outcome: REFUSED });
      }
      expect(r.unchanged).toBe(true);
    });

    test("cross_mounts = false: the rest of the workdir works, and walks never show or enter a mount point", () => {
      const r = run.false;
      expect(r["stat:"]).toEqual({ value: "directory" });
      expect(r["read:top.txt"]).toEqual({ value: "needle top\n" });
      expect(r["list:"]).toEqual({ value: ["sub", "top.txt"] });
      expect(r["find:"]).toEqual({ value: ["sub/inner.txt", "top.txt"] });
      expect(r["search:"]).toEqual({ value: ["sub/inner.txt", "top.txt"] });
      expect(r["tree:"]).toEqual({ value: ["sub/", "sub/inner.txt", "top.txt"] });
    });

    test("cross_mounts = false: a workdir whose root is itself a mount point is served normally", () => {
      expect(run.false["m/list:"]).toEqual({ value: ["deep", "file.txt"] });
      expect(run.false["m/read:file.txt"]).toEqual({ value: "needle mounted\n" });
    });

    test("cross_mounts = true (the default): mounts are crossed like directories", () => {
      const r = run.true;
      expect(r["list:"]).toEqual({ value: ["bind", "fbind.txt", "mnt", "sub", "top.txt"] });
      expect(r["find:"]).toEqual({ value: ["bind/b.txt", "fbind.txt", "mnt/deep/d.txt", "mnt/file.txt", "sub/inner.txt", "top.txt"] });
      expect(r["search:"]).toEqual({ value: ["bind/b.txt", "fbind.txt", "mnt/deep/d.txt", "mnt/file.txt", "sub/inner.txt", "top.txt"] });
      expect(r["tree:"]).toEqual({ value: ["bind/", "bind/b.txt", "fbind.txt", "mnt/", "mnt/deep/", "mnt/deep/d.txt", "mnt/file.txt", "sub/", "sub/inner.txt", "top.txt"] });
      expect(r["tree:mnt"]).toEqual({ value: ["deep/", "deep/d.txt", "file.txt"] });
      expect(r["read:mnt/file.txt"]).toEqual({ value: "needle mounted\n" });
      expect(r["resource:mnt/file.txt"]).toEqual({ value: "needle mounted\n" });
      expect(r["download:mnt/file.txt"]).toEqual({ value: "needle mounted\n" });
      expect(r["stat:mnt"]).toEqual({ value: "directory" });
      expect(r["list:mnt"]).toEqual({ value: ["deep", "file.txt"] });
      expect(r["read:bind/b.txt"]).toEqual({ value: "needle b\n" });
      expect(r["read:fbind.txt"]).toEqual({ value: "needle outside\n" });
      expect(r["m/read:file.txt"]).toEqual({ value: "needle mounted\n" });
      expect(r.unchanged).toBe(true);
    });

    test("the mounts lived only in the child's namespace; nothing was written underneath", () => {
      expect(fs.readdirSync(path.join(base, "root")).sort()).toEqual(parentView);
      expect(fs.readdirSync(path.join(base, "root/mnt"))).toEqual([]);
      expect(fs.readdirSync(path.join(base, "root/bind"))).toEqual([]);
      expect(fs.readFileSync(path.join(base, "root/fbind.txt"), "utf8")).toBe("underlying\n");
      expect(fs.readdirSync(path.join(base, "other"))).toEqual(["b.txt"]);
    });
  });
}

describe.skipIf(!linux)("cross_mounts = false under descriptor exhaustion", () => {
  for (const mode of ["openat2", "walk"] as const) {
    test(`one free descriptor is RESOURCE_EXHAUSTED, never a mount crossing (${mode})`, () => {
      const base = tempDir("serverfs-mounts-");
      write(base, "sub/deeper/f.txt", "leaf\n");
      write(base, "sub/g.txt", "leaf\n");
      const p = Bun.spawnSync(["prlimit", "--nofile=64", process.execPath, path.join(import.meta.dir, "fixtures/exhaust-confined-child.ts"), mode, base]);
      expect(p.exitCode).toBe(0);
      const out = JSON.parse(p.stdout.toString().trim().split("\n").pop() as string) as Record<string, string>;
      expect(out).toEqual({
        read: "RESOURCE_EXHAUSTED",
        // one O_PATH open and fstat fit in one slot; the walk also reads fdinfo per component
        stat: mode === "openat2" ? "ok" : "RESOURCE_EXHAUSTED",
        list: "RESOURCE_EXHAUSTED",
        find: "RESOURCE_EXHAUSTED",
        after: "leaf\n",
      });
      fs.rmSync(base, { recursive: true, force: true });
    });
  }
});
