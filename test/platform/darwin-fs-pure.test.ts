// The pure halves of the macOS file backend, run on every OS: the struct stat decoder behind
// fstatat (metadata without opening the object), the PATH_MAX step planner, the creation mode,
// the F_FULLFSYNC route and its fallback chain, doctor's durability line, the errno names Node
// lacks (ENOATTR) and the read of listed xattrs. The kernel halves are
// test/platform/darwin-fs.test.ts (macOS only) and docs/platform.md, "macOS: verified / written /
// checks to run on a Mac".
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { creationMode } from "../../platform/fs/darwin.ts";
import { afterFullSyncFailure, F_FULLFSYNC, FULLSYNC_UNSUPPORTED, fullSyncOver, fullSyncRoute, reachesFullSync, SYNC_VOLUME_FULLSYNC, SYNC_VOLUME_WAIT } from "../../platform/fs/fullsync-darwin.ts";
import { chunkParts, DARWIN_PATH_MAX } from "../../platform/fs/path-chunks.ts";
import { decodeStat64, fstatatSymbol, isSpecial, STAT64_SIZE } from "../../platform/fs/stat-darwin.ts";
import { errnoNames, SysError } from "../../platform/fs/sys-error.ts";
import { readListedXattrs } from "../../platform/fs/xattr-darwin.ts";
import { durabilityCheck } from "../../src/doctor/checks/version.ts";
import { isoSeconds, revisionOf, typeOf } from "../../src/fs/revision.ts";

/** A struct stat (64-bit inode layout, sys/stat.h) written field by field at its documented offsets. */
function stat64(f: { dev: number; mode: number; nlink: number; ino: bigint; uid: number; gid: number; rdev: number; atime: bigint; mtime: bigint; ctime: bigint; birth: bigint; size: bigint; blocks: bigint; blksize: number }): Uint8Array {
  const b = new Uint8Array(STAT64_SIZE).fill(0xa5); // padding and spare fields must not leak into any field
  const v = new DataView(b.buffer);
  const ts = (at: number, ns: bigint) => {
    v.setBigInt64(at, ns / 1_000_000_000n, true);
    v.setBigInt64(at + 8, ns % 1_000_000_000n, true);
  };
  v.setInt32(0, f.dev, true);
  v.setUint16(4, f.mode, true);
  v.setUint16(6, f.nlink, true);
  v.setBigUint64(8, f.ino, true);
  v.setUint32(16, f.uid, true);
  v.setUint32(20, f.gid, true);
  v.setInt32(24, f.rdev, true);
  ts(32, f.atime);
  ts(48, f.mtime);
  ts(64, f.ctime);
  ts(80, f.birth);
  v.setBigInt64(96, f.size, true);
  v.setBigInt64(104, f.blocks, true);
  v.setInt32(112, f.blksize, true);
  return b;
}

const sample = {
  dev: 16777231,
  mode: 0o100644,
  nlink: 3,
  ino: 0x1_0000_0001n,
  uid: 501,
  gid: 20,
  rdev: 0,
  atime: 1_700_000_000_123_456_789n,
  mtime: 1_700_000_001_987_654_321n,
  ctime: 1_700_000_002_000_000_001n,
  birth: 1_600_000_000_000_000_000n,
  size: 5_000_000_000n,
  blocks: 9_765_632n,
  blksize: 4096,
};

