// Descriptor-relative filesystem syscalls for Linux through bun:ffi. Only non-variadic libc
// symbols are bound by name; `openat2`/`openat` go through `syscall(2)`, whose integer-only
// varargs are passed in registers on x86-64 and aarch64 Linux (the only targets we ship there).
// Every failure throws a SysError carrying the errno *name* (like node:fs errors), so callers
// handle FFI and node:fs failures with one `errnoCode()` switch.

import { dlopen, FFIType, read as ffiRead, type Pointer } from "bun:ffi";
import { IS_LINUX } from "../os.ts";
import { MountCrossingError, SysError } from "./sys-error.ts";

export { MountCrossingError, SysError };

/** Refuse to cross any mount point, bind mounts included (a workdir with cross_mounts = false). */
export const RESOLVE_NO_XDEV = 0x01n;
export const RESOLVE_NO_MAGICLINKS = 0x02n;
export const RESOLVE_NO_SYMLINKS = 0x04n;
export const RESOLVE_BENEATH = 0x08n;
const RESOLVE_FLAGS = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;

/** Linux open(2) flag values (identical on x86-64 and aarch64 except O_DIRECTORY/O_NOFOLLOW). */
export const O = (() => {
  const arm = process.arch === "arm64";
  return {
    RDONLY: 0,
    WRONLY: 1,
    RDWR: 2,
    CREAT: 0o100,
    EXCL: 0o200,
    NOCTTY: 0o400,
    TRUNC: 0o1000,
    NONBLOCK: 0o4000,
    DIRECTORY: arm ? 0o40000 : 0o200000,
    NOFOLLOW: arm ? 0o100000 : 0o400000,
    CLOEXEC: 0o2000000,
    PATH: 0o10000000,
  } as const;
})();

export const AT_REMOVEDIR = 0x200;

const SYS_OPENAT2 = 437;
const SYS_STATX = process.arch === "arm64" ? 291 : 332;
const SYS_OPENAT = process.arch === "arm64" ? 56n : 257n;
const SYS_GETDENTS64 = process.arch === "arm64" ? 61 : 217;
const SYS_RENAMEAT2 = process.arch === "arm64" ? 276n : 316n;
/** renameat2 flag: fail with EEXIST instead of replacing an existing destination. */
export const RENAME_NOREPLACE = 1n;
const SEEK_SET = 0;

type Libc = ReturnType<typeof loadLibc>;
let libc: Libc | null = null;

function loadLibc() {
  const common = dlopen("libc.so.6", {
    __errno_location: { args: [], returns: "ptr" },
    linkat: { args: ["i32", "ptr", "i32", "ptr", "i32"], returns: "i32" },
    renameat: { args: ["i32", "ptr", "i32", "ptr"], returns: "i32" },
    unlinkat: { args: ["i32", "ptr", "i32"], returns: "i32" },
    mkdirat: { args: ["i32", "ptr", "u32"], returns: "i32" },
    fchmod: { args: ["i32", "u32"], returns: "i32" },
    fchown: { args: ["i32", "u32", "u32"], returns: "i32" },
    flistxattr: { args: ["i32", "ptr", "u64"], returns: "i64" },
    fgetxattr: { args: ["i32", "ptr", "ptr", "u64"], returns: "i64" },
    fsetxattr: { args: ["i32", "ptr", "ptr", "u64", "i32"], returns: "i32" },
    fsync: { args: ["i32"], returns: "i32" },
    flock: { args: ["i32", "i32"], returns: "i32" },
    close: { args: ["i32"], returns: "i32" },
    lseek: { args: ["i32", "i64", "i32"], returns: "i64" },
    pread: { args: ["i32", "ptr", "u64", "i64"], returns: FFIType.i64_fast },
  });
  // Bindings of the same variadic symbol with the argument shapes we need (all integers). The
  // hot ones (openat2, getdents64, statx: once or more per file a search visits) take and return
  // plain numbers (i64_fast): a BigInt per argument and per result was garbage on every call.
  const openat2 = dlopen("libc.so.6", {
    syscall: { args: ["i64", "i64", "ptr", "ptr", "u64"], returns: FFIType.i64_fast },
  });
  const statx = dlopen("libc.so.6", {
    syscall: { args: ["i64", "i64", "ptr", "i64", "i64", "ptr"], returns: FFIType.i64_fast },
  });
  const openat = dlopen("libc.so.6", {
    syscall: { args: ["i64", "i64", "ptr", "i64", "i64"], returns: "i64" },
  });
  // getdents64 has no glibc wrapper before 2.30: the raw syscall works everywhere
  const getdents = dlopen("libc.so.6", {
    syscall: { args: ["i64", "i64", "ptr", "u64"], returns: FFIType.i64_fast },
  });
  // renameat2 has no glibc wrapper before 2.28: the raw syscall (Linux 3.15+) works everywhere
  const renameat2 = dlopen("libc.so.6", {
    syscall: { args: ["i64", "i64", "ptr", "i64", "ptr", "u64"], returns: "i64" },
  });
  return {
    s: common.symbols,
    openat2: openat2.symbols.syscall,
    statx: statx.symbols.syscall,
    openat: openat.symbols.syscall,
    getdents64: getdents.symbols.syscall,
    renameat2: renameat2.symbols.syscall,
  };
}

