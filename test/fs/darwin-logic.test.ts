// The macOS backend's own logic (platform/fs/resolve-darwin.ts: the descriptor-relative walk,
// its steps below PATH_MAX, fstatat metadata, ENXIO for special files, device confinement, the
// O_SEARCH retry) run here on Linux, through test/support/darwin-calls-linux.ts, which translates
// its macOS-flagged calls onto Linux syscalls and is strict where the backend promises something
// (a lookup of 1024 bytes or more is ENAMETOOLONG; O_NOFOLLOW_ANY refuses any symlink; fstatat
// and non-NOFOLLOW_ANY opens must name one component). Linux only: on a Mac the real backend runs
// all of test/fs, and test/platform/darwin-fs.test.ts checks libSystem itself.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { O } from "../../platform/fs/darwin.ts";
import { makeDarwinNative } from "../../platform/fs/resolve-darwin.ts";
import { linuxDarwinCalls } from "../support/darwin-calls-linux.ts";
import { makeSocket, mkfifo, mountsTree, single, tempDir, unshareMounts, write } from "./helpers.ts";

const onLinux = process.platform === "linux";
const REPO = path.resolve(import.meta.dir, "../..");
const code = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return "no error";
};

describe.skipIf(!onLinux)("the darwin backend's logic on Linux syscalls (Linux only; a Mac runs the real one)", () => {
  test("the translation is live: one lookup of 1024 bytes is ENAMETOOLONG, a path in fstatat is refused", () => {
    const dir = tempDir();
    const fd = fs.openSync(dir, "r");
    try {
      expect(code(() => linuxDarwinCalls.openat(fd, "a/".repeat(512), O.RDONLY | O.DIRECTORY | O.NOFOLLOW_ANY))).toBe("ENAMETOOLONG");
      expect(code(() => linuxDarwinCalls.fstatat(fd, "a/b"))).toBe("EINVAL");
      expect(code(() => linuxDarwinCalls.openat(fd, "x", O.WRONLY | O.CREAT))).toBe("EINVAL");
    } finally {
      fs.closeSync(fd);
    }
  });

  test("the file tests built on single() pass through it (metadata, special files, reads, hardening, TOCTOU, mutations, find)", () => {
    const files = ["metadata-reach", "special", "read", "hardening", "toctou", "mutate", "find"].map((f) => `test/fs/${f}.test.ts`);
    // the same per-test timeout npm test passes (Bun ignores a bunfig timeout)
    const p = Bun.spawnSync([process.execPath, "test", "--timeout", "30000", ...files], { cwd: REPO, env: { ...process.env, SFS_TEST_BACKEND: "darwin-on-linux" }, stdout: "pipe", stderr: "pipe" });
    const out = `${p.stdout.toString()}${p.stderr.toString()}`;
    expect({ exit: p.exitCode, failed: out.split("\n").filter((l) => l.startsWith("(fail)")) }).toEqual({ exit: 0, failed: [] });
    expect(out).toMatch(/\n\s*0 fail\n/);
    expect(out).toContain(`across ${files.length} files`);
  }, 120_000);

  test("cross_mounts = false with a real tmpfs mount (own mount namespace): refused on every operation, the mount's own workdir served", () => {
    const base = mountsTree();
    const p = Bun.spawnSync([...unshareMounts(), process.execPath, path.join(import.meta.dir, "fixtures/mounts-child.ts"), "openat2", base, "darwin-on-linux"], { stderr: "pipe" });
    expect({ exit: p.exitCode, stderr: p.stderr.toString().slice(0, 2000) }).toEqual({ exit: 0, stderr: "" });
    const run = JSON.parse(p.stdout.toString().trim().split("\n").pop() as string) as Record<"true" | "false", Record<string, { value?: unknown; code?: string }>>;
    const confined = run.false;
    const mntOps = Object.keys(confined).filter((k) => /(^|:)mnt(\/|$)/.test(k));
    expect(mntOps.length).toBe(12); // stat, list, read, resource, download, find, search, tree, create, mkdir
    for (const op of mntOps) expect({ op, outcome: confined[op] }).toEqual({ op, outcome: { code: "MOUNT_CROSSING_NOT_ALLOWED" } });
    // the listing never shows the mount point; bind mounts of the same device are not seen (macOS has none)
    expect(confined["list:"]).toEqual({ value: ["bind", "fbind.txt", "sub", "top.txt"] });
    expect(confined["m/read:file.txt"]).toEqual({ value: "needle mounted\n" });
    expect(run.true["read:mnt/file.txt"]).toEqual({ value: "needle mounted\n" });
    expect(fs.readdirSync(path.join(base, "root/mnt"))).toEqual([]); // nothing written underneath
  });

  describe("backend calls directly", () => {
    const n = makeDarwinNative(linuxDarwinCalls);
    let root: string;
    let fd: number;
    beforeAll(async () => {
      ({ root } = single());
      write(root, "d/f.txt", "hello\n");
      fs.symlinkSync("d", path.join(root, "link"));
      await makeSocket(path.join(root, "d/s"));
      mkfifo(path.join(root, "d/p"));
      fd = n.openRoot(root);
    });
    afterAll(() => fs.closeSync(fd));

    test("special files: the object open is ENXIO, never an open; metadata is there", () => {
      expect(code(() => n.openBeneath(fd, ["d", "s"], "object"))).toBe("ENXIO");
      expect(code(() => n.openBeneath(fd, ["d", "p"], "object"))).toBe("ENXIO");
      expect(n.statBeneath!(fd, ["d", "s"]).isSocket()).toBe(true);
      const d = n.openBeneath(fd, ["d"], "dirList");
      expect(n.readDir(d).map((e) => e.name).sort()).toEqual(["f.txt", "p", "s"]);
      expect(n.lstatChild(d, "p").isFIFO()).toBe(true);
      fs.closeSync(d);
    });

    test("symlinks: ELOOP in a parent, the link itself as a final object", () => {
      expect(code(() => n.openBeneath(fd, ["link", "f.txt"], "read"))).toBe("ELOOP");
      const l = n.openBeneath(fd, ["link"], "object");
      expect(fs.fstatSync(l).isSymbolicLink()).toBe(true);
      fs.closeSync(l);
    });

    test("reopenForRead goes by name from the held root, and a swapped name is seen as another inode", () => {
      const obj = n.openBeneath(fd, ["d", "f.txt"], "object");
      const before = fs.fstatSync(obj, { bigint: true });
      fs.renameSync(path.join(root, "d/f.txt"), path.join(root, "d/g.txt"));
      fs.writeFileSync(path.join(root, "d/f.txt"), "other\n");
      try {
        const again = n.reopenForRead(obj);
        expect(fs.fstatSync(again, { bigint: true }).ino).not.toBe(before.ino); // the caller's FILE_CHANGED_DURING_READ
        fs.closeSync(again);
      } finally {
        fs.closeSync(obj);
        fs.renameSync(path.join(root, "d/g.txt"), path.join(root, "d/f.txt"));
      }
    });
  });
});
