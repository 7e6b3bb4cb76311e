// Descriptor-relative mutation syscalls and metadata calls for macOS through bun:ffi, from
// libSystem. Only non-variadic functions are bound (never open/openat/fcntl: variadic arguments go
// on the stack on darwin-arm64). Opens happen through node:fs with O_NOFOLLOW_ANY instead.
// Written against the documented macOS ABI; it cannot run on the Linux CI.

import { dlopen, read as ffiRead, type Pointer } from "bun:ffi";
import { MountCrossingError, SysError } from "./sys-error.ts";

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
  /** macOS 11+: fail with ELOOP if ANY component of the path is a symlink. */
  NOFOLLOW_ANY: 0x20000000,
} as const;

const AT_REMOVEDIR = 0x80;
/** <stdio.h> renameatx_np flag: fail with EEXIST instead of replacing the destination. */
const RENAME_EXCL = 0x4;
const COPYFILE_ACL = 1 << 0;

function load() {
  return dlopen("/usr/lib/libSystem.B.dylib", {
    __error: { args: [], returns: "ptr" },
    linkat: { args: ["i32", "ptr", "i32", "ptr", "i32"], returns: "i32" },
    renameat: { args: ["i32", "ptr", "i32", "ptr"], returns: "i32" },
    // macOS 10.12+: int renameatx_np(int fromfd, const char *from, int tofd, const char *to, unsigned int flags)
    renameatx_np: { args: ["i32", "ptr", "i32", "ptr", "u32"], returns: "i32" },
    unlinkat: { args: ["i32", "ptr", "i32"], returns: "i32" },
    mkdirat: { args: ["i32", "ptr", "u16"], returns: "i32" },
    fchmod: { args: ["i32", "u16"], returns: "i32" },
    fchown: { args: ["i32", "u32", "u32"], returns: "i32" },
    fsync: { args: ["i32"], returns: "i32" },
    flistxattr: { args: ["i32", "ptr", "u64", "i32"], returns: "i64" },
    fgetxattr: { args: ["i32", "ptr", "ptr", "u64", "u32", "i32"], returns: "i64" },
    fsetxattr: { args: ["i32", "ptr", "ptr", "u64", "u32", "i32"], returns: "i32" },
    fcopyfile: { args: ["i32", "i32", "ptr", "u32"], returns: "i32" },
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
export function fsync(fd: number): void {
  check(sys().fsync(fd), "fsync");
}
/** Copy the ACL (the part of the metadata that is not an xattr on macOS). */
export function copyAcl(fromFd: number, toFd: number): void {
  check(sys().fcopyfile(fromFd, toFd, null, COPYFILE_ACL), "fcopyfile");
}

export function listXattrs(fd: number): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const size = check(sys().flistxattr(fd, null, 0n, 0), "flistxattr");
  if (size === 0) return out;
  const list = Buffer.alloc(size);
  const got = check(sys().flistxattr(fd, list, BigInt(size), 0), "flistxattr");
  for (const name of list.subarray(0, got).toString("utf8").split("\0")) {
    if (name === "") continue;
    const n = cstr(name);
    const len = check(sys().fgetxattr(fd, n, null, 0n, 0, 0), "fgetxattr");
    const value = Buffer.alloc(len);
    const vlen = len === 0 ? 0 : check(sys().fgetxattr(fd, n, value, BigInt(len), 0, 0), "fgetxattr");
    out.set(name, value.subarray(0, vlen));
  }
  return out;
}

export function setXattr(fd: number, name: string, value: Buffer): void {
  check(sys().fsetxattr(fd, cstr(name), value.length === 0 ? null : value, BigInt(value.length), 0, 0), "fsetxattr");
}