describe("macOS struct stat decoding (fstatat on the held parent)", () => {
  test("every field from its sys/stat.h offset, 64-bit inode and size included", () => {
    const st = decodeStat64(stat64(sample));
    expect([st.dev, st.mode, st.nlink, st.ino, st.uid, st.gid, st.rdev]).toEqual([16777231n, 0o100644n, 3n, 0x1_0000_0001n, 501n, 20n, 0n]);
    expect([st.size, st.blocks, st.blksize]).toEqual([5_000_000_000n, 9_765_632n, 4096n]);
    expect([st.atimeNs, st.mtimeNs, st.ctimeNs, st.birthtimeNs]).toEqual([sample.atime, sample.mtime, sample.ctime, sample.birth]);
    expect(st.mtimeMs).toBe(1_700_000_001_987n);
    expect(st.mtime.toISOString()).toBe("2023-11-14T22:13:21.987Z");
    expect(st.isFile()).toBe(true);
  });

  test("a negative dev_t stays signed (dev_t is int32)", () => {
    expect(decodeStat64(stat64({ ...sample, dev: -2 })).dev).toBe(-2n);
  });

  test("each S_IFMT type, and which ones an open must never touch", () => {
    const types: [number, string, boolean][] = [
      [0o100000, "isFile", false],
      [0o040000, "isDirectory", false],
      [0o120000, "isSymbolicLink", false],
      [0o140000, "isSocket", true],
      [0o010000, "isFIFO", true],
      [0o020000, "isCharacterDevice", true],
      [0o060000, "isBlockDevice", true],
    ];
    for (const [fmt, method, special] of types) {
      const st = decodeStat64(stat64({ ...sample, mode: fmt | 0o755 })) as unknown as Record<string, () => boolean>;
      for (const [, other] of types) expect(st[other]!()).toBe(other === method);
      expect(isSpecial(st as never)).toBe(special);
    }
  });

  test("the file layer derives the same revision, type and time from it as from a real lstat", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sfs-stat64-"));
    try {
      const p = path.join(dir, "f.txt");
      fs.writeFileSync(p, "hello");
      const real = fs.lstatSync(p, { bigint: true });
      const st = decodeStat64(
        stat64({ dev: Number(real.dev), mode: Number(real.mode), nlink: Number(real.nlink), ino: real.ino, uid: Number(real.uid), gid: Number(real.gid), rdev: Number(real.rdev), atime: real.atimeNs, mtime: real.mtimeNs, ctime: real.ctimeNs, birth: real.birthtimeNs, size: real.size, blocks: real.blocks, blksize: Number(real.blksize) }),
      );
      expect(revisionOf(st)).toBe(revisionOf(real));
      expect(typeOf(st)).toBe("file");
      expect(isoSeconds(st)).toBe(isoSeconds(real));
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });

  test("a short buffer is refused, never read past", () => {
    expect(() => decodeStat64(new Uint8Array(STAT64_SIZE - 1))).toThrow(RangeError);
  });

  test("x86_64 binds fstatat$INODE64, arm64 the only fstatat it has", () => {
    expect(fstatatSymbol("x64")).toBe("fstatat$INODE64");
    expect(fstatatSymbol("arm64")).toBe("fstatat");
  });
});

describe("macOS lookups below PATH_MAX (1024)", () => {
  const bytes = (g: string[]) => Buffer.byteLength(g.join("/"), "utf8");

  test("a path under the limit is one step; no parts, no steps", () => {
    expect(chunkParts(["a", "b", "c"])).toEqual([["a", "b", "c"]]);
    expect(chunkParts([])).toEqual([]);
  });

  test("1023 bytes is one step, 1024 is two (the NUL counts)", () => {
    const a = "a".repeat(511);
    expect(chunkParts([a, "b".repeat(511)])).toEqual([[a, "b".repeat(511)]]); // 511 + 1 + 511 = 1023
    expect(chunkParts([a, "b".repeat(512)])).toEqual([[a], ["b".repeat(512)]]); // 1024
  });

  test("UTF-8 bytes are counted, not UTF-16 units", () => {
    const e = "é".repeat(200); // 400 bytes, 200 units
    const steps = chunkParts([e, e, e]); // 1202 bytes in all
    expect(steps).toEqual([[e, e], [e]]);
  });

  test("a deep tree: every step below the limit, whole components, nothing lost or reordered", () => {
    const parts = Array.from({ length: 60 }, (_, i) => `${i}-${"x".repeat(i * 7 % 250)}`);
    const steps = chunkParts(parts);
    expect(steps.length).toBeGreaterThan(1);
    for (const s of steps) expect(bytes(s)).toBeLessThanOrEqual(DARWIN_PATH_MAX - 1);
    expect(steps.flat()).toEqual(parts);
    // greedy: no step could have taken the next step's first component
    for (let i = 0; i + 1 < steps.length; i++) expect(bytes([...steps[i]!, steps[i + 1]![0]!])).toBeGreaterThan(DARWIN_PATH_MAX - 1);
  });

  test("a component longer than the limit goes alone (the kernel answers ENAMETOOLONG for it)", () => {
    const long = "z".repeat(1500);
    expect(chunkParts(["a", long, "b"])).toEqual([["a"], [long], ["b"]]);
    expect(chunkParts(["a", "b"], 4)).toEqual([["a", "b"]]); // "a/b" is 3 bytes + NUL
    expect(chunkParts(["a", "b"], 3)).toEqual([["a"], ["b"]]);
  });
});

describe("macOS creation mode (mkostempsat_np + fchmod)", () => {
  test("as open(O_CREAT, mode) under the umask; never setuid, setgid or sticky", () => {
    expect(creationMode(0o666, 0o022)).toBe(0o644);
    expect(creationMode(0o666, 0o077)).toBe(0o600);
    expect(creationMode(0o7777, 0)).toBe(0o777);
    expect(creationMode(0o600, 0o777)).toBe(0);
  });
});

