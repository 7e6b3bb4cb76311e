// Durable sync on macOS. fsync(2) there hands the data to the drive but does not ask the drive to
// flush its own cache; F_FULLFSYNC (fcntl command 51, xnu bsd/sys/fcntl.h) does. fcntl is
// variadic and is never bound: Apple's arm64 ABI passes every variadic argument on the stack, so
// a fixed-argument binding would leave libSystem's wrapper reading its third argument from the
// caller's stack. Bun's own fs.fsyncSync is no route either: on macOS it is plain fsync(2)
// (oven-sh/bun src/bun.js/node/node_fs.zig, NodeFS.fsync: `system.fsync(args.fd.native())`).
// Each route below is a fixed-argument C function, so its bun:ffi binding is ABI-correct on
// arm64 and x86_64 alike; the first one this libSystem resolves is used:
// 1. `__fcntl(int fd, int cmd, long arg)`: the syscall stub libSystem's own fcntl ends in (xnu
//    libsyscall/wrappers/cancelable/fcntl-base.c: `return __FCNTL(fd, cmd, arg)`, with
//    fcntl-cancel.c defining __FCNTL as __fcntl). It is generated from bsd/kern/syscalls.master
//    (`sys_fcntl(int fd, int cmd, long arg) NO_SYSCALL_STUB`, hence the name ___fcntl,
//    libsyscall/xcodescripts/create-syscalls.pl) as a global entry point that leaves x0-x2 (arm64)
//    or the System V argument registers (x86_64) as the caller set them. Per-file F_FULLFSYNC,
//    exactly what fcntl(fd, F_FULLFSYNC) does. Not in Apple's headers: used only when it resolves.
// 2. `fsync_volume_np(int fd, int flags)` with SYNC_VOLUME_FULLSYNC | SYNC_VOLUME_WAIT: public
//    (<unistd.h>, macOS 10.8+). Libc makes it ffsctl(fd, FSCTL_SYNC_VOLUME) and returns the error
//    number itself (0: done); xnu's handle_sync_volume (bsd/vfs/vfs_syscalls.c) syncs the whole
//    volume of `fd` and waits, then issues F_FULLFSYNC on the vnode of `fd`. Durable, but every
//    sync also writes out the volume's other dirty data. Both flags are needed: the kernel tests
//    its wait mode (MNT_WAIT, 1) against FSCTL_SYNC_FULLSYNC (1), so without the wait flag no
//    F_FULLFSYNC is issued at all.
// 3. Neither resolves: plain fsync, and `serverfs doctor`'s durability line says so.
// A filesystem that does not implement F_FULLFSYNC (network and some FUSE volumes) answers
// ENOTTY, ENOTSUP or EINVAL, the answers xnu itself takes for "not supported" (bsd/kern/
// kern_descrip.c, where F_BARRIERFSYNC falls back to F_FULLFSYNC): then fsync is used, as SQLite
// and libuv do. Any other failure (EIO, EBADF...) is thrown: an fsync after a failed flush could
// succeed without the data being on stable storage.
import { dlopen, read as ffiRead, type Pointer } from "bun:ffi";
import { SysError } from "./sys-error.ts";

export const F_FULLFSYNC = 51;
/** <unistd.h> */
export const SYNC_VOLUME_FULLSYNC = 0x01;
export const SYNC_VOLUME_WAIT = 0x02;

export type FullSyncRoute = "__fcntl" | "fsync_volume_np" | "fsync";

/** Which of this libSystem's fixed-argument symbols resolved. */
export interface FullSyncSymbols {
  fcntlStub: boolean;
  syncVolume: boolean;
}

/**
 * Which call makes a sync durable. Only 64-bit macOS is reasoned about (`long` and the register
 * use above are LP64's); anything else gets fsync. Pure.
 */
export function fullSyncRoute(arch: string, found: FullSyncSymbols): FullSyncRoute {
  if (arch !== "arm64" && arch !== "x64") return "fsync";
  if (found.fcntlStub) return "__fcntl";
  if (found.syncVolume) return "fsync_volume_np";
  return "fsync";
}

/** Whether `route` asks the drive to flush its cache (F_FULLFSYNC), as doctor and the CI check it. */
export function reachesFullSync(route: FullSyncRoute): boolean {
  return route !== "fsync";
}

