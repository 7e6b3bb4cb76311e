// Descriptor-relative syscalls for macOS through bun:ffi, from libSystem. Written against Apple's
// headers and the xnu sources; it cannot run on the Linux CI.
// Variadic functions: darwin-arm64 passes every variadic argument on the stack, so a variadic
// function is bound only where the wrapper provably never reads a variadic argument:
// - `openat(int, const char *, int, ...)` reads its mode with va_arg only when O_CREAT is set
//   (xnu libsyscall/wrappers/open-base.c); it is bound with the three named arguments and refuses
//   O_CREAT here, so the variadic part is never read on either architecture.
// - Creation therefore goes through two fixed-argument calls instead: mkostempsat_np(3) (macOS
//   10.13+) creates a fresh file (O_CREAT|O_EXCL, mode 0600) under a random name in the held
//   directory, and renameatx_np(2) with RENAME_EXCL (macOS 10.12+) gives it its name, never
//   replacing anything (EEXIST).
// - fcntl is never bound here (see fullsync-darwin.ts for F_FULLFSYNC).

import { dlopen, read as ffiRead, type Pointer } from "bun:ffi";
import type { BigIntStats } from "node:fs";
import { fullFsync } from "./fullsync-darwin.ts";
import { decodeStat64, fstatatSymbol, STAT64_SIZE, AT_SYMLINK_NOFOLLOW } from "./stat-darwin.ts";
import { MountCrossingError, SysError } from "./sys-error.ts";
import { readListedXattrs } from "./xattr-darwin.ts";

export { MountCrossingError, SysError };

/** <sys/fcntl.h> values on macOS. */
export const O = {
  RDONLY: 0,
  WRONLY: 1,
  NONBLOCK: 0x4,
  NOFOLLOW: 0x100,
  CREAT: 0x200,
  EXCL: 0x800,
  EVTONLY: 0x8000,
  NOCTTY: 0x20000,
  DIRECTORY: 0x100000,
  SYMLINK: 0x200000,
  CLOEXEC: 0x1000000,
  /**
   * macOS 11+: fail with ELOOP if ANY component of the path is a symlink. Combined with O_SYMLINK
   * it is EINVAL before macOS 15, so a final symlink is opened with O_SYMLINK alone, one component
   * relative to an already verified parent, where there is no other component to follow.
   */
  NOFOLLOW_ANY: 0x20000000,
  /** With O_DIRECTORY it is O_SEARCH: a directory opened for lookups only (search permission). */
  EXEC: 0x40000000,
} as const;

const LIBSYSTEM = "/usr/lib/libSystem.B.dylib";
const AT_REMOVEDIR = 0x80;
/** <sys/stdio.h>: renameatx_np fails with EEXIST instead of replacing. */
const RENAME_EXCL = 0x4;
/** The trailing X's mkostempsat_np replaces with random characters (its only extra flag here is O_CLOEXEC). */
const TEMPLATE_SUFFIX = ".XXXXXX";
const COPYFILE_ACL = 1 << 0;

function load() {
  return dlopen(LIBSYSTEM, {
    __error: { args: [], returns: "ptr" },
    openat: { args: ["i32", "ptr", "i32"], returns: "i32" },
    mkostempsat_np: { args: ["i32", "ptr", "i32", "i32"], returns: "i32" },
    // macOS 10.12+: int renameatx_np(int fromfd, const char *from, int tofd, const char *to, unsigned int flags)
    renameatx_np: { args: ["i32", "ptr", "i32", "ptr", "u32"], returns: "i32" },
    close: { args: ["i32"], returns: "i32" },
    linkat: { args: ["i32", "ptr", "i32", "ptr", "i32"], returns: "i32" },
    renameat: { args: ["i32", "ptr", "i32", "ptr"], returns: "i32" },
    unlinkat: { args: ["i32", "ptr", "i32"], returns: "i32" },
    mkdirat: { args: ["i32", "ptr", "u16"], returns: "i32" },
    fchmod: { args: ["i32", "u16"], returns: "i32" },
    fchown: { args: ["i32", "u32", "u32"], returns: "i32" },
    flistxattr: { args: ["i32", "ptr", "u64", "i32"], returns: "i64" },
    fgetxattr: { args: ["i32", "ptr", "ptr", "u64", "u32", "i32"], returns: "i64" },
    fsetxattr: { args: ["i32", "ptr", "ptr", "u64", "u32", "i32"], returns: "i32" },
    fcopyfile: { args: ["i32", "i32", "ptr", "u32"], returns: "i32" },
    // int flock(int fd, int operation): fixed arguments (xnu bsd/sys/fcntl.h)
    flock: { args: ["i32", "i32"], returns: "i32" },
  }).symbols;
}

let lib: ReturnType<typeof load> | null = null;
function sys(): ReturnType<typeof load> {
  if (lib === null) lib = load();
  return lib;
}

function check(ret: number | bigint, name: string): number {
  const n = Number(ret);
  if (n < 0) throw new SysError(ffiRead.i32(sys().__error() as Pointer, 0), name);
  return n;
}

function cstr(s: string): Buffer {
  return Buffer.from(`${s}\0`, "utf8");
}

