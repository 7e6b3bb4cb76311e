// The libSystem functions the macOS platform layer needs, bound lazily through bun:ffi (the
// library lives in the dyld shared cache; dlopen by its path is the documented way). None of these
// is variadic: fcntl/open/ioctl are, and must never be bound here (darwin-arm64 passes varargs on
// the stack).
import { dlopen, FFIType, read } from "bun:ffi";

const symbols = {
  proc_pidinfo: { args: [FFIType.i32, FFIType.i32, FFIType.u64, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  proc_pidfdinfo: { args: [FFIType.i32, FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  proc_listchildpids: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  getsid: { args: [FFIType.i32], returns: FFIType.i32 },
  kqueue: { args: [], returns: FFIType.i32 },
  kevent: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
  getpgid: { args: [FFIType.i32], returns: FFIType.i32 },
  sysctl: { args: [FFIType.ptr, FFIType.u32, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.u64], returns: FFIType.i32 },
  flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  getpeereid: { args: [FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  getsockopt: { args: [FFIType.i32, FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  __error: { args: [], returns: FFIType.ptr },
} as const;

type LibSystem = ReturnType<typeof dlopen<typeof symbols>>["symbols"];
let lib: LibSystem | null = null;

export function libSystem(): LibSystem {
  if (lib === null) lib = dlopen("/usr/lib/libSystem.B.dylib", symbols).symbols;
  return lib;
}

export function darwinErrno(): number {
  const location = libSystem().__error();
  return location === null ? 0 : read.i32(location, 0);
}