function lib(): Libc {
  if (libc === null) {
    if (!IS_LINUX) throw new SysError(38, "dlopen");
    libc = loadLibc();
  }
  return libc;
}

function errno(): number {
  const p = lib().s.__errno_location() as Pointer;
  return ffiRead.i32(p, 0);
}

function cstr(s: string): Buffer {
  return Buffer.from(`${s}\0`, "utf8");
}

function check(ret: number | bigint, name: string): number {
  const n = Number(ret);
  if (n < 0) throw new SysError(errno(), name);
  return n;
}

/** Whether this kernel has openat2; probed once. */
let openat2State: "unknown" | "yes" | "no" = "unknown";
let forced: "openat2" | "walk" | null = null;

/** Tests force the fallback walk to prove it on a kernel that has openat2. */
export function forceResolver(mode: "openat2" | "walk" | null): void {
  forced = mode;
}

export function hasOpenat2(): boolean {
  if (forced !== null) return forced === "openat2";
  if (openat2State === "unknown") {
    const how = new BigUint64Array([BigInt(O.RDONLY | O.DIRECTORY | O.CLOEXEC), 0n, RESOLVE_FLAGS]);
    const r = Number(lib().openat2(SYS_OPENAT2, -100, cstr("/"), how, 24));
    if (r >= 0) {
      closeFd(r);
      openat2State = "yes";
    } else {
      // ENOSYS on kernels < 5.6; EPERM under some seccomp filters that predate openat2.
      const e = errno();
      openat2State = e === 38 || e === 1 ? "no" : "yes";
    }
  }
  return openat2State === "yes";
}

function closeFd(fd: number): void {
  try {
    require("node:fs").closeSync(fd);
  } catch {
    // closing is best effort
  }
}

// Reused argument buffers: search opens tens of thousands of files per call, and the kernel
// copies both before openat2 returns, so one thread can safely reuse them.
const howCache = new Map<number, BigUint64Array>();
const pathBuf = Buffer.allocUnsafe(4097);

function howFor(flags: number, mode: number, noXdev: boolean): BigUint64Array {
  const resolve = noXdev ? RESOLVE_FLAGS | RESOLVE_NO_XDEV : RESOLVE_FLAGS;
  if (mode !== 0) return new BigUint64Array([BigInt(flags | O.CLOEXEC), BigInt(mode), resolve]);
  // open flags are a 32-bit value: bit 32 of the key carries NO_XDEV
  const key = flags + (noXdev ? 2 ** 32 : 0);
  let how = howCache.get(key);
  if (how === undefined) {
    how = new BigUint64Array([BigInt(flags | O.CLOEXEC), 0n, resolve]);
    howCache.set(key, how);
  }
  return how;
}

function pathArg(rel: string): Buffer {
  // at most 3 UTF-8 bytes per UTF-16 unit: short strings surely fit; long ones get their own buffer
  if (rel.length > 1365) return cstr(rel);
  const n = pathBuf.write(rel, 0, "utf8");
  pathBuf[n] = 0;
  return pathBuf;
}

/**
 * The private helpers every hot wrapper here calls (the binding table, the result check, open_how
 * and path argument reuse): search keeps them below the top JIT tier with the wrappers themselves
 * (src/fs/search/scan-tiers.ts says why), through platform/fs/search-port.ts.
 */
export function wrapperHelpers(): unknown[] {
  return [lib, check, howFor, pathArg];
}

/**
 * openat2(dirfd, rel, {flags, mode, RESOLVE_BENEATH|NO_SYMLINKS|NO_MAGICLINKS}), plus
 * RESOLVE_NO_XDEV when `noXdev`: the kernel then answers EXDEV for any mount crossing.
 */
export function openat2(dirfd: number, rel: string, flags: number, mode = 0, noXdev = false): number {
  const how = howFor(flags, mode, noXdev);
  const path = pathArg(rel);
  for (let attempt = 0; ; attempt++) {
    const r = Number(lib().openat2(SYS_OPENAT2, dirfd, path, how, 24));
    if (r >= 0) return r;
    const e = errno();
    // EAGAIN: the kernel saw a concurrent rename during resolution; retrying is the documented answer.
    if (e === 11 && attempt < 8) continue;
    throw new SysError(e, "openat2");
  }
}

/** Plain openat(dirfd, name, flags, mode) for ONE component (the fallback walk adds O_NOFOLLOW). */
export function openat(dirfd: number, name: string, flags: number, mode = 0): number {
  const r = lib().openat(SYS_OPENAT, BigInt(dirfd), cstr(name), BigInt(flags | O.CLOEXEC), BigInt(mode));
  return check(r, "openat");
}

export function linkat(olddir: number, oldname: string, newdir: number, newname: string): void {
  check(lib().s.linkat(olddir, cstr(oldname), newdir, cstr(newname), 0), "linkat");
}

