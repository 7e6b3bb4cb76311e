// Durable sync on macOS. fsync(2) there hands the data to the drive but does not ask the drive to
// flush its own cache; F_FULLFSYNC (fcntl command 51) does. fcntl is variadic, and how a
// non-variadic bun:ffi call reaches it depends on the architecture:
// - x86_64 (System V): variadic integer arguments travel in the same registers as named ones, and
//   %al (the vector-register count a variadic callee may read) only decides whether its prologue
//   spills xmm registers. A three-int binding `fcntl(int, int, int)` is therefore ABI-correct.
// - arm64 (Apple's ABI): every variadic argument goes on the stack, so the same binding would
//   leave libSystem's wrapper reading its third argument from the caller's stack. Not used.
//   libSystem's `fcntl` is a wrapper (xnu libsyscall/wrappers/cancelable/fcntl-base.c) around the
//   fixed-argument syscall stub `__fcntl(int, int, long)`. The stub is not in Apple's headers, so
//   it is used only when this libSystem exports it (dlopen of the one symbol succeeds); without
//   it the route is plain fsync, and `serverfs doctor`'s durability line says so.
// F_FULLFSYNC fails on filesystems that do not implement it (network and some FUSE volumes):
// then fsync is used, as SQLite and libuv do.
import { dlopen, read as ffiRead, type Pointer } from "bun:ffi";
import { SysError } from "./sys-error.ts";

export const F_FULLFSYNC = 51;

export type FullSyncRoute = "fcntl" | "__fcntl" | "fsync";

/** Which call makes a sync durable, from the architecture and whether the private stub resolves. Pure. */
export function fullSyncRoute(arch: string, privateStubExported: boolean): FullSyncRoute {
  if (arch === "x64") return "fcntl";
  if (arch === "arm64" && privateStubExported) return "__fcntl";
  return "fsync";
}

/** What doctor prints for a route. */
export function fullSyncDescription(route: FullSyncRoute): string {
  switch (route) {
    case "fcntl":
      return "F_FULLFSYNC through fcntl (x86_64: ABI-safe binding)";
    case "__fcntl":
      return "F_FULLFSYNC through libSystem's fixed-argument __fcntl stub";
    case "fsync":
      return "fsync only: this libSystem exports no fixed-argument fcntl, so synced data may still sit in the drive's cache at power loss";
  }
}

const LIBSYSTEM = "/usr/lib/libSystem.B.dylib";

interface Lib {
  route: FullSyncRoute;
  full: ((fd: number, cmd: number, arg: number) => number) | null;
  fsync: (fd: number) => number;
  errno: () => number;
}

function load(): Lib {
  const base = dlopen(LIBSYSTEM, {
    __error: { args: [], returns: "ptr" },
    fsync: { args: ["i32"], returns: "i32" },
  }).symbols;
  const errno = () => ffiRead.i32(base.__error() as Pointer, 0);
  let stub: ((fd: number, cmd: number, arg: number) => number) | null = null;
  if (process.arch === "arm64") {
    try {
      const s = dlopen(LIBSYSTEM, { __fcntl: { args: ["i32", "i32", "i64"], returns: "i32" } }).symbols;
      stub = (fd, cmd, arg) => s.__fcntl(fd, cmd, BigInt(arg));
    } catch {
      stub = null; // not exported: fsync only
    }
  }
  const route = fullSyncRoute(process.arch, stub !== null);
  let full: Lib["full"] = null;
  if (route === "fcntl") {
    const s = dlopen(LIBSYSTEM, { fcntl: { args: ["i32", "i32", "i32"], returns: "i32" } }).symbols;
    full = (fd, cmd, arg) => s.fcntl(fd, cmd, arg);
  } else if (route === "__fcntl") full = stub;
  return { route, full, fsync: (fd) => base.fsync(fd), errno };
}

let lib: Lib | null = null;
const sys = () => (lib ??= load());

/** The route this process uses (loads libSystem; macOS only). */
export function darwinFullSyncRoute(): FullSyncRoute {
  return sys().route;
}

/** Whether F_FULLFSYNC itself succeeded on `fd` (false: no route, or the filesystem refused it). */
export function tryFullFsync(fd: number): boolean {
  const l = sys();
  return l.full !== null && l.full(fd, F_FULLFSYNC, 0) === 0;
}

/** F_FULLFSYNC where the route allows it, else (or where the filesystem refuses it) fsync. */
export function fullFsync(fd: number): void {
  if (tryFullFsync(fd)) return;
  const l = sys();
  if (l.fsync(fd) < 0) throw new SysError(l.errno(), "fsync");
}
