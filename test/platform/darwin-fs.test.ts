// macOS-only checks of the darwin file backend (platform/fs/resolve-darwin.ts) against the real
// kernel: the struct stat layout behind fstatat, lookups relative to held descriptors (a swapped
// root, symlinks, PATH_MAX), the variadic-free creation, and the F_FULLFSYNC route (run on its
// own by the macos workflow's F_FULLFSYNC step, against the compiled binary's doctor line). They skip
// elsewhere because libSystem exists only on macOS; the macos workflow runs them on macos-15
// (arm64) and macos-15-intel. Each test is one line of docs/platform.md, "macOS: verified /
// written / checks to run on a Mac"; the pure halves are test/platform/darwin-fs-pure.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { fstatat, O, openat } from "../../platform/fs/darwin.ts";
import { darwinFullSyncRoute, fullFsync, reachesFullSync, tryFullFsync } from "../../platform/fs/fullsync-darwin.ts";
import { darwinNative as n } from "../../platform/fs/resolve-darwin.ts";
import { openStateDatabase } from "../../src/bridge/store/db.ts";
import { durabilityCheck } from "../../src/doctor/checks/version.ts";
import { makeSocket, mkfifo, tempDir } from "../fs/helpers.ts";

const onMac = process.platform === "darwin";
const code = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return "no error";
};