export function renameat(olddir: number, oldname: string, newdir: number, newname: string): void {
  check(lib().s.renameat(olddir, cstr(oldname), newdir, cstr(newname)), "renameat");
}

/**
 * renameat2(olddir, oldname, newdir, newname, RENAME_NOREPLACE): the kernel checks that newname is
 * absent and renames under one lock, so nothing is ever replaced (EEXIST). A filesystem without
 * the flag answers EINVAL; callers must then refuse, never fall back to plain renameat.
 */
export function renameatNoReplace(olddir: number, oldname: string, newdir: number, newname: string): void {
  check(lib().renameat2(SYS_RENAMEAT2, BigInt(olddir), cstr(oldname), BigInt(newdir), cstr(newname), RENAME_NOREPLACE), "renameat2");
}

export function unlinkat(dirfd: number, name: string, removeDir: boolean): void {
  check(lib().s.unlinkat(dirfd, cstr(name), removeDir ? AT_REMOVEDIR : 0), "unlinkat");
}

export function mkdirat(dirfd: number, name: string, mode: number): void {
  check(lib().s.mkdirat(dirfd, cstr(name), mode), "mkdirat");
}

export function fchmod(fd: number, mode: number): void {
  check(lib().s.fchmod(fd, mode), "fchmod");
}

export function fchown(fd: number, uid: number, gid: number): void {
  check(lib().s.fchown(fd, uid, gid), "fchown");
}

/** What search asks of each open file: filled in place from one statx(2), nothing allocated. */
export interface OpenFileFacts {
  regular: boolean;
  size: number;
  nlink: number;
}

const AT_EMPTY_PATH = 0x1000;
/** STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_SIZE: the fields read below. */
const STATX_WANT = 0x1 | 0x2 | 0x4 | 0x200;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
// struct statx has one layout on every architecture: stx_nlink u32 at 16, stx_mode u16 at 28,
// stx_size u64 at 40 (linux/stat.h). One buffer per thread: the kernel fills it before statx returns.
const statxBuf = new Uint8Array(256);
const statxView = new DataView(statxBuf.buffer);
const EMPTY_PATH = new Uint8Array(1);

/** fstat(2) of an open descriptor as statx(fd, "", AT_EMPTY_PATH): type, size and link count into `out`. */
export function statFacts(fd: number, out: OpenFileFacts): void {
  check(lib().statx(SYS_STATX, fd, EMPTY_PATH, AT_EMPTY_PATH, STATX_WANT, statxBuf), "statx");
  out.regular = (statxView.getUint16(28, true) & S_IFMT) === S_IFREG;
  out.nlink = statxView.getUint32(16, true);
  out.size = Number(statxView.getBigUint64(40, true));
}

/** pread(2) of `len` bytes at file offset `pos` into buf[off, off + len): the byte count, 0 at the end. */
export function preadInto(fd: number, buf: Uint8Array, off: number, len: number, pos: number): number {
  return check(lib().s.pread(fd, off === 0 ? buf : buf.subarray(off), len, pos), "pread");
}

/** close(2) without node:fs bookkeeping (hot path of search). */
export function close(fd: number): void {
  lib().s.close(fd);
}

/** Rewind a directory descriptor, so a listing always starts at the first entry. */
export function rewindDir(fd: number): void {
  check(lib().s.lseek(fd, 0n, SEEK_SET), "lseek");
}

/**
 * getdents64(fd, buf, buf.length): packed `linux_dirent64` records
 * {u64 d_ino, i64 d_off, u16 d_reclen, u8 d_type, char d_name[] (NUL-terminated)}; the byte count
 * filled, 0 at the end of the directory.
 */
export function getdents64(fd: number, buf: Buffer): number {
  return check(lib().getdents64(SYS_GETDENTS64, fd, buf, buf.length), "getdents64");
}

export function fsync(fd: number): void {
  check(lib().s.fsync(fd), "fsync");
}

/** flock(2) (fixed arguments; the writers' directory lock, dir-lock-posix.ts). */
export function flock(fd: number, operation: number): void {
  check(lib().s.flock(fd, operation), "flock");
}

/** All extended attributes of an open file, by name. */
export function listXattrs(fd: number): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const size = check(lib().s.flistxattr(fd, null, 0n), "flistxattr");
  if (size === 0) return out;
  const list = Buffer.alloc(size);
  const got = check(lib().s.flistxattr(fd, list, BigInt(size)), "flistxattr");
  for (const name of list.subarray(0, got).toString("utf8").split("\0")) {
    if (name === "") continue;
    const n = cstr(name);
    const len = check(lib().s.fgetxattr(fd, n, null, 0n), "fgetxattr");
    const value = Buffer.alloc(len);
    const vlen = len === 0 ? 0 : check(lib().s.fgetxattr(fd, n, value, BigInt(len)), "fgetxattr");
    out.set(name, value.subarray(0, vlen));
  }
  return out;
}

export function setXattr(fd: number, name: string, value: Buffer): void {
  check(lib().s.fsetxattr(fd, cstr(name), value.length === 0 ? null : value, BigInt(value.length), 0), "fsetxattr");
}