describe("macOS durable sync route (F_FULLFSYNC without a variadic binding)", () => {
  const found = (fcntlStub: boolean, syncVolume: boolean) => ({ fcntlStub, syncVolume });
  test("arm64 and x86_64 alike: the __fcntl stub when it resolves, else fsync_volume_np, else fsync; fcntl itself never", () => {
    for (const arch of ["arm64", "x64"]) {
      expect(fullSyncRoute(arch, found(true, true))).toBe("__fcntl");
      expect(fullSyncRoute(arch, found(true, false))).toBe("__fcntl");
      expect(fullSyncRoute(arch, found(false, true))).toBe("fsync_volume_np");
      expect(fullSyncRoute(arch, found(false, false))).toBe("fsync");
    }
  });
  test("an architecture not reasoned about (not LP64 macOS) gets fsync, whatever resolves", () => {
    for (const a of ["ia32", "arm", "ppc64", ""]) expect(fullSyncRoute(a, found(true, true))).toBe("fsync");
  });
  test("only the fsync route leaves the drive's cache unflushed", () => {
    expect([reachesFullSync("__fcntl"), reachesFullSync("fsync_volume_np"), reachesFullSync("fsync")]).toEqual([true, true, false]);
  });
  test("fsync_volume_np gets both flags: without SYNC_VOLUME_WAIT xnu issues no F_FULLFSYNC", () => {
    expect([F_FULLFSYNC, SYNC_VOLUME_FULLSYNC, SYNC_VOLUME_WAIT]).toEqual([51, 1, 2]);
  });
  test("after F_FULLFSYNC fails: fsync only where the filesystem lacks it (xnu's ENOTTY 25, ENOTSUP 45, EINVAL 22), else the sync fails", () => {
    expect(FULLSYNC_UNSUPPORTED).toEqual({ EINVAL: 22, ENOTTY: 25, ENOTSUP: 45 });
    for (const n of [22, 25, 45]) expect(afterFullSyncFailure(n)).toBe("fsync");
    // EIO, EINTR, EBADF, ENOSPC, EOPNOTSUPP (102 on macOS), ENOATTR, an unknown number
    for (const n of [5, 4, 9, 28, 102, 93, 4095]) expect(afterFullSyncFailure(n)).toBe("fail");
  });
  test("doctor: one OK line naming the route; the gap when it is fsync only, the cost when it is the volume sync", () => {
    const gap = durabilityCheck("fsync");
    expect(gap).toMatchObject({ id: "durability", status: "OK" });
    expect(gap.detail).toStartWith("fsync only");
    expect(gap.detail).toContain("drive's cache");
    for (const route of ["__fcntl", "fsync_volume_np"] as const) {
      const line = durabilityCheck(route);
      expect(line).toMatchObject({ id: "durability", status: "OK" });
      expect(line.detail).toStartWith("F_FULLFSYNC through ");
      expect(line.detail).toContain(route);
      expect(line.detail).not.toContain("drive's cache");
    }
    expect(durabilityCheck("fsync_volume_np").detail).toContain("costs more");
  });
});

describe("the durable sync's fallback chain (over recorded calls)", () => {
  const E = os.constants.errno; // numbers both kernels share (EIO 5, EBADF 9, ENOSPC 28)
  const { ENOTSUP, ENOTTY, EINVAL } = FULLSYNC_UNSUPPORTED; // macOS's own numbers
  /** The calls of one route, recording what was called; `fullAnswer` is what F_FULLFSYNC returns. */
  function calls(route: "__fcntl" | "fsync_volume_np" | "fsync", fullAnswer: number, fsyncAnswer = 0) {
    const log: string[] = [];
    const chain = fullSyncOver(() => ({
      route,
      full: route === "fsync" ? null : (fd: number) => (log.push(`full ${fd}`), fullAnswer),
      fsync: (fd: number) => (log.push(`fsync ${fd}`), fsyncAnswer === 0 ? 0 : -1),
      errno: () => fsyncAnswer,
    }));
    return { chain, log };
  }
  const thrown = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      return `${(err as SysError).code} ${(err as SysError).message}`;
    }
    return "no error";
  };

  test("F_FULLFSYNC succeeds: it is the whole sync, no fsync after it", () => {
    for (const route of ["__fcntl", "fsync_volume_np"] as const) {
      const { chain, log } = calls(route, 0);
      chain.fullFsync(7);
      expect(log).toEqual(["full 7"]);
      expect(calls(route, 0).chain.tryFullFsync(7)).toBe(true);
    }
  });
  test("the filesystem lacks it (ENOTSUP, ENOTTY, EINVAL): fsync, and tryFullFsync says false", () => {
    for (const errno of [ENOTSUP, ENOTTY, EINVAL]) {
      const { chain, log } = calls("__fcntl", errno);
      chain.fullFsync(7);
      expect(log).toEqual(["full 7", "fsync 7"]);
      expect(calls("__fcntl", errno).chain.tryFullFsync(7)).toBe(false);
    }
  });
  test("any other failure fails the sync with its code; no fsync is tried that could report a durability it lacks", () => {
    const { chain, log } = calls("fsync_volume_np", E.EIO);
    expect(thrown(() => chain.fullFsync(7))).toBe("EIO F_FULLFSYNC: EIO");
    expect(log).toEqual(["full 7"]);
    expect(thrown(() => calls("__fcntl", E.EBADF).chain.tryFullFsync(7))).toBe("EBADF F_FULLFSYNC: EBADF");
  });
  test("fsync only: no F_FULLFSYNC is claimed; an fsync failure is thrown with its code", () => {
    const { chain, log } = calls("fsync", 0);
    expect(chain.tryFullFsync(7)).toBe(false);
    chain.fullFsync(7);
    expect(log).toEqual(["fsync 7"]);
    expect(thrown(() => calls("fsync", 0, E.EIO).chain.fullFsync(7))).toBe("EIO fsync: EIO");
    expect(thrown(() => calls("__fcntl", ENOTSUP, E.ENOSPC).chain.fullFsync(7))).toBe("ENOSPC fsync: ENOSPC");
  });
});