export function linkat(dir: number, oldName: string, newName: string): void {
  check(sys().linkat(dir, cstr(oldName), dir, cstr(newName), 0), "linkat");
}
export function renameat(dir: number, oldName: string, newName: string): void {
  check(sys().renameat(dir, cstr(oldName), dir, cstr(newName)), "renameat");
}
/** Atomic no-replace rename between two held directories (EEXIST when `newName` exists). */
export function renameatExcl(oldDir: number, oldName: string, newDir: number, newName: string): void {
  check(sys().renameatx_np(oldDir, cstr(oldName), newDir, cstr(newName), RENAME_EXCL), "renameatx_np");
}
export function unlinkat(dir: number, name: string, isDir: boolean): void {
  check(sys().unlinkat(dir, cstr(name), isDir ? AT_REMOVEDIR : 0), "unlinkat");
}
export function mkdirat(dir: number, name: string, mode: number): void {
  check(sys().mkdirat(dir, cstr(name), mode), "mkdirat");
}
export function fchmod(fd: number, mode: number): void {
  check(sys().fchmod(fd, mode), "fchmod");
}
export function fchown(fd: number, uid: number, gid: number): void {
  check(sys().fchown(fd, uid, gid), "fchown");
}
/** flock(2) (the writers' directory lock, dir-lock-posix.ts). */
export function flock(fd: number, operation: number): void {
  check(sys().flock(fd, operation), "flock");
}
/** F_FULLFSYNC through a fixed-argument route, never fcntl itself (fullsync-darwin.ts). */
export const fsync = fullFsync;

/** openat(2) without O_CREAT (the variadic mode is then never read; see the header). */
export function openat(dir: number, path: string, flags: number): number {
  if ((flags & O.CREAT) !== 0) throw new SysError(22, "openat"); // EINVAL: creation goes through createAt
  return check(sys().openat(dir, cstr(path), flags), "openat");
}

/** lstat of one name beneath a held directory, through no open of the object itself. */
export function fstatat(dir: number, name: string): BigIntStats {
  const buf = new Uint8Array(STAT64_SIZE);
  check(fstatatFn()(dir, cstr(name), buf, AT_SYMLINK_NOFOLLOW), "fstatat");
  return decodeStat64(buf);
}

type FstatatFn = (dir: number, name: Uint8Array, buf: Uint8Array, flags: number) => number;
let fstatatBound: FstatatFn | null = null;
function fstatatFn(): FstatatFn {
  if (fstatatBound !== null) return fstatatBound;
  const symbol = fstatatSymbol(process.arch);
  const lib = dlopen(LIBSYSTEM, { [symbol]: { args: ["i32", "ptr", "ptr", "i32"], returns: "i32" } });
  fstatatBound = lib.symbols[symbol] as unknown as FstatatFn;
  return fstatatBound;
}

/** The mode open(O_CREAT, mode) would give under `umask`. Pure. */
export function creationMode(mode: number, umask: number): number {
  return mode & 0o777 & ~umask;
}

/**
 * Create `name` in `dir` exclusively, with creationMode(mode, umask): a random-named file made
 * by mkostempsat_np (starting with `name`, so it carries the same reserved prefix), chmod'ed,
 * then renamed to `name` with RENAME_EXCL. A volume without RENAME_EXCL (ENOTSUP/EINVAL; it is a
 * volume capability, VOL_CAP_INT_RENAME_EXCL) gets a hard link to `name` instead, which cannot
 * replace anything either, and the random name is removed. Returns a read-write descriptor;
 * EEXIST if `name` exists.
 */
export function createAt(dir: number, name: string, mode: number): number {
  const template = cstr(`${name}${TEMPLATE_SUFFIX}`);
  const fd = check(sys().mkostempsat_np(dir, template, 0, O.CLOEXEC), "mkostempsat_np");
  const temp = cstr(template.subarray(0, template.length - 1).toString("utf8"));
  const target = cstr(name);
  let linked = false;
  try {
    check(sys().fchmod(fd, creationMode(mode, process.umask())), "fchmod");
    try {
      check(sys().renameatx_np(dir, temp, dir, target, RENAME_EXCL), "renameatx_np");
    } catch (err) {
      const code = (err as SysError).code;
      if (code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "EINVAL") throw err;
      check(sys().linkat(dir, temp, dir, target, 0), "linkat");
      linked = true;
      sys().unlinkat(dir, temp, 0);
    }
    return fd;
  } catch (err) {
    sys().close(fd);
    if (!linked) sys().unlinkat(dir, temp, 0);
    throw err;
  }
}
/** Copy the ACL (the part of the metadata that is not an xattr on macOS). */
export function copyAcl(fromFd: number, toFd: number): void {
  check(sys().fcopyfile(fromFd, toFd, null, COPYFILE_ACL), "fcopyfile");
}

export function listXattrs(fd: number): Map<string, Buffer> {
  const size = check(sys().flistxattr(fd, null, 0n, 0), "flistxattr");
  if (size === 0) return new Map();
  const list = Buffer.alloc(size);
  const got = check(sys().flistxattr(fd, list, BigInt(size), 0), "flistxattr");
  // an attribute removed after the list (ENOATTR) is skipped there; any other failure throws
  return readListedXattrs(list.subarray(0, got).toString("utf8").split("\0"), (name) => {
    const n = cstr(name);
    const len = check(sys().fgetxattr(fd, n, null, 0n, 0, 0), "fgetxattr");
    const value = Buffer.alloc(len);
    const vlen = len === 0 ? 0 : check(sys().fgetxattr(fd, n, value, BigInt(len), 0, 0), "fgetxattr");
    return value.subarray(0, vlen);
  });
}

export function setXattr(fd: number, name: string, value: Buffer): void {
  check(sys().fsetxattr(fd, cstr(name), value.length === 0 ? null : value, BigInt(value.length), 0, 0), "fsetxattr");
}