/** What doctor prints for a route. */
export function fullSyncDescription(route: FullSyncRoute): string {
  switch (route) {
    case "__fcntl":
      return "F_FULLFSYNC through libSystem's fixed-argument __fcntl syscall stub";
    case "fsync_volume_np":
      return "F_FULLFSYNC through fsync_volume_np (libSystem exports no __fcntl stub): each durable sync also writes out the volume's other unsynced data, so it costs more";
    case "fsync":
      return "fsync only: this libSystem exports neither __fcntl nor fsync_volume_np, so synced data may still sit in the drive's cache at power loss";
  }
}

/** macOS errno values (xnu bsd/sys/errno.h) that mean "this filesystem has no F_FULLFSYNC". */
export const FULLSYNC_UNSUPPORTED = { EINVAL: 22, ENOTTY: 25, ENOTSUP: 45 } as const;

/** After F_FULLFSYNC failed with macOS errno `errno`: fall back to fsync, or fail the sync. Pure. */
export function afterFullSyncFailure(errno: number): "fsync" | "fail" {
  return Object.values(FULLSYNC_UNSUPPORTED).some((n) => n === errno) ? "fsync" : "fail";
}

const LIBSYSTEM = "/usr/lib/libSystem.B.dylib";

/** The calls a durable sync makes (libSystem's in production; a test hands in its own). */
export interface FullSyncCalls {
  route: FullSyncRoute;
  /** F_FULLFSYNC on `fd` through the route: 0, or the errno it failed with. Null on "fsync". */
  full: ((fd: number) => number) | null;
  /** fsync(2): 0, or -1 with errno set. */
  fsync: (fd: number) => number;
  errno: () => number;
}

/** The fallback chain over `calls` (resolved on first use). */
export function fullSyncOver(calls: () => FullSyncCalls): { tryFullFsync(fd: number): boolean; fullFsync(fd: number): void } {
  function tryFull(fd: number): boolean {
    const c = calls();
    if (c.full === null) return false;
    const err = c.full(fd);
    if (err === 0) return true;
    if (afterFullSyncFailure(err) === "fail") throw new SysError(err, "F_FULLFSYNC");
    return false;
  }
  return {
    tryFullFsync: tryFull,
    fullFsync(fd) {
      if (tryFull(fd)) return;
      const c = calls();
      if (c.fsync(fd) < 0) throw new SysError(c.errno(), "fsync");
    },
  };
}

/** One symbol, or null when this libSystem does not export it. */
function optional<T>(bind: () => T): T | null {
  try {
    return bind();
  } catch {
    return null;
  }
}

function load(): FullSyncCalls {
  const base = dlopen(LIBSYSTEM, {
    __error: { args: [], returns: "ptr" },
    fsync: { args: ["i32"], returns: "i32" },
  }).symbols;
  const errno = () => ffiRead.i32(base.__error() as Pointer, 0);
  const stub = optional(() => dlopen(LIBSYSTEM, { __fcntl: { args: ["i32", "i32", "i64"], returns: "i32" } }).symbols.__fcntl);
  const volume = optional(() => dlopen(LIBSYSTEM, { fsync_volume_np: { args: ["i32", "i32"], returns: "i32" } }).symbols.fsync_volume_np);
  const route = fullSyncRoute(process.arch, { fcntlStub: stub !== null, syncVolume: volume !== null });
  let full: FullSyncCalls["full"] = null;
  if (route === "__fcntl") full = (fd) => (stub!(fd, F_FULLFSYNC, 0n) === 0 ? 0 : errno());
  else if (route === "fsync_volume_np") full = (fd) => volume!(fd, SYNC_VOLUME_FULLSYNC | SYNC_VOLUME_WAIT); // the error number itself
  return { route, full, fsync: (fd) => base.fsync(fd), errno };
}

let lib: FullSyncCalls | null = null;
const sys = () => (lib ??= load());
const darwin = fullSyncOver(sys);

/** The route this process uses (loads libSystem; macOS only). */
export function darwinFullSyncRoute(): FullSyncRoute {
  return sys().route;
}

/**
 * F_FULLFSYNC on `fd` through the route: true when it succeeded, false when there is no route
 * or the filesystem does not implement it; any other failure throws (SysError, syscall "F_FULLFSYNC").
 */
export function tryFullFsync(fd: number): boolean {
  return darwin.tryFullFsync(fd);
}

/** F_FULLFSYNC where the route allows it, else (or where the filesystem does not implement it) fsync. */
export function fullFsync(fd: number): void {
  darwin.fullFsync(fd);
}