describe("macOS errno names Node's table lacks (ENOATTR)", () => {
  // A slice of xnu's bsd/sys/errno.h around 93: Node's darwin table has these, not ENOATTR.
  const darwinTable = { EPERM: 1, EPROTONOSUPPORT: 43, ENOTSUP: 45, ENOPOLICY: 103, ENODATA: 96 };
  test("darwin 93 is ENOATTR, and the numbers Node names keep Node's names", () => {
    const names = errnoNames("darwin", darwinTable);
    expect(names.get(93)).toBe("ENOATTR");
    expect([names.get(1), names.get(43), names.get(45), names.get(96)]).toEqual(["EPERM", "EPROTONOSUPPORT", "ENOTSUP", "ENODATA"]);
    expect(names.get(94)).toBeUndefined(); // only ENOATTR is added: a number missing from the table stays unnamed
  });
  test("on Linux 93 stays EPROTONOSUPPORT (its ENOATTR is ENODATA, 61)", () => {
    const names = errnoNames("linux", { EPROTONOSUPPORT: 93, ENODATA: 61 });
    expect(names.get(93)).toBe("EPROTONOSUPPORT");
    expect(names.get(61)).toBe("ENODATA");
  });
  test("a name Node already has for 93 is never overridden", () => {
    expect(errnoNames("darwin", { ENOATTR_FROM_NODE: 93 }).get(93)).toBe("ENOATTR_FROM_NODE");
  });
  test("this OS's SysError: a number nobody names is E<n>; names come from the running table", () => {
    expect(new SysError(4095, "fgetxattr").code).toBe("E4095");
    expect(new SysError(os.constants.errno.ENOENT, "fgetxattr").code).toBe("ENOENT");
    expect(new SysError(4095, "fgetxattr").message).toBe("fgetxattr: E4095");
  });
});

describe("macOS xattr copy: an attribute removed between the list and its read", () => {
  const enoattr = () => Object.assign(new Error("fgetxattr: ENOATTR"), { code: errnoNames("darwin", {}).get(93), errno: 93 });
  test("it is gone from the copy too (skipped); the others are read in order, empty names ignored", () => {
    const values: Record<string, Buffer> = { "user.a": Buffer.from("A"), "com.apple.quarantine": Buffer.from("0081;x"), "user.empty": Buffer.alloc(0) };
    const read: string[] = [];
    const got = readListedXattrs(["user.a", "user.gone", "", "com.apple.quarantine", "user.empty"], (name) => {
      read.push(name);
      const v = values[name];
      if (v === undefined) throw enoattr();
      return v;
    });
    expect(read).toEqual(["user.a", "user.gone", "com.apple.quarantine", "user.empty"]);
    expect([...got.keys()]).toEqual(["user.a", "com.apple.quarantine", "user.empty"]);
    expect(got.get("com.apple.quarantine")!.toString()).toBe("0081;x");
    expect(got.get("user.empty")!.length).toBe(0);
  });
  test("any other failure of a read still fails the copy, with its own code", () => {
    for (const code of ["ERANGE", "EPERM", "EIO", "E93"]) {
      const err = Object.assign(new Error(`fgetxattr: ${code}`), { code });
      expect(() => readListedXattrs(["user.a"], () => {
        throw err;
      })).toThrow(err);
    }
  });
});
