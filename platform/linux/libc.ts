// The few glibc functions the Linux platform layer needs, bound lazily through bun:ffi so that
// importing this module on another OS (one bundle holds every OS's code) touches nothing.
// Never bind variadic functions other than prctl (fcntl/open/ioctl break on some ABIs); prctl
// exists only on Linux, where integer varargs are passed like fixed arguments.
import { dlopen, FFIType, read } from "bun:ffi";

const symbols = {
  prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 },
  waitpid: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
  flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
  getsockopt: { args: [FFIType.i32, FFIType.i32, FFIType.i32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  getpgid: { args: [FFIType.i32], returns: FFIType.i32 },
  __errno_location: { args: [], returns: FFIType.ptr },
} as const;

type Libc = ReturnType<typeof dlopen<typeof symbols>>["symbols"];
let libc: Libc | null = null;

export function linuxLibc(): Libc {
  if (libc === null) libc = dlopen("libc.so.6", symbols).symbols;
  return libc;
}

/** errno of the last failed call on this thread; read it right after the call. */
export function errno(): number {
  const location = linuxLibc().__errno_location();
  return location === null ? 0 : read.i32(location, 0);
}
