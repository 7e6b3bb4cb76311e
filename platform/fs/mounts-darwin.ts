// macOS: the filesystem of a path from statfs(2) — f_fstypename and the MNT_RDONLY flag — bound
// through bun:ffi (statfs is not variadic, so the binding is safe on arm64). Layout of the 64-bit
// `struct statfs` (sys/mount.h, _DARWIN_FEATURE_64_BIT_INODE):
//   0 f_bsize u32 | 4 f_iosize i32 | 8 f_blocks u64 | 16 f_bfree | 24 f_bavail | 32 f_files |
//   40 f_ffree | 48 f_fsid 2×i32 | 56 f_owner u32 | 60 f_type u32 | 64 f_flags u32 |
//   68 f_fssubtype u32 | 72 f_fstypename[16] | 88 f_mntonname[1024] | 1112 f_mntfromname[1024] |
//   2136 f_flags_ext u32 | 2140 f_reserved[7] → 2168 bytes.
// x86-64 exports the 64-bit-inode variant as `statfs$INODE64`; arm64 only has it as `statfs`.
// Not exercised on this project's Linux CI; the macOS CI job runs test/platform only.
import type { MountFacts } from "./mounts-linux.ts";

const STATFS_SIZE = 2168;
const OFF_FLAGS = 64;
const OFF_FSTYPENAME = 72;
const OFF_MNTONNAME = 88;
const MNT_RDONLY = 0x1;

type StatfsFn = (path: Uint8Array, buf: Uint8Array) => number;
let statfsFn: StatfsFn | null = null;

async function bind(): Promise<StatfsFn> {
  if (statfsFn) return statfsFn;
  const { dlopen, FFIType, ptr } = await import("bun:ffi");
  const symbol = process.arch === "x64" ? "statfs$INODE64" : "statfs";
  const lib = dlopen("/usr/lib/libSystem.B.dylib", {
    [symbol]: { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  });
  const fn = lib.symbols[symbol] as unknown as (p: unknown, b: unknown) => number;
  statfsFn = (p, b) => fn(ptr(p), ptr(b));
  return statfsFn;
}

function cString(buf: Uint8Array, offset: number, max: number): string {
  let end = offset;
  while (end < offset + max && buf[end] !== 0) end++;
  return new TextDecoder().decode(buf.subarray(offset, end));
}

export async function darwinMountOf(realPath: string): Promise<MountFacts | null> {
  try {
    const statfs = await bind();
    const buf = new Uint8Array(STATFS_SIZE);
    const pathBytes = new TextEncoder().encode(`${realPath}\0`);
    if (statfs(pathBytes, buf) !== 0) return null;
    const flags = new DataView(buf.buffer).getUint32(OFF_FLAGS, true);
    return {
      fsType: cString(buf, OFF_FSTYPENAME, 16),
      mountPoint: cString(buf, OFF_MNTONNAME, 1024),
      readOnly: (flags & MNT_RDONLY) !== 0,
    };
  } catch {
    return null;
  }
}