describe.skipIf(!onMac)("macOS file backend (needs libSystem: `bun test test/platform/darwin-fs.test.ts` on a Mac)", () => {
  let base: string;
  let rootPath: string;
  let root: number;
  beforeAll(async () => {
    base = fs.realpathSync(tempDir("sfs-darwin-fs-"));
    rootPath = path.join(base, "root");
    fs.mkdirSync(path.join(rootPath, "d"), { recursive: true });
    fs.writeFileSync(path.join(rootPath, "d/f.txt"), "hello\n");
    fs.symlinkSync("d", path.join(rootPath, "link"));
    await makeSocket(path.join(rootPath, "d/s"));
    mkfifo(path.join(rootPath, "d/p"));
    root = n.openRoot(rootPath);
  });
  afterAll(() => fs.closeSync(root));

  test("fstatat's struct stat decodes to exactly what lstat(2) reports (file, directory, symlink, socket)", () => {
    const d = n.openBeneath(root, ["d"], "dirBase");
    try {
      for (const [dir, name, abs] of [[d, "f.txt", "d/f.txt"], [root, "d", "d"], [root, "link", "link"], [d, "s", "d/s"]] as const) {
        const got = fstatat(dir, name);
        const want = fs.lstatSync(path.join(rootPath, abs), { bigint: true });
        for (const k of ["dev", "ino", "mode", "nlink", "uid", "gid", "size", "blocks", "mtimeNs", "ctimeNs"] as const) expect([abs, k, got[k]]).toEqual([abs, k, want[k]]);
        // birth time (offset 80) against BSD stat(1), an observer independent of Bun
        const birth = Bun.spawnSync(["stat", "-f", "%B", path.join(rootPath, abs)]).stdout.toString().trim();
        expect([abs, "birth", got.birthtimeNs / 1_000_000_000n]).toEqual([abs, "birth", BigInt(birth)]);
      }
    } finally {
      fs.closeSync(d);
    }
  });

  test("openat refuses O_CREAT (its variadic mode is never read) and creates nothing", () => {
    expect(code(() => openat(root, "made-by-openat", O.WRONLY | O.CREAT))).toBe("EINVAL");
    expect(fs.existsSync(path.join(rootPath, "made-by-openat"))).toBe(false);
  });

  test("the held root keeps serving the original tree after its path is renamed and replaced", () => {
    const other = path.join(base, "root-moved");
    fs.renameSync(rootPath, other);
    fs.mkdirSync(path.join(rootPath, "d"), { recursive: true });
    fs.writeFileSync(path.join(rootPath, "d/f.txt"), "impostor\n");
    try {
      const fd = n.openBeneath(root, ["d", "f.txt"], "read");
      expect(fs.readFileSync(fd, "utf8")).toBe("hello\n");
      fs.closeSync(fd);
    } finally {
      fs.rmSync(rootPath, { recursive: true });
      fs.renameSync(other, rootPath);
    }
  });

  test("a symlink in a parent is ELOOP; a final symlink opens as itself for metadata only", () => {
    expect(code(() => n.openBeneath(root, ["link", "f.txt"], "read"))).toBe("ELOOP");
    expect(code(() => n.openBeneath(root, ["link"], "dirList"))).toBe("ELOOP");
    const fd = n.openBeneath(root, ["link"], "object");
    expect(fs.fstatSync(fd).isSymbolicLink()).toBe(true);
    fs.closeSync(fd);
    expect(n.statBeneath!(root, ["link"]).isSymbolicLink()).toBe(true);
  });

  test("an object open of a socket or FIFO is ENXIO without opening (or blocking on) it", () => {
    expect(code(() => n.openBeneath(root, ["d", "s"], "object"))).toBe("ENXIO");
    expect(code(() => n.openBeneath(root, ["d", "p"], "object"))).toBe("ENXIO");
    expect(n.statBeneath!(root, ["d", "s"]).isSocket()).toBe(true);
    expect(n.statBeneath!(root, ["d", "p"]).isFIFO()).toBe(true);
  });

  test("createExclusive: the exact name, mode 0666 under the umask, EEXIST without leftovers", () => {
    const d = n.openBeneath(root, ["d"], "dirBase");
    try {
      const fd = n.openBeneath(d, [".serverfs-tmp-0123456789abcdef"], "createExclusive", 0o666);
      fs.writeSync(fd, "x");
      expect(Number(fs.fstatSync(fd).mode) & 0o7777).toBe(0o666 & ~process.umask());
      fs.closeSync(fd);
      expect(code(() => n.openBeneath(d, [".serverfs-tmp-0123456789abcdef"], "createExclusive", 0o666))).toBe("EEXIST");
      expect(code(() => n.openBeneath(d, ["f.txt"], "createExclusive", 0o666))).toBe("EEXIST");
      expect(fs.readFileSync(path.join(rootPath, "d/f.txt"), "utf8")).toBe("hello\n");
      expect(fs.readdirSync(path.join(rootPath, "d")).sort()).toEqual([".serverfs-tmp-0123456789abcdef", "f.txt", "p", "s"]);
      n.unlinkAt(d, ".serverfs-tmp-0123456789abcdef", false);
    } finally {
      fs.closeSync(d);
    }
  });

  test("a path longer than PATH_MAX (1024): ENAMETOOLONG by absolute path, reachable from the held root", () => {
    const names = Array.from({ length: 6 }, (_, i) => `${i}${"m".repeat(199)}`);
    let dir = n.openBeneath(root, [], "dirBase");
    for (const name of names) {
      n.mkdirAt(dir, name, 0o755);
      const next = n.openBeneath(dir, [name], "dirBase");
      fs.closeSync(dir);
      dir = next;
    }
    const f = n.openBeneath(dir, ["deep.txt"], "createExclusive", 0o644);
    fs.writeSync(f, "deep\n");
    fs.closeSync(f);
    fs.closeSync(dir);
    expect(code(() => fs.openSync(path.join(rootPath, ...names, "deep.txt"), "r"))).toBe("ENAMETOOLONG");
    const r = n.openBeneath(root, [...names, "deep.txt"], "read");
    expect(fs.readFileSync(r, "utf8")).toBe("deep\n");
    fs.closeSync(r);
    const obj = n.openBeneath(root, [...names, "deep.txt"], "object");
    const again = n.reopenForRead(obj);
    expect(fs.readFileSync(again, "utf8")).toBe("deep\n");
    fs.closeSync(again);
    fs.closeSync(obj);
  });

  test("F_FULLFSYNC: a full-sync route on every Mac (never fsync only), really accepted on a file of this APFS volume, and doctor names this route", () => {
    const route = darwinFullSyncRoute();
    // fsync_volume_np is public since macOS 10.8 and serve needs 11: fsync only would mean a broken binding
    expect(["__fcntl", "fsync_volume_np"]).toContain(route);
    expect(reachesFullSync(route)).toBe(true);
    // the macos workflow hands in the durability line of the compiled binary's `serverfs doctor --json`
    const doctorLine = process.env.SFS_DOCTOR_DURABILITY;
    if (doctorLine !== undefined) expect(doctorLine).toBe(durabilityCheck(route).detail);
    const p = path.join(base, "sync.bin");
    const fd = fs.openSync(p, "w");
    try {
      fs.writeSync(fd, "durable");
      // the route must really get 0 from F_FULLFSYNC on the runner's APFS volume, not fall back
      expect(tryFullFsync(fd)).toBe(true);
      fullFsync(fd);
    } finally {
      fs.closeSync(fd);
    }
    expect(fs.readFileSync(p, "utf8")).toBe("durable");
    // a descriptor that is not open (far above any descriptor table) is EBADF from the kernel,
    // and the sync fails with it: it is not taken for "this filesystem has no F_FULLFSYNC"
    expect(code(() => tryFullFsync(1 << 30))).toBe("EBADF");
    expect(code(() => fullFsync(1 << 30))).toBe("EBADF");
  });

  test("the Bridge's SQLite store runs with fullfsync and checkpoint_fullfsync on", () => {
    const dir = path.join(base, "state");
    fs.mkdirSync(dir, { mode: 0o700 });
    const db = openStateDatabase(path.join(dir, "state.db"));
    try {
      expect(db.query("PRAGMA fullfsync").get()).toEqual({ fullfsync: 1 });
      expect(db.query("PRAGMA checkpoint_fullfsync").get()).toEqual({ checkpoint_fullfsync: 1 });
    } finally {
      db.close();
    }
  });
});
